"""Error analysis for the HTML report, per system: which predictions are wrong most often, with
the sentences they come from.

Tuples are compared by exact match on the clips Table 5's oracle block counts (gold items for that
field); an item predicted but not in the clip's gold set is a false positive, a gold item not
predicted a false negative. Key clips: missed key clips grouped by their gold verbs, and non-key
clips called key (most confident first when the system has scores).

Everything is ordered deterministically (count, then text), so pages are byte-identical run to run.
"""
from __future__ import annotations

import html
from collections import Counter, defaultdict
from typing import Sequence

import pyarrow as pa

from cookproc.core.schemas import KEYCLIPS, conform
from cookproc.scoring.metrics import FIELDS, score_keyclips
from cookproc.evaluation.report import html_table
from cookproc.evaluation.tables import align_to_clips, gold_sets, prediction_sets


def _where(clips: pa.Table, i: int) -> tuple[str, int, float, str]:
    return (clips.column("video_id")[i].as_py(), clips.column("clip_idx")[i].as_py(),
            clips.column("start_s")[i].as_py(), clips.column("sentence")[i].as_py())


def _example_html(clips: pa.Table, indices: Sequence[int], n: int, note=None) -> str:
    out = []
    for i in list(indices)[:n]:
        video_id, clip_idx, start, sentence = _where(clips, i)
        extra = f" <small>{html.escape(note(i))}</small>" if note else ""
        out.append(f'<div><code>{html.escape(video_id)}#{clip_idx}</code> {start:.1f}s '
                   f'<span class="sentence">{html.escape(sentence)}</span>{extra}</div>')
    return "".join(out)


def tuple_errors(clips: pa.Table, tuples: pa.Table, *, system: str, top: int = 15, examples: int = 3) -> str:
    """HTML body: the most frequent false-positive and false-negative verbs and arguments."""
    gold = gold_sets(clips)
    pred = prediction_sets(clips, tuples, what=f"tuple system {system}")
    parts = [f"<p>System <code>{html.escape(system)}</code>. Exact matching on the clips Table 5's oracle block "
             "counts (clips with gold items of that field); an item is listed once per clip.</p>\n"]
    for field in FIELDS:
        false_pos: dict[str, list[int]] = defaultdict(list)
        false_neg: dict[str, list[int]] = defaultdict(list)
        tp = 0
        for i, (g, p) in enumerate(zip(gold[field], pred[field])):
            if not g:
                continue
            tp += len(g & p)
            for item in sorted(p - g):
                false_pos[item].append(i)
            for item in sorted(g - p):
                false_neg[item].append(i)
        fp, fn = sum(map(len, false_pos.values())), sum(map(len, false_neg.values()))
        parts.append(f"<h2>{field.capitalize()}</h2>\n<p>{tp} correct, {fp} false positives, {fn} false negatives "
                     "(item × clip).</p>\n")
        for kind, errors, other, other_name in (("False positives (predicted, not gold)", false_pos, gold, "gold"),
                                                ("False negatives (gold, not predicted)", false_neg, pred, "predicted")):
            ranked = sorted(errors.items(), key=lambda kv: (-len(kv[1]), kv[0]))[:top]
            body = [[item, len(idx), _example_html(
                clips, idx, examples,
                note=lambda i, o=other: f"{other_name}: " + (", ".join(sorted(o[field][i])) or "(none)"))]
                for item, idx in ranked]
            parts.append(f"<h3>{kind}</h3>\n")
            parts.append(html_table(["item", "clips", "examples"], body, raw_columns=(2,)) if body
                         else "<p>None.</p>\n")
    return "".join(parts)


def keyclip_errors(clips: pa.Table, keyclips: pa.Table, *, system: str, top: int = 15, examples: int = 3) -> str:
    """HTML body: missed key clips grouped by gold verb, and non-key clips called key."""
    keyclips = conform(keyclips, KEYCLIPS, what=f"key-clip system {system}")
    cols = align_to_clips(clips, keyclips, ["is_key", "score"], what=f"key-clip system {system}")
    pred, score = cols["is_key"], cols["score"]
    gold = clips.column("is_key").to_pylist()
    gold_verbs = clips.column("gold_verbs").to_pylist()
    s = score_keyclips(gold, pred)
    fn_idx = [i for i, (g, p) in enumerate(zip(gold, pred)) if g and not p]
    fp_idx = [i for i, (g, p) in enumerate(zip(gold, pred)) if p and not g]
    parts = [f"<p>System <code>{html.escape(system)}</code>: accuracy {100 * s.accuracy:.1f}, precision "
             f"{100 * s.precision:.1f}, recall {100 * s.recall:.1f}, F1 {100 * s.f1:.1f} on {s.n_clips} clips; "
             f"{len(fp_idx)} false positives, {len(fn_idx)} false negatives.</p>\n"]

    by_verb: dict[str, list[int]] = defaultdict(list)
    for i in fn_idx:
        for verb in sorted(set(gold_verbs[i])) or ["(no gold verb)"]:
            by_verb[verb].append(i)
    # Recall of the key clips holding each gold verb, so that a verb missed often is seen in proportion.
    key_with_verb = Counter(v for i, g in enumerate(gold) if g for v in set(gold_verbs[i]))
    ranked = sorted(by_verb.items(), key=lambda kv: (-len(kv[1]), kv[0]))[:top]
    body = [[verb, len(idx), key_with_verb.get(verb, 0), _example_html(clips, idx, examples)] for verb, idx in ranked]
    parts.append("<h2>Missed key clips (false negatives), by gold verb</h2>\n")
    parts.append(html_table(["gold verb", "missed", "key clips with it", "examples"], body, raw_columns=(3,))
                 if body else "<p>None.</p>\n")

    has_score = any(score[i] is not None for i in fp_idx)
    order = sorted(fp_idx, key=lambda i: (-(score[i] or 0.0), i)) if has_score else fp_idx
    body = [[_example_html(clips, [i], 1), "" if score[i] is None else f"{score[i]:.3f}"] for i in order[:top]]
    parts.append("<h2>Non-key clips called key (false positives)" + (", most confident first" if has_score else "")
                 + "</h2>\n")
    parts.append(html_table(["clip", "score"], body, raw_columns=(0,)) if body else "<p>None.</p>\n")
    return "".join(parts)
