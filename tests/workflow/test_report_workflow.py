"""Snakemake's HTML report of the fixture workflow (rule report_all), opened in Chromium: every table,
figure and error page present and displayed. The report material itself: tests/unit/evaluation/test_report.py."""
import html
import json
import re
import shutil
import subprocess

import pytest

from fixtures import UPSTREAM_SYSTEMS_ONLY, make_workdir, run_snakemake

CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--virtual-time-budget=10000", "--dump-dom"]

# Runs inside the report page once it has loaded: decodes every embedded result as the browser
# would (images through <img>, HTML pages through the DOM parser), shows one figure through the
# report app itself, and writes what it saw into a <pre id="probe">.
PROBE = """<script>
window.addEventListener("load", () => setTimeout(async () => {
  const out = {menu: document.querySelector("#app").innerText, results: {}};
  for (const [path, entry] of Object.entries(results)) {
    const seen = {mime: entry.mime_type, caption: entry.caption, labels: entry.labels};
    if (entry.mime_type.startsWith("image/")) {
      const img = new Image();
      await new Promise(done => { img.onload = done; img.onerror = done; img.src = entry.data_uri; });
      seen.width = img.naturalWidth; seen.height = img.naturalHeight;
    } else if (entry.mime_type === "text/html") {
      const doc = new DOMParser().parseFromString(await (await fetch(entry.data_uri)).text(), "text/html");
      seen.title = doc.title;
      seen.tables = doc.querySelectorAll("table").length;
      seen.rows = doc.querySelectorAll("tbody tr").length;
      seen.headers = Array.from(doc.querySelectorAll("th")).map(th => th.textContent);
    }
    out.results[path] = seen;
  }
  const figure = Object.keys(results).find(p => results[p].mime_type === "image/png");
  app.setView({content: "img", contentPath: results[figure].data_uri});
  await new Promise(done => setTimeout(done, 500));
  const shown = document.querySelector("#app img[src^='data:image/png']");
  out.app_image_width = shown ? shown.naturalWidth : 0;
  const pre = document.createElement("pre");
  pre.id = "probe";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
}, 200));
</script>"""


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def open_in_chromium(report, tmp_path) -> dict:
    text = report.read_text(encoding="utf-8")
    probe = tmp_path / "probe.html"
    end = text.rindex("</body>")
    probe.write_text(text[:end] + PROBE + text[end:], encoding="utf-8")
    proc = subprocess.run([chromium(), *CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'chromium-profile'}",
                           probe.as_uri()], capture_output=True, text=True, timeout=180)
    match = re.search(r'<pre id="probe">(.*?)</pre>', proc.stdout, re.S)
    assert match, f"the probe did not run (rc {proc.returncode}): {proc.stderr[-2000:]}"
    return json.loads(html.unescape(match.group(1)))


@pytest.mark.slow
def test_html_report_in_chromium(tmp_path, tiny_upstream):
    workdir = make_workdir(tmp_path / "run", tiny_upstream, UPSTREAM_SYSTEMS_ONLY)
    run_snakemake(workdir, "report_all")
    run_snakemake(workdir, "report_all", "--report", "results/report.html")
    report = workdir / "results/report.html"
    assert report.stat().st_size > 10_000
    expected = ["results/report/table2.html", "results/report/table4.html", "results/report/table5.html",
                "results/report/figure3_verbs.png", "results/report/figure3_arguments.png",
                "results/report/per_recipe.csv", "results/report/per_recipe_keyclips.png",
                "results/report/per_recipe_tuples.png", "results/report/errors/keyclips/upstream-neural.html",
                "results/report/errors/keyclips/upstream-srl-heur.html",
                "results/report/errors/tuples/upstream-srl-heur.html"]
    if chromium() is None:
        pytest.skip("chromium not installed (apt-get install chromium): the report was built but not opened")
    seen = open_in_chromium(report, tmp_path)
    assert sorted(seen["results"]) == sorted(expected)
    for category in ("Tables", "Figures", "Per-recipe scores", "Error analysis"):
        assert category in seen["menu"]
    for path, result in seen["results"].items():
        if path.endswith(".png"):
            assert result["mime"] == "image/png" and result["width"] > 100 and result["height"] > 100, path
        elif "/errors/" in path:  # a page per system; a system without errors of a kind has no table
            assert result["mime"] == "text/html" and result["title"].endswith(path.rsplit("/", 1)[1][:-5]), path
        elif path.endswith(".html"):
            assert result["mime"] == "text/html" and result["tables"] == 1 and result["rows"] >= 1, path
    results = seen["results"]
    assert results["results/report/table4.html"]["headers"] == ["System", "Acc", "P", "R", "F1", "Seeds",
                                                                "Threshold rule", "AUC-ROC (pooled out-of-fold)",
                                                                "AP (pooled out-of-fold)", "AUC-ROC (mean per fold)",
                                                                "AP (mean per fold)"]
    assert results["results/report/table4.html"]["rows"] == 2
    assert results["results/report/table5.html"]["headers"][:3] == ["Key clips", "Counting", "System"]
    assert results["results/report/table2.html"]["title"] == "Table 2: gold verbs and arguments"
    assert results["results/report/errors/tuples/upstream-srl-heur.html"]["headers"][:2] == ["item", "clips"]
    assert results["results/report/errors/keyclips/upstream-neural.html"]["tables"] == 2  # the fixture has both kinds
    assert "upstream-neural" in results["results/report/errors/keyclips/upstream-neural.html"]["caption"]
    assert seen["app_image_width"] > 100  # the report app itself displays a figure
