"""The ``cookproc`` command: a procedure from a transcript or subtitle file, without a Snakefile.

    cookproc extract talk.vtt [--video talk.mp4] [--format md|json] [--output PATH]
                              [--keyclips results/models/keyclips-neural-text | none] [--model NAME]
                              [--tuples results/models/tuples-supervised-text | none] [--strict]
    cookproc inspect FILE.parquet [--lineage] [--json] [--config config.yaml]

``extract`` runs the library code of rule procedures_extract (:func:`cookproc.app.procedures.extract_procedure`)
with the same settings: the defaults of the config's ``procedures`` section, or the settings of a
workflow config (``--config config.yaml``), options overriding single keys. Relative paths of a
config are read from the config's folder (the defaults' from this checkout's folder, where the
workflow runs). The document goes to stdout, or atomically to ``--output``, which may not be one of
the inputs (refused before any work). Bad input or an unwritable output stops with the file, line
and cue named and exit status 1, without a traceback. ``inspect`` shows what a
Parquet file of the workflow holds, its provenance and whether it is current (cookproc.app.inspection).
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from cookproc.core.config_schema import optional_path
from cookproc.core.errors import ExpectedError, InputError, one_line, require_file

#: The checkout's folder: the workflow's working directory, which default config paths are relative to.
CHECKOUT = Path(__file__).resolve().parents[3]
LEXICON_FILE = "youcook2/1.2.cooking_vocab.strict_filtered.unsorted.lst"
EXIT_BAD_INPUT = 1


def load_config(path: str | None) -> tuple[dict, Path]:
    """The workflow config (validated, defaults filled) and the folder its relative paths start from.
    A bad file or value is an error of a line naming the file, the line and the key."""
    from cookproc.core.config_files import error_source, load_config_file
    from cookproc.core.config_schema import validate_config
    from cookproc.core.errors import ConfigError

    if path is None:
        return validate_config({}), CHECKOUT
    config = load_config_file(path)  # ConfigError naming the file (and the line of a syntax error)
    try:
        validate_config(config)
    except ConfigError as exc:
        raise ConfigError(f"{error_source(exc, [path], None) or path}: {exc}", exc.keys) from None
    return config, Path(path).resolve().parent


def _relative_to(base: Path, path: str) -> str:
    return path if os.path.isabs(path) else os.path.normpath(base / path)


def parser() -> argparse.ArgumentParser:
    from cookproc.app.clips import SEGMENTATIONS
    from cookproc.app.extractors import MODELS
    from cookproc.app.subtitles import SUBTITLE_EXTENSIONS

    top = argparse.ArgumentParser(prog="cookproc", description="Structured procedures from cooking videos' "
                                  "transcripts and subtitles (Xu et al., 2020).")
    commands = top.add_subparsers(dest="command", required=True)
    extract = commands.add_parser(
        "extract", help="key steps and their verbs and arguments from one transcript or subtitle file",
        description="Cut FILE into clips, decide which are key steps and extract their verbs and arguments; "
                    "write the procedure as Markdown (key steps with times) or JSON (every clip).")
    extract.add_argument("file", metavar="FILE", help=f"subtitles or transcript ({', '.join('.' + e for e in SUBTITLE_EXTENSIONS)})")
    extract.add_argument("--video", metavar="V", help="the video: its duration ends the last clip")
    extract.add_argument("--format", choices=("md", "json"),
                         help="output format (default: from --output's extension, else md)")
    extract.add_argument("-o", "--output", metavar="PATH", help="write here (atomically) instead of to stdout")
    extract.add_argument("--steps", metavar="DIR",
                         help="the step model's folder: key steps with the verbs, nouns and short text a person would "
                              "write (default: the config's procedures.step_model, results/models/steps-captions-benchmark, "
                              "built by `snakemake -c2 results/models/steps-captions-benchmark`); 'none' or 'null': "
                              "none (then --keyclips, or the SRL extractor's rule, decides the key clips)")
    extract.add_argument("--keyclips", metavar="DIR",
                         help="a trained key-clip selector's folder instead of the step model (the config's "
                              "procedures.keyclip_model; results/models/keyclips-neural-text is built by `snakemake -c2 "
                              "results/models/keyclips-neural-text`); 'none' or 'null': the SRL extractor's rule decides "
                              "(and, without --tuples, the SRL extractor gives the tuples). Either turns the step model "
                              "off unless --steps is given")
    extract.add_argument("--tuples", metavar="DIR",
                         help="a trained tuple extractor for the verbs and arguments (default: the config's "
                              "procedures.tuple_model, results/models/tuples-supervised-text, built by `snakemake -c2 "
                              "results/models/tuples-supervised-text`); 'none' or 'null': the SRL extractor (--model)")
    extract.add_argument("--model", metavar="NAME",
                         help=f"the SRL extractor of the verbs and arguments: one of {', '.join(MODELS)} (default: "
                              "the config's procedures.extractor-procedures.srl_backend, srl-heur-spacy), used instead of the "
                              "trained tuple extractor unless --tuples is given; a key-clip selector's folder is "
                              "taken as --keyclips")
    extract.add_argument("--tagger-model", metavar="PATH", help="the trained SRL tagger's model file (tagger models)")
    extract.add_argument("--lexicon", metavar="PATH",
                         help=f"cooking lexicon, one word a line (default: the config's procedures.lexicon, else "
                              f"<upstream.dir>/{LEXICON_FILE})")
    extract.add_argument("--segmentation", choices=SEGMENTATIONS, help="clip cutting (default: the config's, auto)")
    extract.add_argument("--device", help="torch device of the tagger (cpu, cuda, cuda:N)")
    extract.add_argument("--name", help="the procedure's name (default: FILE's stem)")
    extract.add_argument("--config", metavar="YAML", help="take the settings from this workflow config")
    extract.add_argument("--strict", action="store_true",
                         help="refuse the file instead of warning: rolling-caption repeats that would be removed, cues "
                              "out of order, a sentence over the length limit, text in another language "
                              "(procedures.strict)")
    extract.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                         help="progress bar on stderr (default: when stderr is a terminal)")
    from cookproc.app.inspection import add_parser as add_inspect

    add_inspect(commands)
    return top


def extract(args: argparse.Namespace) -> None:
    from cookproc.app.documents import render
    from cookproc.app.extractors import parse_model
    from cookproc.app.procedures import ProcedureSettings, extract_procedure
    from cookproc.app.progress import ProgressBar
    from cookproc.core.parquet_io import atomic_write_text

    source = Path(args.file)
    require_file(source)
    if args.video:
        require_file(args.video, "video file")
    if args.output:
        check_output_folder(args.output)
    fmt = args.format or ("json" if args.output and args.output.endswith(".json") else "md")

    config, base = load_config(args.config)
    section = dict(config["procedures"])
    if args.model and Path(args.model, "model.json").is_file():
        args.keyclips, args.model = args.keyclips or args.model, None
    if args.model:
        section["extractor"], section["srl_backend"] = parse_model(args.model)
    if args.keyclips:
        section["keyclip_model"] = optional_path(args.keyclips)
    elif section["keyclip_model"]:
        section["keyclip_model"] = _relative_to(base, section["keyclip_model"])
    # A key-clip selector, or an SRL rule, asked for by name decides the key clips instead of the step model.
    if args.steps:
        section["step_model"] = optional_path(args.steps)
    elif args.keyclips is not None or args.model:
        section["step_model"] = None
    elif section.get("step_model"):
        section["step_model"] = _relative_to(base, section["step_model"])
    # Naming an SRL extractor, or leaving the key clips to its rule, asks for the SRL extractor's
    # tuples: the trained tuple extractor has no key-clip rule.
    srl_asked = bool(args.model) or (args.keyclips is not None and optional_path(args.keyclips) is None)
    if args.tuples:
        section["tuple_model"] = optional_path(args.tuples)
    elif srl_asked:
        section["tuple_model"] = None
    elif section.get("tuple_model"):
        section["tuple_model"] = _relative_to(base, section["tuple_model"])
    for option, key in (("tagger_model", "tagger_model"), ("segmentation", "segmentation"), ("device", "device")):
        if getattr(args, option) is not None:
            section[key] = getattr(args, option)
    if args.strict:
        section["strict"] = True
    if section["tagger_model"] and not args.tagger_model:
        section["tagger_model"] = _relative_to(base, section["tagger_model"])
    if args.lexicon:
        lexicon = args.lexicon
    elif section["lexicon"]:
        lexicon = _relative_to(base, section["lexicon"])
    else:
        lexicon = _relative_to(base, os.path.join(config["upstream"]["dir"], LEXICON_FILE))

    if args.output:
        # Before any work: the procedure must never take an input's place.
        refuse_overwriting_inputs(args.output, [("subtitles", source), ("video", args.video), ("lexicon", lexicon),
                                                ("config", args.config), ("tagger model", section["tagger_model"]),
                                                ("key-clip selector", section["keyclip_model"]),
                                                ("step model", section.get("step_model")),
                                                ("tuple extractor", section.get("tuple_model"))])
    progress = ProgressBar(source.name, enabled=args.progress)
    try:
        document = extract_procedure(source, ProcedureSettings.from_config(section), lexicon=lexicon,
                                     name=args.name, video=args.video, progress=progress)
    finally:
        progress.close()
    text = render(document, fmt)
    if args.output:
        atomic_write_text(args.output, text)
        print(f"cookproc: {document['n_key_clips']} key clips of {document['n_clips']} -> {args.output}",
              file=sys.stderr)
    else:
        sys.stdout.write(text)


def check_output_folder(output: str) -> None:
    """The output's folder exists, is a folder and takes new files (a file is created there and
    removed, as the atomic writer will); the output is no folder. Checked before any work, and never
    created: a mistyped folder is a mistake to report, not a place to
    make (the workflow's rules get their folders from Snakemake)."""
    folder = Path(output).parent
    if not folder.is_dir():
        raise InputError(output, f"the output folder {str(folder)!r} does not exist" if not folder.exists()
                         else f"{str(folder)!r} is not a folder")
    from cookproc.core.parquet_io import check_writable, output_problem

    try:
        if Path(output).is_dir():
            raise InputError(output, "is a folder; give a file name (e.g. procedure.json)")
    except OSError as exc:  # a name too long to look up, ...
        raise output_problem(output, exc) from None
    # The file is written through a temporary file beside it, then renamed: the folder must take both.
    if not os.access(folder, os.W_OK | os.X_OK):
        raise InputError(output, f"cannot write into the folder {str(folder)!r}: no permission (write somewhere else)")
    # Permissions are not all (root writes anywhere, but not into /proc): the temporary file is made once.
    check_writable(output)


def refuse_overwriting_inputs(output: str, inputs: list[tuple[str, str | os.PathLike | None]]) -> None:
    """Refuse an output that is one of the inputs (the same path, or the same file through a hard or
    symbolic link), or a file inside an input folder (a model's): the procedure would replace it."""
    out = Path(output)
    for name, path in inputs:
        if not path:
            continue
        path = Path(path)
        same = os.path.normcase(os.path.abspath(out)) == os.path.normcase(os.path.abspath(path))
        try:
            same = same or (out.exists() and path.exists() and os.path.samefile(out, path))
            inside = path.is_dir() and out.parent.exists() and os.path.samefile(out.parent, path)
        except OSError:
            inside = False
        if same:
            raise InputError(output, f"is the {name} file {str(path)!r}{'' if str(path) == output else ' (the same file)'}: "
                                     "writing the procedure there would destroy it; give -o another file")
        if inside:
            raise InputError(output, f"lies inside the {name} folder {str(path)!r}: writing there would change the "
                                     "model; give -o a file elsewhere")


def main(argv: list[str] | None = None) -> int:
    from cookproc.core.logs import EXIT_INTERRUPTED, INTERRUPTED

    command = "cookproc"
    try:
        args = parser().parse_args(argv)
        command = f"cookproc {args.command}"
        if args.command == "inspect":
            from cookproc.app.inspection import run

            return run(args)
        from cookproc.app.documents import DocumentError

        try:
            extract(args)
        except (ExpectedError, DocumentError, ValueError, OSError) as exc:
            # Bad input, a bad option value or an unwritable output: the message names what and where.
            print(f"{command}: error: {one_line(exc)}", file=sys.stderr)
            return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        # Ctrl-C: one line, no traceback; an output is written atomically, so none is half-written.
        print(f"{command}: {INTERRUPTED}", file=sys.stderr)
        return EXIT_INTERRUPTED
    return 0


if __name__ == "__main__":
    sys.exit(main())
