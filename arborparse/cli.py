"""The ``arborparse`` command: a thin layer over the Python API.

Exit status: 0 on success (a closed output pipe, as in ``parse | head``, included), 1 on a
user error (one line on stderr), 2 on a usage error, 130 when interrupted (Ctrl-C or
SIGTERM; a training run says which epoch it kept).

Outputs are checked before any work: an output that is also an input of the command is
refused, and so is replacing a file that is not a model of ours with a model or a model
with anything else, unless ``--force``.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import sys
import threading
import warnings

import click

from arborparse import __version__
from arborparse.baselines import BASELINES
from arborparse.errors import ArborparseError
from arborparse.eval import LENGTH_BINS, TAG_MEASURES, compare, evaluate
from arborparse.io import iter_conllu, read_conllu, write_conllu
from arborparse.io.atomic import check_writable
from arborparse.io.model_files import is_model
from arborparse.training import TrainingInterrupted, is_interrupt

FORMAT = click.option("--format", "fmt", type=click.Choice(["auto", "conllu", "conllx"]),
                      default="auto", show_default=True,
                      help="Input format; auto goes by the suffix .conllu or .conllx, then by "
                           "content.")
FORCE = click.option("--force", is_flag=True,
                     help="Replace the output even if it is a model file (or, for a model, a "
                          "file that is not one).")


class _Group(click.Group):
    """Turns every ArborparseError and I/O error into one line on stderr and exit status 1;
    a closed output pipe ends quietly."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except TrainingInterrupted as err:
            click.echo(f"Interrupted: {err}", err=True)
            sys.exit(130)
        except ArborparseError as err:
            raise click.ClickException(str(err)) from None
        except BrokenPipeError:
            # the reader is gone (parse | head): stop quietly, and keep Python's final
            # flush of stdout from complaining
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            sys.exit(0)
        except OSError as err:
            where = f"{err.filename}: " if err.filename else ""
            raise click.ClickException(f"{where}{err.strerror or err}") from None
        except (KeyboardInterrupt, Exception) as err:
            if not is_interrupt(err):  # Ctrl-C, also when compiled code wrapped it
                raise
            click.echo("Aborted!", err=True)
            sys.exit(130)


def _output(path, inputs=(), model: bool = False, force: bool = False) -> None:
    """Check, before any work, that the command may write `path` (see the module
    docstring); `inputs` are the paths the command reads."""
    if path is None or str(path) == "-":
        return
    for other in inputs:
        if other is not None and str(other) != "-" and os.path.exists(other) and \
                os.path.exists(path) and os.path.samefile(path, other):
            raise ArborparseError(f"{path} is also an input of this command; write the "
                                  "output elsewhere")
    check_writable(path)
    if not force and os.path.isfile(path) and os.path.getsize(path) > 0 and \
            is_model(path) != model:
        what = "is not an arborparse model file" if model else "is an arborparse model file"
        raise ArborparseError(f"{path} exists and {what}; use --force to replace it")


def _interruptible(items):
    """The items of an iterator, computed one ahead in a daemon thread, so that Ctrl-C
    reaches the main thread at once even while compiled code (which releases the GIL)
    parses a long sentence; the main thread then cleans up and exits, abandoning the
    thread."""
    ahead = queue.Queue(maxsize=1)

    def work():
        try:
            for item in items:
                ahead.put((True, item))
            ahead.put((True, _DONE))
        except BaseException as err:  # handed to the main thread
            ahead.put((False, err))

    threading.Thread(target=work, daemon=True).start()
    while True:
        ok, item = ahead.get()
        if not ok:
            raise item
        if item is _DONE:
            return
        yield item


_DONE = object()


def _warning(message, category, filename, lineno, file=None, line=None):
    click.echo(f"Warning: {message}", err=True)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="arborparse")
def cli():
    """Dependency parsing built on exact inference over trees."""


def _table(scores: dict) -> str:
    keys = ("UAS", "LAS", "UAS_nopunct", "LAS_nopunct", "LAS_full", "LA", "UCM", "LCM",
            "root_accuracy", "nonproj_accuracy", *TAG_MEASURES)
    lines = [f"{'metric':<18}{'score':>8}"]
    lines += [f"{k:<18}{'n/a':>8}" if scores[k] is None else f"{k:<18}{scores[k]:>8.2f}"
              for k in keys]
    lines.append(f"{'words':<18}{scores['words']:>8}")
    lines.append(f"{'sentences':<18}{scores['sentences']:>8}")
    lines.append(f"{'nonproj_arcs':<18}{scores['nonproj_arcs']:>8}")
    lines.append("")
    lines.append(f"{'arc length':<12}{'gold':>7}{'prec':>8}{'recall':>8}{'F1':>8}")
    for name in LENGTH_BINS:
        s = scores["by_length"][name]
        lines.append(f"{name:<12}{s['gold']:>7}{s['precision']:>8.2f}{s['recall']:>8.2f}"
                     f"{s['f1']:>8.2f}")
    lines.append("")
    lines.append(f"{'deprel':<12}{'gold':>7}{'prec':>8}{'recall':>8}{'F1':>8}")
    by_count = sorted(scores["by_deprel"].items(), key=lambda kv: (-kv[1]["gold"], kv[0]))
    for name, s in by_count:
        lines.append(f"{name:<12}{s['gold']:>7}{s['precision']:>8.2f}{s['recall']:>8.2f}"
                     f"{s['f1']:>8.2f}")
    return "\n".join(lines)


