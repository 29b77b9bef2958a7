"""The paper's scoring protocol (docs/protocol.md §3): key-clip and tuple P/R/F1 and the fuzzy
string similarities they use (fuzzywuzzy 0.18 on difflib, compiled from C). Below the stages, which
score their own cross-validation with it, and below evaluation, which builds the tables from it;
imports nothing else of cookproc."""
