"""Language identification for user subtitles (issue 37): which package, by speed, size and accuracy.

    .venv/bin/python bench/language_id.py [--path DIR ...] [--wheels DIR] [--repeat 200]

Candidates: ``py3langid`` (a maintained fork of langid.py; numpy model shipped in the wheel),
``langdetect`` (port of Google's language-detection; profiles shipped) and ``lingua``
(``lingua-language-detector``, Rust; models shipped). Each must work offline with what its wheel
ships. ``--path`` adds folders to import them from (e.g. ``pip install --target DIR``), so the
candidates need not be in the project's environment; ``--wheels`` is a folder of the downloaded
wheels / sdists, whose sizes are printed too.

For each candidate, in a fresh process: the import time, the first call (model load), the mean
time of one call on a transcript-sized text (over ``--repeat`` calls, after the first) and the
accuracy on a small built-in set (cooking sentences in English and in 7 other languages, short
and long). Sizes: the installed files (from the distribution's RECORD) and the wheel. Prints one
table and the ratios to the first candidate, all measured in this run.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

CANDIDATES = {  # name -> (distribution, import, detector built once, text -> ISO 639-1 code)
    "py3langid": ("py3langid", "import py3langid",
                  "None",
                  "lambda d, t: py3langid.classify(t)[0]"),
    "langdetect": ("langdetect", "import langdetect; langdetect.DetectorFactory.seed = 0",
                   "None",
                   "lambda d, t: langdetect.detect(t)[:2]"),
    "lingua": ("lingua-language-detector", "import lingua",
               "lingua.LanguageDetectorBuilder.from_all_languages().build()",
               "lambda d, t: (lambda l: l.iso_code_639_1.name.lower() if l else 'und')(d.detect_language_of(t))"),
}

SAMPLES = [  # (expected ISO 639-1 code, text): what users' cooking subtitles look like
    ("en", "Add the butter and stir until it melts."),
    ("en", "now we're going to chop the onions really finely and put them in the pan with a little oil"),
    ("en", "Salt brings out the flavour. Let it simmer for ten minutes, then serve it warm with rice."),
    ("en", "Stir."),
    ("zh", "把洋葱切碎。加入黄油，搅拌至融化。"),
    ("zh", "现在我们把面粉和鸡蛋混合在一起，然后慢慢加入牛奶。"),
    ("ar", "أضف الزبدة وحرك حتى تذوب. هل تريد المزيد من الملح؟"),
    ("es", "Añade la mantequilla y remueve hasta que se derrita. Después corta la cebolla."),
    ("fr", "Ajoutez le beurre et remuez jusqu'à ce qu'il fonde, puis coupez les oignons."),
    ("de", "Füge die Butter hinzu und rühre, bis sie schmilzt. Dann die Zwiebeln schneiden."),
    ("hi", "मक्खन डालें और पिघलने तक हिलाएं। फिर प्याज काट लें।"),
    ("ja", "玉ねぎをみじん切りにします。バターを加えて溶けるまで混ぜます。"),
]
# One transcript's worth of text (what the detector sees per file: the document's sentences joined).
TRANSCRIPT = " ".join(t for lang, t in SAMPLES if lang == "en") * 20

CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
{import_}
t_import = time.perf_counter() - t0
t0 = time.perf_counter()
detector = {build}
detect = {detect}
first = detect(detector, "Add the butter and stir until it melts.")
t_first = time.perf_counter() - t0
samples, transcript, repeat = json.loads(sys.stdin.read())
correct = sum(detect(detector, text) == lang for lang, text in samples)
t0 = time.perf_counter()
for _ in range(repeat):
    detect(detector, transcript)
t_call = (time.perf_counter() - t0) / repeat
short = [text for lang, text in samples]
t0 = time.perf_counter()
for _ in range(max(1, repeat // 10)):
    for text in short:
        detect(detector, text)
t_short = (time.perf_counter() - t0) / (max(1, repeat // 10) * len(short))
print(json.dumps({{"import_s": t_import, "first_call_s": t_first, "call_ms": t_call * 1000,
                  "short_call_ms": t_short * 1000, "correct": correct, "n": len(samples)}}))
"""


def installed_size(distribution: str, paths: list[str]) -> int | None:
    """Bytes of the distribution's installed files (its RECORD), found on ``paths`` or sys.path."""
    from importlib import metadata

    for dist in metadata.distributions(path=paths + sys.path):
        if dist.metadata["Name"].lower().replace("_", "-") == distribution:
            return sum((Path(dist.locate_file(f)).stat().st_size for f in dist.files or []
                        if Path(dist.locate_file(f)).is_file()))
    return None


def wheel_size(folder: str | None, distribution: str) -> int | None:
    if not folder:
        return None
    stem = distribution.replace("-", "_").lower()
    found = [p for p in Path(folder).iterdir() if p.name.lower().replace("-", "_").startswith(stem + "_")
             or p.name.lower().replace("-", "_").startswith(stem + "-")]
    return found[0].stat().st_size if found else None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--path", action="append", default=[], help="a folder to import candidates from")
    ap.add_argument("--wheels", help="folder of the downloaded wheels (their sizes are printed)")
    ap.add_argument("--repeat", type=int, default=200)
    args = ap.parse_args()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(args.path + [os.environ.get("PYTHONPATH", "")]),
           "OMP_NUM_THREADS": "1"}
    rows = []
    for name, (distribution, import_, build, detect) in CANDIDATES.items():
        code = CHILD.format(import_=import_, build=build, detect=detect)
        proc = subprocess.run([sys.executable, "-c", code], input=json.dumps([SAMPLES, TRANSCRIPT, args.repeat]),
                              capture_output=True, text=True, env=env)
        if proc.returncode:
            print(f"{name}: not measured ({proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else 'failed'})")
            continue
        row = json.loads(proc.stdout.strip().splitlines()[-1])
        row["name"] = name
        row["installed_mb"] = (installed_size(distribution, args.path) or 0) / 1e6
        size = wheel_size(args.wheels, distribution)
        row["wheel_mb"] = None if size is None else size / 1e6
        rows.append(row)
    print(f"python {sys.version.split()[0]}; transcript text {len(TRANSCRIPT)} characters; {args.repeat} calls")
    print(f"{'candidate':<12}{'import s':>10}{'1st call s':>12}{'call ms':>10}{'short ms':>10}{'correct':>9}"
          f"{'installed MB':>14}{'wheel MB':>10}")
    for r in rows:
        wheel = "-" if r["wheel_mb"] is None else f"{r['wheel_mb']:.1f}"
        print(f"{r['name']:<12}{r['import_s']:>10.3f}{r['first_call_s']:>12.3f}{r['call_ms']:>10.2f}"
              f"{r['short_call_ms']:>10.2f}{r['correct']:>6}/{r['n']:<2}{r['installed_mb']:>14.1f}{wheel:>10}")
    if rows:
        base = rows[0]
        print(f"ratios to {base['name']}:")
        for r in rows[1:]:
            print(f"  {r['name']}: import x{r['import_s'] / base['import_s']:.1f}, first call "
                  f"x{r['first_call_s'] / base['first_call_s']:.1f}, call x{r['call_ms'] / base['call_ms']:.1f}, "
                  f"installed x{r['installed_mb'] / max(base['installed_mb'], 1e-9):.1f}")


if __name__ == "__main__":
    main()
