"""Evaluation: Tables 2, 4 and 5 (scored with cookproc.scoring, the paper's protocol), bootstrap
intervals and significance, the systems imported for scoring, the report's pages and the one file
of every published number."""