def _aligned_table(scores: dict) -> str:
    lines = [f"{'metric':<12}{'precision':>10}{'recall':>10}{'F1':>10}{'aligned acc':>13}"]
    for name, s in scores.items():
        aligned = s.get("aligned_accuracy")
        lines.append(f"{name:<12}{s['precision']:>10.2f}{s['recall']:>10.2f}{s['f1']:>10.2f}"
                     + ("" if aligned is None else f"{aligned:>13.2f}"))
    return "\n".join(lines)


@cli.command("evaluate")
@click.argument("gold", type=click.Path())
@click.argument("pred", type=click.Path())
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@FORMAT
def evaluate_cmd(gold, pred, as_json, fmt):
    """Score PRED against GOLD: tags, lemmas and trees (UAS, LAS, the CoNLL 2018 measures,
    analyses). When PRED tokenizes or splits the text differently (it was parsed from raw
    text), its words are aligned to GOLD's through the characters, as the CoNLL 2018
    evaluation does, and every measure is given as precision, recall and F1."""
    gold_s, pred_s = read_conllu(gold, fmt), read_conllu(pred, fmt)
    if len(gold_s) != len(pred_s) or any(g.forms != p.forms for g, p in zip(gold_s, pred_s)):
        from arborparse.eval.aligned import evaluate_aligned

        scores = evaluate_aligned(gold_s, pred_s)
        click.echo(json.dumps(scores) if as_json else _aligned_table(scores))
        return
    scores = evaluate(gold_s, pred_s)
    click.echo(json.dumps(scores) if as_json else _table(scores))


@cli.command("compare")
@click.argument("gold", type=click.Path())
@click.argument("a", type=click.Path())
@click.argument("b", type=click.Path())
@click.option("--metric", type=click.Choice(["UAS", "LAS"]), default="UAS", show_default=True,
              help="The score compared, sentence by sentence.")
@click.option("--samples", type=click.IntRange(100), default=10000, show_default=True,
              help="Permutations for the paired permutation test.")
