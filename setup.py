"""Build of the one compiled module; everything else is in pyproject.toml.

cookproc.scoring._fuzz is fuzzywuzzy 0.18's ratio / partial_ratio on difflib, transcribed to C (see
workflow/cookproc/scoring/_fuzz.c); `pip install -e .` compiles it next to the sources, where Snakemake's
jobs import it from.
"""
from setuptools import Extension, setup

setup(ext_modules=[Extension("cookproc.scoring._fuzz", sources=["workflow/cookproc/scoring/_fuzz.c"])])
