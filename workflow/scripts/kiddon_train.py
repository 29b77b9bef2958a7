"""Train the Kiddon et al. (2015) segmenter by hard EM on the transcripts (its training text)."""
import time

from cookproc.kiddon.training_text import ITERATIONS, iterations_table, read_lexicon_words, read_transcripts
from cookproc.kiddon.segmenter import Settings, training_sentences, train
from cookproc.core.logs import script_logging
from cookproc.core.parquet_io import atomic_write_text, write_parquet
from cookproc.data.wordnet import has_verb_synset

with script_logging(snakemake) as log:
    started = time.perf_counter()
    documents = read_transcripts(snakemake.params.transcripts_dir)
    lexicon = read_lexicon_words(snakemake.input.lexicon)
    training_text = training_sentences(documents)
    log.info("read %d transcripts: %d sentences (%d distinct); lexicon of %d words",
             len(documents), sum(training_text.values()), len(training_text), len(lexicon))
    settings = Settings.from_dict(snakemake.params.settings)
    model, history = train(training_text, lexicon, has_verb_synset, iterations=snakemake.params.iterations,
                           settings=settings)
    atomic_write_text(snakemake.output.model, model.to_json())
    write_parquet(iterations_table(history), snakemake.output.iterations, ITERATIONS, sort_keys=["iteration"])
    log.info("wrote a model of %d verbs (%d predicates) after %d iterations in %.1fs",
             len(model.verb_counts), model.total_verbs, len(history), time.perf_counter() - started)
