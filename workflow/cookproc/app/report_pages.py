"""Report pages of the app's outputs: a user procedure's key steps and a corpus's summary (the
report's table pages: :mod:`cookproc.evaluation.report`).

Everything is ordered deterministically (count, then text), so pages are byte-identical run to run.
"""
from __future__ import annotations

import html
from collections import Counter
from typing import Mapping, Sequence

import pyarrow as pa

from cookproc.app.corpus import iter_shards
from cookproc.app.documents import validate_document
from cookproc.evaluation.report import html_table


def _tuples_text(tuples: Sequence[Mapping]) -> str:
    return "; ".join(t["verb"] + (f" ({', '.join(t['args'])})" if t["args"] else "") for t in tuples)


def procedure_html(document: Mapping) -> str:
    """The body of a user procedure's page: its key steps in order, with times, tuples, the key
    probability (or the extractor's score) and the sentence (a procedure document, checked)."""
    validate_document(document)
    clips = document["clips"]
    steps = [c for c in clips if c["is_key"]]
    intro = (f"<p>From <code>{html.escape(document['source'])}</code>: {len(steps)} key steps of "
             f"{document['n_clips']} clips ({html.escape(document['segmentation'])} segmentation). Key clips by "
             f"<code>{html.escape(document['key_clips_by'])}</code>, tuples by "
             f"<code>{html.escape(document['extractor'])}</code>.</p>\n")
    body = []
    for step, clip in enumerate(steps, 1):
        when = (f"line {clip['source_lines'][0]}" if clip["start_s"] is None
                else f"{clip['start']}–{'end' if clip['end_s'] is None else clip['end']}")
        confidence = clip["key_probability"] if clip["key_probability"] is not None else clip["key_score"]
        body.append([step, when, _tuples_text(clip["tuples"]) or "(no tuple)",
                     "" if confidence is None else f"{confidence:.2f}",
                     f'<span class="sentence">{html.escape(clip["sentence"])}</span>'])
    header = ["step", "time", "verbs (arguments)", "key probability", "sentence"]
    if not steps:
        return intro + "<p>No key clips were found.</p>\n"
    return intro + html_table(header, body, raw_columns=(4,))


def _percentiles_of_counts(counts: Counter, qs: Sequence[float]) -> list[float]:
    """numpy's (linear) percentiles of the values that ``counts`` ({value: how often}) describes,
    without materialising them: the corpus's steps-per-video are a histogram, not a list per video."""
    values = sorted(counts)
    n = sum(counts.values())

    def at(rank: int) -> float:  # the rank-th (0-based) value of the sorted values
        seen = 0
        for value in values:
            seen += counts[value]
            if rank < seen:
                return float(value)
        raise IndexError(rank)

    out = []
    for q in qs:
        position = q / 100 * (n - 1)
        low = int(position)
        high = min(low + 1, n - 1)
        out.append(at(low) + (at(high) - at(low)) * (position - low))
    return out


class CorpusSummary:
    """A corpus's summary page, built shard by shard: :meth:`add` each shard's clips (a CORPUS_CLIPS
    table, or its :attr:`COLUMNS`), then :meth:`html`. It keeps counts only (a histogram of steps
    per video, verb and argument counts), so its memory does not grow with the number of videos;
    a video's clips must all come in one :meth:`add` (a corpus shard holds whole videos)."""

    COLUMNS = ("video_id", "is_key", "verbs", "args", "extractor")

    def __init__(self) -> None:
        self.steps_per_video: Counter = Counter()  # {steps: videos}
        self.verbs: Counter = Counter()
        self.args: Counter = Counter()
        self.extractors: set[str] = set()
        self.n_clips = self.n_key = 0

    def add(self, clips: pa.Table) -> None:
        videos = clips.column("video_id").to_pylist()
        is_key = clips.column("is_key").to_pylist()
        steps = Counter(v for v, k in zip(videos, is_key) if k)
        self.steps_per_video.update(steps.get(v, 0) for v in set(videos))
        for key, v, a in zip(is_key, clips.column("verbs").to_pylist(), clips.column("args").to_pylist()):
            if key:
                self.verbs.update(v)
                self.args.update(a)
        self.extractors.update(clips.column("extractor").to_pylist())
        self.n_clips += len(videos)
        self.n_key += sum(is_key)

    def html(self, *, top: int = 20) -> str:
        """The page's body: how many videos, clips and key clips, the distribution of steps per
        video, and the most frequent verbs and arguments of key clips. Ties are ordered by text,
        so the page is byte-identical run to run."""
        n_videos = sum(self.steps_per_video.values())
        out = [f"<p>{n_videos:,} videos, {self.n_clips:,} clips, {self.n_key:,} key clips; extracted with "
               + ", ".join(f"<code>{html.escape(e)}</code>" for e in sorted(self.extractors)) + ".</p>\n"]
        if n_videos:
            mean = sum(steps * videos for steps, videos in self.steps_per_video.items()) / n_videos
            q = _percentiles_of_counts(self.steps_per_video, [0, 25, 50, 75, 100])
            out.append("<h2>Steps per video</h2>\n")
            out.append(html_table(["mean", "min", "25%", "median", "75%", "max", "videos without a step"],
                                  [[f"{mean:.1f}", *(f"{x:g}" for x in q), self.steps_per_video.get(0, 0)]]))

        def ranked(counter: Counter) -> list[list]:
            return [[i, item, count] for i, (item, count) in
                    enumerate(sorted(counter.items(), key=lambda kv: (-kv[1], kv[0]))[:top], 1)]

        out.append(f"<h2>Most frequent verbs of key steps (top {top})</h2>\n")
        out.append(html_table(["rank", "verb", "key clips"], ranked(self.verbs)))
        out.append(f"<h2>Most frequent arguments of key steps (top {top})</h2>\n")
        out.append(html_table(["rank", "argument", "key clips"], ranked(self.args)))
        return "".join(out)


def summarise_corpus(dataset) -> CorpusSummary:
    """The :class:`CorpusSummary` of a corpus dataset folder, read one shard at a time."""
    summary = CorpusSummary()
    for _, clips in iter_shards(dataset, columns=CorpusSummary.COLUMNS):
        summary.add(clips)
        del clips  # before the next shard is read
    return summary


def corpus_summary_html(clips: pa.Table, *, top: int = 20) -> str:
    """The body of a corpus's summary page for one table of clips (:class:`CorpusSummary`)."""
    summary = CorpusSummary()
    summary.add(clips)
    return summary.html(top=top)
