"""Corpus alignment: a synthetic skeleton + CoNLL-U pair, and hand-checked EWT sentences."""
from pathlib import Path

import pytest

from cookproc.srl.training_data import build_training_data
from fixtures import REPO

SKEL = """\
google/ewt/answers/00/d1.xml 0 0 [WORD] PRP (TOP(S(NP*) - - (ARG0*) *
google/ewt/answers/00/d1.xml 0 1 [WORD] VBD (VP* pick pick.01 (V* *
google/ewt/answers/00/d1.xml 0 2 [WORD] RP (PRT*) - - *) *
google/ewt/answers/00/d1.xml 0 3 [WORD] PRP (NP*) - - (ARG1*) *
google/ewt/answers/00/d1.xml 0 4 [WORD] TO (S(VP* - - (ARGM-PRP* *
google/ewt/answers/00/d1.xml 0 5 [WORD] VB (VP* eat eat.01 * (V*)
google/ewt/answers/00/d1.xml 0 6 [WORD] PRP (NP*))) - - *) (ARG1*)
google/ewt/answers/00/d1.xml 0 7 [WORD] . *)) - - * *

google/ewt/answers/00/d1.xml 1 0 [WORD] NN (TOP(NP* idea idea.01 (V*)
google/ewt/answers/00/d1.xml 1 1 [WORD] . *)) - - *

google/ewt/answers/00/d1.xml 2 0 [WORD] VB (TOP(S(VP* stir stir.01 (V*)
google/ewt/answers/00/d1.xml 2 1 [WORD] PRP (NP*)) - - (ARG1*)
google/ewt/answers/00/d1.xml 2 2 [WORD] . *)) - - *
"""
CONLLU = """\
# sent_id = 1
1\tI\tI\tPRON\tPRP\t_\t2\tnsubj\t_\t_
2\tpicked\tpick\tVERB\tVBD\t_\t0\troot\t_\t_
3\tup\tup\tADP\tRP\t_\t2\tcompound:prt\t_\t_
4\tit\tit\tPRON\tPRP\t_\t2\tobj\t_\t_
5\tto\tto\tPART\tTO\t_\t6\tmark\t_\t_
6\teat\teat\tVERB\tVB\t_\t2\tadvcl\t_\t_
7\tit\tit\tPRON\tPRP\t_\t6\tobj\t_\t_
8\t.\t.\tPUNCT\t.\t_\t2\tpunct\t_\t_

# sent_id = 2
1\tidea\tidea\tNOUN\tNN\t_\t0\troot\t_\t_
2\t.\t.\tPUNCT\t.\t_\t1\tpunct\t_\t_

# sent_id = 3
1-2\tstirit\t_\t_\t_\t_\t_\t_\t_\t_
1\tstir\tstir\tVERB\tVB\t_\t0\troot\t_\t_
2\tit\tit\tPRON\tPRP\t_\t1\tobj\t_\t_
3\t.\t.\tPUNCT\t.\t_\t1\tpunct\t_\t_
"""


def make_root(tmp_path: Path) -> Path:
    (tmp_path / "propbank-release/docs/evaluation").mkdir(parents=True)
    for split, docs in (("train", "answers/00/d1.xml\n"), ("dev", "answers/00/missing.xml.conllu\n"), ("test", "")):
        (tmp_path / f"propbank-release/docs/evaluation/ewt.{split}.txt").write_text(docs)
    skel = tmp_path / "propbank-release/data/google/ewt/answers/00/d1.xml.gold_skel"
    skel.parent.mkdir(parents=True)
    skel.write_text(SKEL)
    ud = tmp_path / "UD_English-EWT/not-to-release/sources/answers/d1.xml.conllu"
    ud.parent.mkdir(parents=True)
    ud.write_text(CONLLU)
    return tmp_path


def test_synthetic_alignment_and_label_normalisation(tmp_path):
    rows, report = build_training_data(make_root(tmp_path))
    by_pred = {(r["sent_idx"], r["predicate_idx"]): r for r in rows}
    pick = by_pred[(0, 1)]
    assert pick["words"] == ["I", "picked", "up", "it", "to", "eat", "it", "."]
    # The multi-word V span "picked up" -> V on the predicate word, particle as ARGM-PRT;
    # ARGM-PRP -> ARGM-PNC (OntoNotes label upstream's filter drops).
    assert pick["tags"] == ["B-ARG0", "B-V", "B-ARGM-PRT", "B-ARG1", "B-ARGM-PNC", "I-ARGM-PNC", "I-ARGM-PNC", "O"]
    assert by_pred[(0, 5)]["tags"] == ["O", "O", "O", "O", "O", "B-V", "B-ARG1", "O"]
    # Sentence 2's predicate is a noun (skipped, counted); sentence 3 has a multiword token line.
    assert (1, 0) not in by_pred and report.predicates_nonverbal_skipped == 1
    assert by_pred[(2, 0)]["words"] == ["stir", "it", "."]
    assert by_pred[(2, 0)]["tags"] == ["B-V", "B-ARG1", "O"]
    assert report.documents_missing_skeleton == ["answers/00/missing.xml"]
    assert report.multiword_v_spans == 1 and report.sentences_misaligned == 0


def test_token_count_mismatch_is_counted_not_hidden(tmp_path):
    root = make_root(tmp_path)
    ud = root / "UD_English-EWT/not-to-release/sources/answers/d1.xml.conllu"
    ud.write_text(CONLLU.replace("7\tit\tit\tPRON\tPRP\t_\t6\tobj\t_\t_\n", ""))
    rows, report = build_training_data(root)
    assert report.sentences_misaligned == 1
    assert {r["sent_idx"] for r in rows} == {2}
    assert "sentences not aligned (skipped): 1" in report.as_text()


EWT = REPO.parent / "shared/data/propbank-ewt"


@pytest.mark.skipif(not (EWT / "propbank-release").is_dir(), reason="PropBank EWT not present")
def test_hand_checked_ewt_sentences():
    rows, report = build_training_data(EWT)
    doc = "answers/00/20111107193044AAvUYBv_ans.xml"
    sent = {r["predicate_idx"]: r for r in rows if r["doc"] == doc and r["sent_idx"] == 0}
    assert sent[6]["words"] == ["I", "'m", "mad", "and", "do", "n't", "know", "what", "to", "do", "!"]
    # "know": ARG0 I, NEG n't, ARG1 "what to do" (checked against the skeleton by hand).
    assert sent[6]["tags"] == ["B-ARG0", "O", "O", "O", "O", "B-ARGM-NEG", "B-V", "B-ARG1", "I-ARG1", "I-ARG1", "O"]
    assert sent[1]["predicate_lemma"] == "be" and "B-ARG2" in sent[1]["tags"]  # 'm: be.01, "mad" ARG2
    assert 2 not in sent  # "mad" (JJ) is a non-verbal predicate
    help_ = [r for r in rows if r["doc"] == doc and r["sent_idx"] == 1][0]
    assert help_["words"] == ["Please", "help", "!?"] and help_["tags"] == ["B-ARGM-DIS", "B-V", "O"]
    assert report.per_split["train"] > 25000 and report.per_split["dev"] > 3000 and report.per_split["test"] > 3000
    assert report.sentences_misaligned < 100
