"""Evaluation: the paper's scoring protocol (docs/protocol.md §3), Tables 2, 4 and 5, bootstrap
intervals and significance, the systems imported for scoring, the report's pages and the one file
of every published number."""