@click.option("--seed", type=int, default=0, show_default=True,
              help="Seed of the permutations.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@FORMAT
def compare_cmd(gold, a, b, metric, samples, seed, as_json, fmt):
    """Is system A better than system B? Sign test and paired permutation test."""
    gold_s = read_conllu(gold, fmt)
    r = compare(gold_s, read_conllu(a, fmt), read_conllu(b, fmt), metric, samples, seed)
    if as_json:
        click.echo(json.dumps(r))
        return
    click.echo(f"{metric}: A {r['A']:.2f}  B {r['B']:.2f}  A-B {r['difference']:+.2f}")
    click.echo(f"sentences where A is better {r['A_better_sentences']}, B is better "
               f"{r['B_better_sentences']}, ties {r['ties']}")
    click.echo(f"sign test p = {r['sign_test_p']:.4g}; paired permutation test p = "
               f"{r['permutation_p']:.4g} ({r['samples']} permutations)")


@cli.command("baseline")
@click.argument("input", type=click.Path(allow_dash=True), default="-")
@click.option("-o", "--output", type=click.Path(allow_dash=True), default="-",
              help="Where to write the parsed file (default: stdout).")
@click.option("--kind", type=click.Choice(sorted(BASELINES)), default="left", show_default=True,
              help="left: every word attaches to its left neighbour.")
@FORMAT
@FORCE
def baseline_cmd(input, output, kind, fmt, force):
    """Parse INPUT with a trivial baseline (a floor for every evaluation)."""
    _output(output, [input], force=force)
    parse = BASELINES[kind]
    write_conllu([parse(s) for s in read_conllu(input, fmt)], output)


COMPONENTS = ("tokenizer", "tagger", "lemmatizer", "parser")
FIRST_ORDER_OPTIONS = ("trainer", "decoder", "train_decoder", "hash_bits",
                       "exact_features", "k", "C", "clusters", "init_noise", "squeeze")
ISBN_ONLY = ("features", "latent_links", "approximation", "pseudo", "cutoff", "beam",
             "branching")
NETWORK_OPTIONS = ("hidden", "batch_size", "patience")  # isbn and neural
NEURAL_OPTIONS = ("objective", "layers", "embeddings", "transformer", "resume", "threads")
DEFAULTS = {"first-order": {"epochs": 10, "components": COMPONENTS},
            "isbn": {"epochs": 10, "hidden": 80, "components": COMPONENTS},
            "neural": {"epochs": 40, "hidden": 200, "components": ("tokenizer", "parser")}}
ONLINE = ("perceptron", "mira", "mira-kbest", "mira-factored")
LATENT = ("latent", "latent-lbfgs")
DISTRIBUTED_TRAINERS = ("perceptron", "mira", "mira-kbest", "mira-factored", "loglinear")
# first-order options that only some trainers take
TRAINER_OPTIONS = {"k": ("mira-kbest",),
                   "C": ("mira", "mira-kbest", "mira-factored", "loglinear", "loglinear-sgd",
                         "eg") + LATENT,
                   "learning_rate": ("loglinear-sgd", "eg", "latent"),
                   "exact_features": ONLINE,
                   "clusters": LATENT, "init_noise": LATENT, "squeeze": LATENT}


class _CValue(click.ParamType):
    """A number > 0 or ``auto``."""

    name = "C|auto"

    def convert(self, value, param, ctx):
        if isinstance(value, float) or value == "auto":
            return value
        try:
            number = float(value)
        except ValueError:
            number = 0.0
        if not number > 0:
            self.fail(f"{value!r} is neither a number > 0 nor 'auto'", param, ctx)
        return number


def _refuse(ctx, names, what: str) -> None:
    """A usage error for the options among `names` given on the command line."""
    wrong = _given(ctx, names)
    if wrong:
        flags = ", ".join(_flag(ctx, name) for name in wrong)
        verb = "does" if len(wrong) == 1 else "do"
        raise click.UsageError(f"{flags} {verb} not apply to {what}")


def _given(ctx, names) -> list[str]:
    """The options among `names` set on the command line."""
    return [name for name in names
            if ctx.get_parameter_source(name) == click.core.ParameterSource.COMMANDLINE]


@cli.command("train")
@click.option("--model-type", type=click.Choice(list(DEFAULTS)), default="first-order",
              show_default=True,
              help="first-order: the graph-based parser; isbn: the generative Incremental "
                   "Sigmoid Belief Network parser (Titov & Henderson 2007); neural: a BiLSTM "
                   "with biaffine scores trained with a tree objective, which also tags and "
                   "lemmatizes.")
@click.option("--train", "train_path", required=True, type=click.Path(),
              help="Training treebank (CoNLL-U or CoNLL-X).")
@click.option("--dev", "dev_path", type=click.Path(),
              help="Development treebank (optional): the epoch with the best LAS on it is "
                   "kept; without it, the last epoch.")
@click.option("--model", "model_path", required=True, type=click.Path(),
              help="Where to write the model file; the best epoch is saved there as soon as "
                   "it is best, so an interrupted run keeps it.")
@click.option("--trainer", type=click.Choice(["perceptron", "mira", "mira-kbest",
                                              "mira-factored", "loglinear", "loglinear-sgd",
                                              "eg", "latent", "latent-lbfgs"]),
              default="mira", show_default=True,
              help="Online large-margin trainers; conditional log-linear training "
                   "(loglinear: batch L-BFGS; loglinear-sgd: online); eg: max-margin by "
                   "exponentiated gradient; latent: log-linear with hidden arc clusters "
                   "(online; latent-lbfgs: batch).")
@click.option("--decoder", type=click.Choice(["mst", "eisner"]), default="mst",
              show_default=True, help="Decoder for parsing (mst: non-projective).")
@click.option("--train-decoder", type=click.Choice(["mst", "eisner"]),
              help="Decoder during training (default: --decoder).")
@click.option("--multi-root", is_flag=True,
              help="Allow several words attached to the root (default: exactly one).")
@click.option("--epochs", type=click.IntRange(1),
              help="Passes over the training data (loglinear, latent-lbfgs: L-BFGS "
                   "iterations); with --dev the best one is kept. Default 10; neural: 40.")
@click.option("--seed", type=int, default=0, show_default=True,
              help="Seed of the shuffling (and of the initial weights where they are random).")
@click.option("--hash-bits", type=click.IntRange(10, 31), default=23, show_default=True,
              help="log2 of the hashed weight vector's size.")
@click.option("--exact-features", is_flag=True,
              help="Index the gold trees' features exactly instead of hashing.")
@click.option("-k", "--kbest", "k", type=click.IntRange(1), default=5, show_default=True,
              help="Constraints of mira-kbest.")
@click.option("-C", "C", type=_CValue(),
              help="MIRA: bound on the steps (default: none); log-linear, latent and eg: "
                   "weight of the loss against ½‖w‖², or 'auto' (the default with --dev): "
                   "chosen on dev among 0.1, 0.3, 1 (eg: 0.001, 0.003, 0.01); without "
                   "--dev 0.3 (eg: 0.003), the best of those on three UD treebanks.")
@click.option("--learning-rate", type=click.FloatRange(min=0, min_open=True),
              help="Initial learning rate: loglinear-sgd and latent (default 0.1); eg (default "
                   "1/C, as Koo et al.).")
@click.option("--clusters", type=click.IntRange(1),
              help="latent: hidden clusters per arc (default: 2).")
@click.option("--init-noise", type=click.FloatRange(min=0), default=0.01, show_default=True,
              help="latent: standard deviation of the initial weights (seeded by --seed).")
@click.option("--squeeze", is_flag=True,
              help="latent: drop the arc features pairing both words and the POS four-grams.")
@click.option("--hidden", type=click.IntRange(1),
              help="isbn: latent units per state (default 80); neural: BiLSTM units per "
                   "direction (default 200).")
@click.option("--features", type=click.Choice(["tuned", "local"]), default="tuned",
              show_default=True, help="isbn: explicit features (local: stack top and front).")
@click.option("--latent-links/--no-latent-links", default=True, show_default=True,
              help="isbn: relation matrices between latent states (off: the TF-NA ablation).")
@click.option("--approximation", type=click.Choice(["ff", "mf"]), default="ff",
              show_default=True,
              help="isbn: feed-forward or mean-field (several times slower) approximation.")
@click.option("--pseudo", type=click.Choice(["head", "path", "head+path"]), default="head",
              show_default=True, help="isbn: pseudo-projective encoding of training trees.")
@click.option("--cutoff", type=click.IntRange(1), default=5, show_default=True,
              help="isbn: rarer words, bundles and lemmas become #UNKNOWN#.")
@click.option("--batch-size", type=click.IntRange(1), default=32, show_default=True,
              help="isbn, neural: sentences per step.")
@click.option("--patience", type=click.IntRange(1), default=10, show_default=True,
              help="isbn, neural: stop after this many epochs without a better dev LAS.")
@click.option("--objective", type=click.Choice(["crf", "crf-projective", "max-margin",
                                                "local"]), default="crf", show_default=True,
              help="neural: the arc objective: the tree CRF (Matrix-Tree), the projective "
                   "tree CRF (inside-outside), structured max-margin (cost-augmented MST), or "
                   "local head selection (cross-entropy per word).")
@click.option("--layers", type=click.IntRange(1), default=2, show_default=True,
              help="neural: BiLSTM layers.")
@click.option("--embeddings", type=click.Path(exists=True, dir_okay=False),
              help="neural: word vectors (text format: a word and its numbers per line) to "
                   "start the word embeddings from.")
@click.option("--transformer", type=click.Path(exists=True, file_okay=False),
              help="neural: a pretrained transformer's local directory (save_pretrained's, "
                   "safetensors weights, a fast tokenizer), frozen, its word vectors added to "
                   "the encoder's input; the model file names it. Needs "
                   "arborparse[transformer].")
@click.option("--threads", type=click.IntRange(1), default=1, show_default=True,
              help="neural: CPU threads for training (more were slower on this network's "
                   "small matrices).")
@click.option("--resume", is_flag=True,
              help="neural: continue the interrupted training of --model from its checkpoint "
                   "(MODEL.checkpoint, written after every epoch), with the same options.")
@click.option("--beam", type=click.IntRange(1), default=5, show_default=True,
              help="isbn: beam width B when parsing dev (the model keeps it for parsing).")
@click.option("--branching", type=click.IntRange(1), default=3, show_default=True,
              help="isbn: labels K expanded per arc in the search.")
@click.option("--components",
              help="What the model file holds, comma-separated: tokenizer (sentences and "
                   "tokens of raw text), tagger (UPOS, XPOS, FEATS), lemmatizer, parser. With "
                   "a tagger the parser trains on jackknifed tags. Default: all four; neural: "
                   "tokenizer,parser (its parser tags and lemmatizes).")
@click.option("--folds", type=click.IntRange(2), default=10, show_default=True,
              help="Jackknifing: the parser's training tags come from taggers trained on the "
                   "other folds.")
@click.option("--scheduler",
              help="Train on a Dask cluster ('local' or tcp://HOST:PORT), the training data cut "
                   "into --shards: the perceptron and MIRA by iterative parameter mixing, "
                   "loglinear (L-BFGS) with its gradient summed over the shards.")
@click.option("--shards", type=click.IntRange(1),
              help="--scheduler: parts of the training data (default: one per worker).")
@click.option("--workers", type=click.IntRange(1),
              help="--scheduler local: worker processes (default: one per core).")
@click.option("--quiet", is_flag=True, help="No progress bar or epoch lines.")
@FORMAT
@FORCE
@click.pass_context
def train_cmd(ctx, model_type, train_path, dev_path, model_path, trainer, decoder,
              train_decoder, multi_root, epochs, seed, hash_bits, exact_features, k, C,
              learning_rate, clusters, init_noise, squeeze, hidden, features, latent_links,
              approximation, pseudo, cutoff, batch_size, patience, objective, layers,
              embeddings, transformer, threads, resume, beam, branching, components, folds,
              scheduler, shards, workers, quiet, fmt, force):
    """Train a parser and save the best epoch's model."""
    what = f"--model-type {model_type}"
    if scheduler is None:
        _refuse(ctx, ["shards", "workers"], "training without --scheduler")
    elif model_type != "first-order" or trainer not in DISTRIBUTED_TRAINERS:
        raise click.UsageError(f"--scheduler trains --model-type first-order with --trainer "
                               f"{', '.join(DISTRIBUTED_TRAINERS)}")
    elif C == "auto" or (C is None and dev_path and trainer == "loglinear"):
        raise click.UsageError("--scheduler: give -C (choosing it on --dev is serial)")
    if model_type == "isbn":
        _refuse(ctx, FIRST_ORDER_OPTIONS + NEURAL_OPTIONS, what)
    elif model_type == "neural":
        _refuse(ctx, [o for o in FIRST_ORDER_OPTIONS if o != "decoder"] + list(ISBN_ONLY), what)
    else:
        _refuse(ctx, ISBN_ONLY + NETWORK_OPTIONS + NEURAL_OPTIONS, what)
        _refuse(ctx, [name for name, trainers in TRAINER_OPTIONS.items()
                      if trainer not in trainers], f"--trainer {trainer}")
    defaults = DEFAULTS[model_type]
    epochs = epochs or defaults["epochs"]
    hidden = hidden or defaults.get("hidden")
    components = components or ",".join(defaults["components"])
    parts = [c.strip() for c in components.split(",") if c.strip()]
    unknown = sorted(set(parts) - set(COMPONENTS))
    if unknown or not parts:
        raise click.UsageError(f"--components: choose among {', '.join(COMPONENTS)} "
                               f"(got {components!r})")
    _output(model_path, [train_path, dev_path], model=True, force=force)
    checkpoint = f"{model_path}.checkpoint"
    if model_type == "neural" and "parser" in parts:
        if resume and not os.path.exists(checkpoint):
            raise ArborparseError(f"--resume: there is no {checkpoint} (a neural training "
                                  "writes one after every epoch and removes it at its end)")
        if not resume and not force and os.path.exists(checkpoint):
            raise ArborparseError(f"{checkpoint} holds an interrupted training of this model: "
                                  "continue it with --resume, or start again with --force")
    latent = trainer in LATENT
    train = read_conllu(train_path, fmt)
    dev = read_conllu(dev_path, fmt) if dev_path else None
    front = _train_front_end(parts, train, dev, seed, quiet)
    if "parser" not in parts:
        front.save(model_path)
        if not quiet:
            click.echo(f"saved {model_path} ({', '.join(parts)})", err=True)
        return
    save_best = model_path
    if set(parts) - {"parser"}:
        from arborparse.pipeline import SaveWith

        if front.tagger or front.lemmatizer:
            train = _jackknife(parts, front, train, folds, seed, quiet)
            dev = front.parse(dev, retag=True) if dev else None
        save_best = SaveWith(model_path, front)
    if model_type == "neural":
        from arborparse.neural.train import NeuralTrainer

        trainer_ = NeuralTrainer(objective, epochs, patience, batch_size,
                                 2e-3 if learning_rate is None else learning_rate, hidden,
                                 layers, embeddings=embeddings, transformer=transformer,
                                 decoder=decoder if _given(ctx, ["decoder"]) else None,
                                 single_root=not multi_root, seed=seed, progress=not quiet,
                                 checkpoint=checkpoint, resume=resume, threads=threads)
    elif model_type == "isbn":
        from arborparse.isbn.train import ISBNTrainer

        trainer_ = ISBNTrainer(hidden, features, latent_links, pseudo, cutoff, cutoff, epochs,
                               patience, batch_size,
                               0.005 if learning_rate is None else learning_rate, beam=beam,
                               branching=branching, seed=seed, progress=not quiet,
                               approximation=approximation, single_root=not multi_root)
    elif trainer == "eg" or trainer.startswith("loglinear") or latent:
        from arborparse.linear import eg, loglinear
        from arborparse.linear.common import ChooseC

        def make(C_value):
            if trainer == "eg":
                return eg.EGTrainer(C_value, epochs, decoder=decoder,
                                    train_decoder=train_decoder, single_root=not multi_root,
                                    hash_bits=hash_bits, progress=not quiet,
                                    learning_rate=learning_rate)
            optimizer = "sgd" if trainer in ("loglinear-sgd", "latent") else "lbfgs"
            return loglinear.LogLinearTrainer(
                optimizer, C_value, epochs, 0.1 if learning_rate is None else learning_rate,
                decoder, train_decoder, not multi_root, seed, hash_bits, progress=not quiet,
                clusters=(clusters or 2) if latent else 1,
                init_noise=init_noise if latent else 0.0, squeeze=squeeze)

        family = eg if trainer == "eg" else loglinear
        if C == "auto" or (C is None and dev):
            trainer_ = ChooseC(make, family.GRID, progress=not quiet)
        else:
            if C is None:
                C = family.DEFAULT_C
                if not quiet:
                    click.echo(f"no --dev: C = {C:g}, the default (give --dev to choose it)",
                               err=True)
            trainer_ = make(C)
    else:
        from arborparse.linear.online import OnlineTrainer

        if C == "auto":
            raise click.UsageError(f"-C auto does not apply to --trainer {trainer}")
        trainer_ = OnlineTrainer(trainer, epochs, decoder, train_decoder, not multi_root, seed,
                                 hash_bits, exact_features, k,
                                 float("inf") if C is None else C, progress=not quiet)
    if scheduler is not None:
        fitted = _fit_on_cluster(trainer_, scheduler, workers, shards, train, dev, save_best)
    else:
        fitted = trainer_.fit(train, dev, save_best=save_best)
    if not quiet and os.environ.get("RANK", "0") == "0":  # torchrun: process 0 saved it
        click.echo(f"saved {model_path} (epoch {fitted.best_epoch_})", err=True)


def _fit_on_cluster(trainer, scheduler, workers, shards, train, dev, save_best):
    """`trainer` (online or log-linear L-BFGS) fitted on a Dask cluster, its data in
    `shards` (default: one per worker)."""
    from arborparse.distributed import connect
    from arborparse.distributed.training import MixingTrainer, ShardedLogLinearTrainer
    from arborparse.linear.loglinear import LogLinearTrainer

    with connect(scheduler, workers) as client:
        shards = shards or len(client.scheduler_info()["workers"])
        if isinstance(trainer, LogLinearTrainer):
            settings = {k: getattr(trainer, k) for k in (
                "C", "epochs", "learning_rate", "decoder", "train_decoder", "single_root",
                "seed", "hash_bits", "progress")}
            sharded = ShardedLogLinearTrainer(shards, client, **settings)
        else:
            sharded = MixingTrainer(trainer, shards, client)
        return sharded.fit(train, dev, save_best=save_best)


def _train_front_end(parts, train, dev, seed, quiet, epochs=(10, 10)):
    """A pipeline of the tokenizer, tagger and lemmatizer among `parts`, trained on the
    gold annotation, the tagger and lemmatizer for `epochs`, each keeping its best epoch
    on `dev`."""
    from arborparse.pipeline import Pipeline
    from arborparse.text.lemmatizer import Lemmatizer
    from arborparse.text.tagger import Tagger
    from arborparse.text.tokenizer import Tokenizer

    return Pipeline(
        Tagger(epochs[0], seed=seed, progress=not quiet).fit(train, dev)
        if "tagger" in parts else None,
        Lemmatizer(epochs[1], seed=seed).fit(train, dev) if "lemmatizer" in parts else None,
        tokenizer=Tokenizer(seed=seed, progress=not quiet).fit(train, dev)
        if "tokenizer" in parts else None)


def _jackknife(parts, front, train, folds, seed, quiet):
    """The training sentences with tags (and lemmas) predicted by models that did not see
    them (`arborparse.text.jackknife`), each trained for as many epochs as the `front`
    end kept."""
    from arborparse.text.jackknife import jackknife

    epochs = tuple(1 if c is None else c.best_epoch_ for c in (front.tagger, front.lemmatizer))
    taggers = [p for p in parts if p in ("tagger", "lemmatizer")]

    def annotate(others, fold):
        return _train_front_end(taggers, others, None, seed, True, epochs) \
            .parse(fold, retag=True)

    return jackknife(train, folds, annotate, progress=not quiet)


@cli.command("parse")
@click.argument("input", type=click.Path(allow_dash=True), default="-")
@click.option("--model", "model_path", required=True, type=click.Path(),
              help="The model file (any kind: arborparse train writes them).")
@click.option("-o", "--output", type=click.Path(allow_dash=True), default="-",
              help="Where to write the parsed file (default: stdout).")
@click.option("--decoder", type=click.Choice(["mst", "eisner"]),
              help="First-order models: override the model's decoder.")
@click.option("--decode", "decode_as", type=click.Choice(["map", "mbr", "max-z"]),
              help="First-order models: map (default): the best tree; mbr: the tree with the "
                   "most expected correct attachments under the model's tree distribution; "
                   "max-z: the best tree with each arc scored by its best hidden cluster "
                   "(models with clusters).")
@click.option("--marginals", is_flag=True,
              help="First-order models: add HeadProb and LabelProb of each word's arc to MISC.")
@click.option("--retag", is_flag=True,
              help="Models with a tagger: tag (and lemmatize) every sentence (default: only "
                   "those with words without UPOS).")
@click.option("--keep-tags", is_flag=True,
              help="Models with a tagger: trust the input's tags, tag nothing.")
@click.option("--beam", type=click.IntRange(1),
              help="ISBN models: beam width (default: the model's).")
@click.option("--branching", type=click.IntRange(1),
              help="ISBN models: labels expanded per arc (default: the model's).")
@click.option("--input-format", "--format", "fmt", default="auto", show_default=True,
              type=click.Choice(["auto", "conllu", "conllx", "text", "tokenized"]),
              help="text: raw text, paragraphs separated by blank lines (models with a "
                   "tokenizer); tokenized: one sentence per line, tokens separated by spaces; "
                   "auto: CoNLL-U or CoNLL-X by the suffix .conllu or .conllx, then by "
                   "content.")
@click.option("--scheduler",
              help="Parse on a Dask cluster: 'local' (--workers processes on this machine) "
                   "or a running scheduler's address, tcp://HOST:PORT. INPUT may then be a "
                   "folder or a glob of files (plain, .gz, .xz), and -o is a folder for "
                   "several files; the output is the same as a serial run's.")
@click.option("--workers", type=click.IntRange(1),
              help="--scheduler local: worker processes (default: one per core).")
@click.option("--partition-kb", type=click.IntRange(1), default=256, show_default=True,
              help="--scheduler: the input's partitions, cut at blank lines after this size.")
@click.option("--resume", is_flag=True,
              help="--scheduler: continue an interrupted job, skipping its finished "
                   "partitions (kept in OUTPUT.parts).")
@FORCE
@click.pass_context
def parse_cmd(ctx, input, model_path, output, fmt, scheduler, workers, partition_kb, resume,
              force, **options):
    """Parse INPUT (default stdin): raw text, tokenized text, CoNLL-U or CoNLL-X, to
    CoNLL-U (CoNLL-X for CoNLL-X input). Of CoNLL input only HEAD and DEPREL change (and
    the tags where the model tags, MISC with --marginals). The options the model does not
    take are refused."""
    from arborparse.options import OptionError, check_options
    from arborparse.pipeline import iter_parse_source, load

    if scheduler is None:
        _refuse(ctx, ["workers", "partition_kb", "resume"], "a serial parse (no --scheduler)")
    elif input == "-" or output == "-":
        raise click.UsageError("--scheduler: give INPUT and -o OUTPUT (files or folders), not "
                               "stdin or stdout")
    else:
        _refuse(ctx, ["workers"] if scheduler != "local" else [], f"--scheduler {scheduler}")
    if scheduler is None or os.path.isfile(input):
        _output(output, [input, model_path], force=force)
    parser = load(model_path)
    given = {name: options[name] for name in _given(ctx, options)}
    try:  # every parser checks its options before it reads a sentence
        if scheduler is not None:
            check_options(parser, given)
            _parse_on_cluster(input, model_path, output, fmt, scheduler, workers,
                              partition_kb, resume, force, given)
            return
        parsed = iter_parse_source(parser, input, fmt, **given)
    except OptionError as err:
        takes = ", ".join(_flag(ctx, name) for name in err.takes)
        raise click.UsageError(f"{_flag(ctx, err.name, err.value)} {err.reason}"
                               + (f" (it takes {takes})" if takes else "")) from None
    write_conllu(_interruptible(parsed), output)


def _parse_on_cluster(input, model_path, output, fmt, scheduler, workers, partition_kb,
                      resume, force, options):
    from arborparse.distributed import connect
    from arborparse.distributed.corpus import parse_corpus

    with connect(scheduler, workers) as client:
        try:
            errors = parse_corpus(input, model_path, output, client, fmt, partition_kb * 1024,
                                  resume, force, **options)
        except KeyboardInterrupt:
            click.echo(f"Interrupted: the finished partitions are kept in {output}.parts; "
                       "continue with --resume", err=True)
            sys.exit(130)
    for error in errors:
        click.echo(f"Error: {error}", err=True)
    if errors:
        sys.exit(1)


def _flag(ctx, name: str, value=True) -> str:
    """How the parameter `name` set to `value` reads on the command line."""
    param = next(p for p in ctx.command.params if p.name == name)
    flag = max(param.opts, key=len)
    return flag if isinstance(value, bool) else f"{flag} {value}"


@cli.command("projectivize")
@click.argument("input", type=click.Path(allow_dash=True))
@click.argument("output", type=click.Path(allow_dash=True))
@click.option("--multi-root", is_flag=True,
              help="Allow several words attached to the root (default: exactly one).")
@click.option("--pseudo", type=click.Choice(["head", "path", "head+path"]),
              help="Pseudo-projective: lift non-projective arcs and encode the lifts in the "
                   "labels (Nivre & Nilsson 2005), undone by `deprojectivize`.")
@FORMAT
@FORCE
def projectivize_cmd(input, output, multi_root, pseudo, fmt, force):
    """Make each tree of INPUT projective; write OUTPUT. By default, the projective tree
    that keeps the most of its arcs (Eisner's algorithm on +1/-1 scores)."""
    from arborparse.io import check_tree
    from arborparse.transforms import lift, projectivize

    _output(output, [input], force=force)
    sentences = read_conllu(input, fmt)
    out, changed = [], 0
    for s in sentences:
        check_tree(s, not multi_root)
        p = lift(s, pseudo) if pseudo else projectivize(s, not multi_root)
        changed += p.deprels != s.deprels or bool((p.heads != s.heads).any())
        out.append(p)
    write_conllu(out, output)
    click.echo(f"{changed} of {len(sentences)} sentences projectivized", err=True)


@cli.command("deprojectivize")
@click.argument("input", type=click.Path(allow_dash=True))
@click.argument("output", type=click.Path(allow_dash=True))
@click.option("--pseudo", type=click.Choice(["head", "path", "head+path"]), required=True,
              help="The encoding the lifts were made with.")
@FORMAT
@FORCE
def deprojectivize_cmd(input, output, pseudo, fmt, force):
    """Undo pseudo-projective lifts encoded in the labels of INPUT (e.g. a parser's output
    trained on `projectivize --pseudo` data): move lifted words back and strip the marks."""
    from arborparse.transforms import lower

    _output(output, [input], force=force)
    write_conllu((lower(s, pseudo) for s in iter_conllu(input, fmt)), output)


@cli.command("render")
@click.argument("input", type=click.Path(allow_dash=True))
@click.option("-o", "--output", required=True, type=click.Path(allow_dash=True),
              help="OUT.svg (one sentence's tree) or OUT.html (every sentence, one page).")
@click.option("--sentence", type=click.IntRange(1), default=1, show_default=True,
              help="SVG: which sentence of INPUT (1 is the first).")
@click.option("--threshold", type=click.FloatRange(0, 1), default=0.5, show_default=True,
              help="With marginals (parse --marginals): arcs below this probability are "
                   "marked.")
@FORMAT
@FORCE
def render_cmd(input, output, sentence, threshold, fmt, force):
    """Draw the trees of INPUT (CoNLL-U or CoNLL-X with HEAD and DEPREL): one as SVG, or
    all as an HTML page with navigation. Arcs with HeadProb in MISC show how sure the
    parser was."""
    from arborparse.io.atomic import atomic_open
    from arborparse.render import page, svg

    suffix = os.path.splitext(str(output))[1].lower()
    if suffix not in (".svg", ".html", ".htm"):
        raise click.UsageError("-o: name an .svg or an .html file")
    _output(output, [input], force=force)
    sentences = read_conllu(input, fmt)
    for s in sentences:
        if not s.has_tree:
            raise ArborparseError(f"{s.path}:{s.line}: the sentence has no tree (HEAD is "
                                  "missing): parse it first")
    if suffix == ".svg":
        if sentence > len(sentences):
            raise ArborparseError(f"{input}: --sentence {sentence}, the file has "
                                  f"{len(sentences)}")
        text = svg(sentences[sentence - 1], threshold)
    else:
        text = page(sentences, os.path.basename(str(input)), threshold)
    if str(output) == "-":
        click.echo(text, nl=False)
        return
    with atomic_open(output, "w", encoding="utf-8", newline="\n") as handle:
        handle.write(text)


SERVICE_LIMITS = (("--max-body-kb", 256, "Larger request bodies are refused (413)."),
                  ("--max-words", 5000, "Words per request."),
                  ("--max-sentence-words", 250, "Words per sentence."))


def _limits(command):
    """The service's limits as options."""
    for flag, default, text in reversed(SERVICE_LIMITS):
        command = click.option(flag, type=click.IntRange(1), default=default,
                               show_default=True, help=text)(command)
    return command


@cli.command("serve")
@click.option("--model", "model_path", required=True, type=click.Path(),
              help="The model file (loaded once).")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="The address to listen on (0.0.0.0: every interface).")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True,
              help="The port to listen on.")
@_limits
def serve_cmd(model_path, host, port, max_body_kb, max_words, max_sentence_words):
    """Serve the model over HTTP: POST /parse (raw text, tokenized text or CoNLL-U in,
    CoNLL-U or JSON out, marginals and k-best trees on request), GET / (a web page that
    draws the trees), GET /openapi.json (the schema)."""
    try:
        import uvicorn

        from arborparse.service.app import Limits, create_app
    except ImportError:
        raise ArborparseError("the service needs starlette and uvicorn: pip install "
                              "'arborparse[service]'") from None
    from arborparse.pipeline import load

    app = create_app(load(model_path), Limits(max_body_kb * 1024, max_words,
                                              max_sentence_words))
    click.echo(f"serving {model_path} on http://{host}:{port}/ (Ctrl-C stops)", err=True)
    uvicorn.run(app, host=host, port=port, log_level="warning")


def _terminate(signum, frame):
    raise KeyboardInterrupt  # SIGTERM: clean up and stop as Ctrl-C does


def main():
    signal.signal(signal.SIGTERM, _terminate)
    warnings.showwarning = _warning
    cli(prog_name="arborparse")
