"""The ``arborparse`` command: a thin layer over the Python API.

Exit status: 0 on success (a closed output pipe, as in ``parse | head``, included), 1 on a
user error (one line on stderr), 2 on a usage error, 130 when interrupted (Ctrl-C or
SIGTERM; a training run says which epoch it kept).

Outputs are checked before any work: an output that is also an input of the command is
refused, and so is replacing a file that is not a model of ours with a model or a model
with anything else, unless ``--force``.
"""

from __future__ import annotations

import gc
import json
import math
import os
import queue
import re
import signal
import socket
import sys
import threading
import time
import warnings

import click

from arborparse import __version__, registry
from arborparse.baselines import BASELINES
from arborparse.errors import ArborparseError, EncodingError, NotTreebankError, \
    TreebankFormatError, counted
from arborparse.eval import LENGTH_BINS, TAG_MEASURES, WordsDiffer, compare, evaluate
from arborparse.io import iter_conllu, read_conllu, write_conllu
from arborparse.io.conllu import FORMATS as CONLL_FORMATS
from arborparse.io.conllu import check_encoding
from arborparse.io.plain import FORMATS as PLAIN_FORMATS
from arborparse.io.plain import text_lines
from arborparse.io.model_files import check_output, check_whole
from arborparse.options import DIRECTORY, FILE, Capabilities
from arborparse.service import SHORT, TIMEOUT
from arborparse.training import TrainingInterrupted, interrupt_of

FORMAT = click.option("--format", "fmt", type=click.Choice(["auto", "conllu", "conllx"]),
                      default="auto", show_default=True,
                      help="Input format; auto goes by the suffix .conllu or .conllx, then by "
                           "content.")
FORCE = click.option("--force", is_flag=True,
                     help="Replace the output even if it is a model file (or, for a model, a "
                          "file that is not one).")


class _FiniteRange(click.FloatRange):
    """A range of numbers that refuses NaN (which click's ranges let through) and the
    infinities."""

    def convert(self, value, param, ctx):
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return number


class _Group(click.Group):
    """Turns every ArborparseError and I/O error into one line on stderr and exit status 1;
    a closed output pipe ends quietly."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except TrainingInterrupted as err:
            click.echo(f"Interrupted: {err}", err=True)
            sys.exit(130)
        except EncodingError as err:  # from a command without --encoding (parse adds it)
            raise click.ClickException(
                f"{err} (this command reads {err.encoding}: convert the file, e.g. iconv -f "
                f"{err.looks_like or 'ITS-ENCODING'} -t {err.encoding})") from None
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
            interrupt = interrupt_of(err)  # Ctrl-C, also when compiled code wrapped it
            if interrupt is None:
                raise
            click.echo(f"Interrupted: {interrupt}" if str(interrupt) else "Interrupted",
                       err=True)
            # the outputs are cleaned up by now; end without the interpreter's shutdown,
            # which would wait on (or, inside torch, abort in) the abandoned parsing thread
            _end_now(130)


def _end_now(status: int) -> None:
    """End the process with `status` at once, without the interpreter's shutdown, the
    standard streams flushed first (the outputs are written and closed by then: a failure
    to write has been said already)."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(status)


# set by a serial parse once its output is written and closed: the command then ends without
# the interpreter's shutdown (`main`), which takes about 0.2 CPU s after a parse, most of it
# freeing what numba built (measured: 0.2 s after one compiled kernel's use, 0.01 s after
# importing NumPy alone; English-EWT's test set parses in about 2.5 s)
_done = threading.Event()


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
    """A warning in one line on stderr, above any progress bar there."""
    from tqdm import tqdm

    tqdm.write(f"Warning: {message}", file=sys.stderr)


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
    for path, sentences in ((gold, gold_s), (pred, pred_s)):
        if not sentences:
            raise ArborparseError(f"{path}: no sentences")
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
@click.option("--samples", type=click.IntRange(100, 10_000_000), default=10000,
              show_default=True, help="Permutations for the paired permutation test.")
@click.option("--seed", type=int, default=0, show_default=True,
              help="Seed of the permutations.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@FORMAT
def compare_cmd(gold, a, b, metric, samples, seed, as_json, fmt):
    """Is system A better than system B? Sign test and paired permutation test."""
    gold_s = read_conllu(gold, fmt)
    try:
        r = compare(gold_s, read_conllu(a, fmt), read_conllu(b, fmt), metric, samples, seed)
    except WordsDiffer as err:
        raise ArborparseError(f"{err}: compare pairs the trees word by word, so both systems "
                              "need the gold file's words (a system parsed from raw text has "
                              "its own: evaluate aligns those)") from None
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
              help="left: every word attaches to its left neighbour (the first to the "
                   "root); right: to its right neighbour (the last to the root), the floor "
                   "of a head-final language.")
@FORMAT
@FORCE
def baseline_cmd(input, output, kind, fmt, force):
    """Parse INPUT with a trivial baseline (a floor for every evaluation)."""
    check_output(output, [input], force=force)
    parse = BASELINES[kind]
    sentences = read_conllu(input, fmt)
    write_conllu([parse(s) for s in sentences], output)
    if not sentences:
        _warn_empty(input, f"--format {fmt}")


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


def _tables() -> dict:
    """Every family's option table, by family name."""
    return {name: registry.options_table(name) for name in registry.FAMILIES}


def _click_type(spec):
    if spec.auto:
        return _CValue()
    if spec.choices is not None:
        return click.Choice(list(spec.choices))
    if spec.type is int:
        return click.IntRange(spec.low, spec.high)
    if spec.type is float:
        return click.FloatRange(spec.low, spec.high, min_open=isinstance(spec.low, float))
    if spec.type == FILE:
        return click.Path(exists=True, dir_okay=False)
    if spec.type == DIRECTORY:
        return click.Path(exists=True, file_okay=False)
    return str


def _spec_flags(spec) -> list[str]:
    flags = list(spec.flags) or [spec.flag]
    if spec.type is bool and spec.default is True:
        flags = [f"{spec.flag}/--no-{spec.flag[2:]}"]
    return flags


def _family_options(command):
    """The options of every family's table as click options, each once (their defaults
    are the tables': an option counts only when given on the command line)."""
    specs = {}
    for table in _tables().values():
        for spec in table.specs():
            specs.setdefault(spec.name, spec)
    for spec in reversed(list(specs.values())):
        kind = {"is_flag": True} if spec.type is bool else {"type": _click_type(spec)}
        command = click.option(*_spec_flags(spec), spec.name, default=None, help=spec.help,
                               **kind)(command)
    return command


def _metavar(spec) -> str:
    if spec.type is bool:
        return ""
    if spec.auto:
        return " C|auto"
    if spec.choices is not None:
        return f" [{'|'.join(spec.choices)}]"
    return " " + {int: "INTEGER", float: "FLOAT", str: "TEXT"}.get(spec.type, "PATH")


def _default_text(spec) -> str:
    if spec.default is None:
        return ""
    value = spec.default
    if spec.type is bool:
        return "on" if value else ""
    return str(value)


class _TrainCommand(click.Command):
    """``train --help``: the general options, then every family's options in a section of
    their own, each with the family's default."""

    def format_options(self, ctx, formatter):
        names = {spec.name for table in _tables().values() for spec in table.specs()}
        general = [p.get_help_record(ctx) for p in self.get_params(ctx)
                   if p.name not in names]
        with formatter.section("Options"):
            formatter.write_dl([r for r in general if r])
        for family, table in _tables().items():
            rows = []
            sized = {name for n in (10, 1000, 100_000) for name in table.by_size(n, {})}
            for spec in table.specs():
                extra = []
                if spec.name in sized:
                    extra.append("default: by the training data's size (as said)")
                elif _default_text(spec):
                    extra.append(f"default: {_default_text(spec)}")
                if spec.trainers is not None:
                    extra.append(f"trainers: {', '.join(spec.trainers)}")
                text = spec.help + (f"  [{'; '.join(extra)}]" if extra else "")
                rows.append((", ".join(_spec_flags(spec)) + _metavar(spec), text))
            with formatter.section(f"{family} options (--model-type {family})"):
                formatter.write_dl(rows)


@cli.command("train", cls=_TrainCommand)
@click.option("--model-type", "model_type",
              type=click.Choice([*registry.FAMILIES, *registry.ALIASES]), default="linear",
              show_default=True,
              help="The parser's family: linear (the graph-based parser; first-order is its "
                   "older name), isbn (the generative Incremental Sigmoid Belief Network "
                   "parser, Titov & Henderson 2007), neural (a BiLSTM with biaffine scores "
                   "trained with a tree objective, which also tags and lemmatizes) or "
                   "ensemble (a linear pipeline and a neural parser, each with its family's "
                   "defaults, combined as arborparse combine does; needs --dev; its members "
                   "are saved as MODEL.linear and MODEL.neural as they train, and --resume "
                   "goes on from them).")
@click.option("--train", "train_path", required=True, type=click.Path(),
              help="Training treebank (CoNLL-U or CoNLL-X).")
@click.option("--dev", "dev_path", type=click.Path(),
              help="Development treebank (optional): the epoch with the best LAS on it is "
                   "kept; without it, the last epoch.")
@click.option("--model", "model_path", required=True, type=click.Path(),
              help="Where to write the model file; the best epoch is saved there as soon as "
                   "it is best, so an interrupted run keeps it.")
@click.option("--components", callback=lambda ctx, param, value: _components(value),
              help="What the model file holds, comma-separated: tokenizer (sentences and "
                   "tokens of raw text), tagger (UPOS, XPOS, FEATS), lemmatizer, parser. With "
                   "a tagger the parser trains on jackknifed tags. Default: all four; neural: "
                   "tokenizer,parser (its parser tags and lemmatizes); ensemble: its linear "
                   "pipeline's (its neural parser is a parser alone). The family's options "
                   "below (--epochs too) are the parser's; the tokenizer, the tagger and "
                   "the lemmatizer train 10 epochs each, keeping their best on --dev.")
@click.option("--folds", type=click.IntRange(2),
              help="Jackknifing: the parser's training tags come from taggers trained on the "
                   "other folds (default: 10, or 5 from 3,000 training sentences on).")
@click.option("--lang", help="The language the model records (default: the UD file name's "
                             "prefix, such as en_ewt).")
@click.option("--resume", is_flag=True,
              help="Continue the interrupted training of --model from its checkpoint "
                   "(MODEL.checkpoint, written after every epoch), with the same options; "
                   "the front end is taken from the model file and the jackknifed tags "
                   "from MODEL.tags, not trained again. Interrupted before the parser's "
                   "first model was saved: from the front end of MODEL.front (and its "
                   "tags), the parser from its start, its options free to change.")
@click.option("--quiet", is_flag=True, help="No progress bar or epoch lines.")
@FORMAT
@FORCE
@_family_options
@click.pass_context
def train_cmd(ctx, model_type, train_path, dev_path, model_path, components, folds, lang,
              resume, quiet, fmt, force, **options):
    """Train a pipeline (a parser, and the tokenizer, tagger and lemmatizer in front of it)
    and save the best epoch's model: `arborparse.train` with these options."""
    import arborparse

    table = registry.options_table(model_type)
    given = {name: options[name] for name in _given(ctx, options)}
    _refuse(ctx, sorted(set(given) - set(table.names())), f"--model-type {model_type}")
    trainer = given.get("trainer", getattr(table, "trainer", None))
    _refuse(ctx, [s.name for s in table.specs() if s.trainers is not None and
                  trainer not in s.trainers], f"--trainer {trainer}")
    try:  # options that cannot go together are a usage error too (status 2), said at once
        table.of(given)
    except ArborparseError as err:
        raise click.UsageError(_flagged(ctx, str(err))) from None
    if dev_path is None and model_type == "ensemble":
        raise click.UsageError("--model-type ensemble needs --dev: its members' probabilities "
                               "are fitted on it, and the share of each member is chosen on it")
    if dev_path is None and given.get("extend") not in (None, 0):
        raise click.UsageError(f"{_flag(ctx, 'extend', given['extend'])} goes on past the "
                               "epochs only with dev data, whose LAS says when to stop: give "
                               "--dev, or leave out --extend")
    try:
        arborparse.train(train_path, dev_path, family=model_type, components=components,
                               progress=not quiet, path=model_path, resume=resume,
                               force=force, lang=lang, folds=folds, fmt=fmt, **given)
    except (TrainingInterrupted, EncodingError):  # the latter with its advice (`_Group`)
        raise
    except ArborparseError as err:  # its options named as this command's flags
        raise ArborparseError(_flagged(ctx, str(err))) from None


def _components(value):
    """--components, its names checked (an unknown one is a usage error, status 2)."""
    if value is not None:
        from arborparse.trainer import COMPONENTS, component_names

        try:
            component_names(value, COMPONENTS)
        except ArborparseError as err:
            raise click.BadParameter(str(err).removeprefix("components: ")) from None
    return value


def _chosen(value) -> str:
    """A value `chosen_on_dev` holds, as `info` shows it."""
    if isinstance(value, list):  # a front end's epochs (tagger, lemmatizer)
        return "/".join(map(_chosen, value))
    return "none" if value is None else str(value) if isinstance(value, (bool, str)) else \
        format(value, "g")


@cli.command("combine")
@click.argument("first", type=click.Path())
@click.argument("second", type=click.Path())
@click.option("--dev", "dev_path", type=click.Path(exists=True, dir_okay=False),
              help="Development treebank the weight is chosen on (best LAS over 0, 0.1, ..., "
                   "1), its tags predicted as parsing predicts them.")
@click.option("--weight", type=_FiniteRange(0, 1),
              help="The first parser's share of the mixture, instead of choosing it on --dev "
                   "(with --dev too, dev is scored at this weight).")
@click.option("-o", "--model", "--output", "model_path", required=True, type=click.Path(),
              help="Where to write the combined model file.")
@FORMAT
@FORCE
def combine_cmd(first, second, dev_path, weight, model_path, fmt, force):
    """Make two trained models (FIRST and SECOND: linear or neural parsers, or pipelines
    holding one) one model whose parser mixes their head and label probabilities, the
    first's share chosen on --dev: the first model's tokenizer, tagger and lemmatizer in
    front of an ensemble of both parsers (`arborparse.combine`). The ensemble decodes with
    FIRST's decoder unless parse --decoder says otherwise."""
    import arborparse

    if weight is None and dev_path is None:
        raise click.UsageError("give --dev to choose the weight on, or --weight")

    def report(w, scores):
        click.echo(f"weight {w:.1f}: dev UAS {scores['UAS']:.2f}  LAS {scores['LAS']:.2f}",
                   err=True)
    def combined():  # in a thread of its own (`_interruptible`): Ctrl-C stops it at once,
        # even while compiled code reads a long sentence for minutes
        yield arborparse.combine(first, second, dev_path, weight=weight, fmt=fmt,
                                 report=report, progress=True, path=model_path, force=force)
    existed = os.path.exists(model_path)
    try:
        (model,) = _interruptible(combined())
    except (KeyboardInterrupt, Exception) as err:  # Ctrl-C, maybe wrapped by compiled code
        if interrupt_of(err) is None:
            raise
        kept = " (the file there is kept as it was)" if existed else ""
        raise KeyboardInterrupt(f"combining stopped; {model_path} was not written{kept}") \
            from None
    members = model.info["members"]
    click.echo(f"{model_path}: {members['first']['family']} {members['first']['weight']:g} + "
               f"{members['second']['family']} {members['second']['weight']:g}" + (
                   f" (chosen on dev: UAS {model.info['scores']['UAS']:.2f}, LAS "
                   f"{model.info['scores']['LAS']:.2f})" if weight is None else ""), err=True)


def _options_shown(family, options: dict) -> dict:
    """A model's options as `info` shows them: those its trainer does not take left out (a
    linear model's C of eg, say, when MIRA trained it), None told as the family's default
    (as the option's help says it, where it says it in a few words) or, for a file or
    folder, as none (``--json`` gives every option as stored)."""
    try:
        specs = {spec.name: spec for spec in registry.options_table(family).specs()}
    except (ArborparseError, KeyError, TypeError):  # a family this version does not know
        specs = {}
    trainer = options.get("trainer")

    def unset(spec) -> str:  # a path not given is none; else the help's "(default: X)"
        if spec is not None and spec.type in (FILE, DIRECTORY):
            return "none"
        said = re.search(r"\(default: ([^;()]+)\)", spec.help) if spec is not None else None
        return f"default ({said.group(1)})" if said else "default"
    return {name: unset(specs.get(name)) if value is None else value
            for name, value in options.items()
            if name not in specs or not specs[name].trainers or trainer is None or
            trainer in specs[name].trainers}


@cli.command("info")
@click.argument("model", type=click.Path())
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def info_cmd(model, as_json):
    """What the model file MODEL says of itself: version, date, family, components and the
    version of each one's format in the file, options, the data it was trained on,
    language, dev scores, training time, warnings, the decoder the parser parses with
    (linear and neural), and a linear parser's reach and tag reach (the longest arcs it
    scores), and the temperatures of a linear or neural parser's marginals; a file that
    `parse` would refuse (damaged anywhere, of a newer version, its arrays not what its
    header says) is refused."""
    from arborparse.pipeline import MEMBER_SCORES, info, load

    if not os.path.exists(model) and os.path.isfile(f"{model}.front"):
        raise ArborparseError(f"{model}: no such model file; {model}.front holds the front end "
                              "of an unfinished training: unless it is still running, "
                              "arborparse train with the same options and --resume continues "
                              "it")
    found = info(model)
    check_whole(model)
    load(model)  # what the header alone does not show: the arrays, the versions
    if as_json:
        click.echo(json.dumps(found, indent=1))
        return
    linear = found["family"] == "linear" and "parser" in (found["components"] or [])
    for key, value in found.items():
        if key == "reach":
            if linear:
                click.echo(f"{key:<20}" + (
                    "none (no arc left out for its length)" if value is None else
                    f"{value[0]} words before its word, {value[1]} after (longer arcs not "
                    "scored)"))
        elif key == "tag_reach":
            dropped = (found.get("chosen_on_dev") or {}).get("tag_reach") is False
            if linear:
                click.echo(f"{key:<20}" + (
                    "none (dropped in training: dev LAS was higher without it)"
                    if value is None and dropped else "none" if value is None else
                    f"{value['tags']} tags, {value['pairs']} pairs of them seen as head and "
                    "word (arcs farther than their pair's longest not scored)"))
        elif key == "temperatures":
            if isinstance(value, dict):
                labeler = (f", the second-stage labeler's labels {value['labeler']:.4g}"
                           if "labeler" in value else "")
                click.echo(f"{key:<20}heads {value['heads']:.4g}, labels {value['labels']:.4g}"
                           f"{labeler} (of HeadProb and LabelProb, parse --marginals" + (
                               "; not fitted on dev: the scores as trained, calibrated "
                               "only where the model was trained as a distribution)"
                               if value["heads"] == value["labels"] == 1.0 and
                               "labeler" not in value else ")"))
        elif key == "decoder":
            if value is not None:
                chosen = "decoder" in (found.get("chosen_on_dev") or {})
                click.echo(f"{key:<20}{value}" + (" (chosen on dev)" if chosen else ""))
        elif key == "versions" and isinstance(value, dict):
            click.echo(f"{key:<20}" + ", ".join(f"{k} {v}" for k, v in value.items()))
        elif key in ("scores", "chosen_on_dev") and value is not None:
            shown = "  ".join(f"{k} {v:.2f}" if key == "scores" else f"{k} {_chosen(v)}"
                              for k, v in value.items()) or \
                ("none (no dev data)" if key == "scores" else "none")
            click.echo(f"{key:<20}{shown}")
        elif key == "options" and isinstance(value, dict):
            click.echo(f"{key}:")
            for name, item in _options_shown(found["family"], value).items():
                click.echo(f"  {name:<18}{item}")
        elif isinstance(value, dict):
            click.echo(f"{key}:")
            files = {}  # sha256 -> the first entry naming that file (data)
            for name, item in value.items():
                sha = item.get("sha256") if isinstance(item, dict) else None
                if sha is not None and sha in files:
                    item = f"the same file as {files[sha]}"
                elif isinstance(item, dict):  # data given as sentences has no file
                    files.setdefault(sha, name)
                    item = "  ".join(["given in memory"] * ("file" in item and not item["file"])
                                     + [f"{k} {v:.2f}" if k in MEMBER_SCORES else f"{k} {v}"
                                        for k, v in item.items() if v is not None])
                click.echo(f"  {name:<18}{'none' if item is None else item}")
        elif key == "warnings" and value:
            click.echo(f"{key}:")
            for warning in value:
                click.echo(f"  {warning}")
        elif value is not None:
            shown = (", ".join(value) or "none") if isinstance(value, list) else value
            click.echo(f"{key:<20}{shown}")
    lacking = [key for key, value in found.items()
               if value is None and key not in ("tag_reach", "decoder", "temperatures",
                                                "members") and
               (key != "reach" or linear)]
    if lacking:
        click.echo(f"this file lacks: {', '.join(lacking)} (written by an earlier version, "
                   "or not by arborparse train)")
    checkpoint = f"{model}.checkpoint"
    if os.path.exists(checkpoint):
        from arborparse.io import model_files

        try:
            after = f", epoch {int(model_files.header(checkpoint)['loop']['epoch'])}"
        except (ArborparseError, KeyError, TypeError, ValueError):
            after = ""
        click.echo(f"unfinished: {checkpoint} holds an unfinished training (its last finished "
                   f"epoch{after}); unless it is still running, arborparse train with the "
                   "same options and --resume continues it")


def _takers(name: str, models: str = "models") -> str:
    """Which families' models take the parse option `name`, as help text opens, e.g.
    "For linear and neural models:" (from the tables' `parses`; a tagger component tags)."""
    families = [family for family, table in _tables().items()
                if name in (table.parses | Capabilities(tags="tagger" in table.components))
                .parse_options()]
    named = families[0] if len(families) == 1 else \
        f"{', '.join(families[:-1])} and {families[-1]}"
    return f"For {named} {models}:"


def _encoding(ctx, param, name: str) -> str:
    """`name` if Python knows the encoding, else a usage error."""
    try:
        return check_encoding(name)
    except ArborparseError as err:
        raise click.BadParameter(str(err)) from None


@cli.command("parse")
@click.argument("input", type=click.Path(allow_dash=True), default="-")
@click.option("--model", "model_path", required=True, type=click.Path(),
              help="The model file (any kind: arborparse train writes them).")
@click.option("-o", "--output", type=click.Path(allow_dash=True), default="-",
              help="Where to write the parsed file (default: stdout).")
@click.option("--decoder", type=click.Choice(["mst", "eisner"]),
              help=f"{_takers('decoder')} override the model's decoder.")
@click.option("--decode", "--decode-as", "decode_as",
              type=click.Choice(["map", "mbr", "max-z"]),
              help=f"{_takers('decode_as')} map (the default but for neural crf2o "
                   "models, whose default is mbr): the best tree; mbr: the tree "
                   "with the most expected correct attachments under the model's tree "
                   "distribution; max-z: the best tree with each arc scored by its best hidden "
                   "cluster (models with clusters).")
@click.option("--marginals", is_flag=True,
              help=f"{_takers('marginals')} add HeadProb and LabelProb of each word's arc to "
                   "MISC (an order-2 linear model's are over projective trees: an arc of the "
                   "mst decoder's that crosses another may get HeadProb 0).")
@click.option("--retag", is_flag=True,
              help=f"{_takers('retag', 'models with a tagger or lemmatizer')} tag (and "
                   "lemmatize) every sentence (default: only those with words without UPOS, "
                   "or without lemma).")
@click.option("--keep-tags", is_flag=True,
              help=f"{_takers('keep_tags', 'models with a tagger or lemmatizer')} trust the "
                   "input's tags and lemmas, tag nothing.")
@click.option("--beam", type=click.IntRange(1),
              help=f"{_takers('beam')} beam width (default: the model's).")
@click.option("--branching", type=click.IntRange(1),
              help=f"{_takers('branching')} labels expanded per arc (default: the "
                   "model's).")
@click.option("--threads", type=click.IntRange(1),
              help=f"{_takers('threads')} score the arcs and labels of sentences of 64 "
                   "words or more in N threads (default 1; the same trees, sooner on several "
                   "cores; for many sentences --scheduler local puts every core to work).")
@click.option("--input-format", "--format", "fmt", default="auto", show_default=True,
              type=click.Choice([*CONLL_FORMATS, *PLAIN_FORMATS]),
              help="text: raw text, paragraphs separated by blank lines (models with a "
                   "tokenizer); lines: raw text, one sentence per line (tokenized by the "
                   "model, never split); tokenized: one sentence per line, tokens separated "
                   "by spaces (multiword tokens split into words by the model's "
                   "tokenizer); auto: CoNLL-U or CoNLL-X by the suffix .conllu or .conllx, "
                   "then by content.")
@click.option("--encoding", default="utf-8", show_default=True, callback=_encoding,
              help="The input's encoding (any name Python knows: latin-1, cp1252, utf-16, "
                   "...); the output is UTF-8.")
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
def parse_cmd(ctx, input, model_path, output, fmt, encoding, scheduler, workers, partition_kb,
              resume, force, **options):
    """Parse INPUT (default stdin): raw text (paragraphs, or one sentence per line),
    tokenized text, CoNLL-U or CoNLL-X, to CoNLL-U (CoNLL-X for CoNLL-X input). Of CoNLL
    input only HEAD and DEPREL change (and the tags where the model tags, MISC with
    --marginals, which CoNLL-X lacks); what described the old tree goes (DEPS, CoNLL-X's
    PHEAD and PDEPREL become _, MISC loses its HeadProb and LabelProb). A file parsed with
    stderr on a terminal shows a progress bar there (sentences, words/s). The options that
    name families apply to those families' models only; the others, to every model. The
    options the model does not take are refused."""
    from arborparse.options import OptionError, check_options
    from arborparse.pipeline import KIND as PIPELINE_KIND
    from arborparse.pipeline import iter_parse_source, load, offer

    if scheduler is None:
        _refuse(ctx, ["workers", "partition_kb", "resume"], "a serial parse (no --scheduler)")
        if os.path.isdir(input):
            raise ArborparseError(f"{input} is a folder: parse reads one file (or - for "
                                  "stdin); --scheduler local parses a folder's files into "
                                  "the folder -o names")
    elif input == "-" or output == "-":
        raise click.UsageError("--scheduler: give INPUT and -o OUTPUT (files or folders), not "
                               "stdin or stdout")
    else:  # a cluster reads UTF-8 (it cuts files at blank lines, as bytes); its workers
        # take the cores
        _refuse(ctx, ["encoding", "threads"] + (["workers"] if scheduler != "local" else []),
                f"--scheduler {scheduler}")
    if scheduler is None or os.path.isfile(input):
        check_output(output, [input, model_path], force=force)
    given = {name: options[name] for name in _given(ctx, options)}
    try:  # every parser checks its options before it reads a sentence
        if scheduler is not None:  # the workers load the model; here its header is read
            offered = offer(model_path)
            check_options(offered, given)
            if offered.kind == PIPELINE_KIND:
                _warn_without_parser(model_path)
            _parse_on_cluster(input, model_path, output, fmt, scheduler, workers,
                              partition_kb, resume, force, given)
            return
        nlp, kept = load(model_path), [0]
        if getattr(nlp, "parser", True) is None:
            _warn_without_parser(model_path)
        if fmt in CONLL_FORMATS and getattr(nlp, "tagger", None) is not None and not (
                given.get("retag") or given.get("keep_tags")):  # say what kept its tags
            parsed = nlp.iter_parse(_kept_tags(iter_conllu(input, fmt, encoding), kept),
                                    **given)
        else:
            parsed = iter_parse_source(nlp, input, fmt, encoding, **given)
    except OptionError as err:  # the command line's names (kbest is the API's alone)
        names = {p.name for p in ctx.command.params}
        takes = ", ".join(_flag(ctx, name) for name in err.takes if name in names)
        reason = _flagged(ctx, err.reason)
        raise click.UsageError(f"{_flag(ctx, err.name, err.value)} {reason}"
                               + (f" (it takes {takes})" if takes else "")) from None
    gc.freeze()  # the model lives while it parses: full collections need not walk its
    # objects (English-EWT's test text: 0.26 -> 0.13 CPU s of garbage collection)
    count = [0]
    try:
        if output == "-" and os.path.isfile(input):  # stdout gets each sentence as it is
            # parsed: a file is read through first (a pipe cannot be read twice), so that a
            # bad byte or line is refused before a sentence is written (text: a paragraph
            # of CoNLL is refused as it is read)
            for _ in text_lines(input, encoding) if fmt in PLAIN_FORMATS else \
                    iter_conllu(input, fmt, encoding):
                pass
        write_conllu(_counted(_interruptible(parsed), input != "-", count), output)
        _done.set()
    except ArborparseError as err:  # a bad line, or a sentence refused (too long)
        if isinstance(err, NotTreebankError):  # what parse takes besides CoNLL
            err = err.hinted("for raw text give --input-format text, for one sentence per "
                             "line --input-format lines, for one tokenized sentence per line "
                             "--input-format tokenized")
        elif isinstance(err, EncodingError):
            err = TreebankFormatError(err.path, err.line, f"{err.reason} (give --encoding "
                                      f"{err.looks_like or 'NAME'})")
        # a sentence of raw text is named by its number: its file is said before it
        named = f"{input}, " if input != "-" and str(err).startswith("sentence ") else ""
        written = f"; {_written_before(count[0])}: the output stops there" \
            if output == "-" and count[0] else ""
        raise (ArborparseError(f"{named}{err}{written}") if named or written else err
               ) from None
    except (KeyboardInterrupt, Exception) as err:  # Ctrl-C, maybe wrapped by compiled code
        if interrupt_of(err) is None:
            raise
        said = _written_before(count[0]) if output == "-" else f"{output} was not written"
        raise KeyboardInterrupt(f"parsing stopped; {said}") from None
    finally:  # a caller in the same process (the API's tests) gets its collections back
        gc.unfreeze()
    if not count[0]:
        _warn_empty(input, f"--input-format {fmt}")
    elif kept[0]:
        which = ("the sentence" if count[0] == 1 else f"all {count[0]} sentences") + \
            " kept the input's tags (every word had a UPOS)" if kept[0] == count[0] else \
            f"{kept[0]} of {count[0]} sentences kept the input's tags (every word had a UPOS), " \
            "the model tagged the others"
        click.echo(f"Note: {which}; --retag tags every sentence, --keep-tags trusts the "
                   "input's (and says nothing)", err=True)


def _kept_tags(sentences, kept: list[int]):
    """The sentences, those whose every word has a UPOS (which a pipeline does not tag
    again: `parse` says how many) counted in `kept[0]`."""
    for sentence in sentences:
        kept[0] += "_" not in sentence.upos
        yield sentence


def _warn_without_parser(model_path) -> None:
    """Say that the model has no parser: the output's trees are the input's."""
    click.echo(f"Warning: {model_path} has no parser (arborparse info names its components): "
               "it tokenizes, tags or lemmatizes, and HEAD and DEPREL are left as the input "
               "has them", err=True)


def _warn_empty(input, read_as: str) -> None:
    """Say that `input` held no sentences (read as the option `read_as` says), so the
    output is empty: not an error."""
    name = "standard input" if input == "-" else input
    click.echo(f"Warning: {name} holds no sentences (as {read_as} reads it): the output is "
               "empty", err=True)


def _counted(sentences, show: bool, count: list[int]):
    """The sentences, counted in `count[0]`, and on a progress bar on stderr (sentences,
    words/s) when `show` and stderr is a terminal (tqdm, a tenth of a second to import, only
    then)."""
    if not (show and sys.stderr.isatty()):
        for sentence in sentences:
            count[0] += 1
            yield sentence
        return
    from tqdm import tqdm

    bar = tqdm(sentences, desc="parsing", unit=" sentences", file=sys.stderr)
    words, start = 0, time.perf_counter()
    for sentence in bar:
        count[0] += 1
        words += len(sentence)
        bar.set_postfix_str(f"{words / (time.perf_counter() - start):,.0f} words/s",
                            refresh=False)
        yield sentence


def _written_before(count: int) -> str:
    """What a parse to stdout that stopped had written out by then."""
    if not count:
        return "nothing was written out"
    return "the sentence before it was parsed and written out" if count == 1 else \
        f"the {count} sentences before it were parsed and written out"


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
    if os.path.isfile(input) and os.path.getsize(output) == 0:
        _warn_empty(input, f"--input-format {fmt}")


def _flagged(ctx, text: str) -> str:
    """`text` with the command's parameters that Python spells with an underscore, and any
    named as an option (``neural option dropout=...``), written as their flags (keep_tags
    -> --keep-tags)."""
    params = {p.name for p in ctx.command.params}
    text = re.sub(r"\boption (\w+)\b",
                  lambda m: f"option {_flag(ctx, m[1])}" if m[1] in params else m[0], text)
    names = {name for name in params if "_" in name}
    # a name inside a path (a folder or file named after an option) stays as it is
    return re.sub(r"(?<![/\\.\w])\w+(?![/\\.\w])",
                  lambda m: _flag(ctx, m[0]) if m[0] in names else m[0], text)


def _flag(ctx, name: str, value=True) -> str:
    """How the parameter `name` set to `value` reads on the command line."""
    param = next(p for p in ctx.command.params if p.name == name)
    flag = next((o for o in param.opts if o.startswith("--")), param.opts[0])  # the first
    # long one
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

    check_output(output, [input], force=force)
    sentences = read_conllu(input, fmt)
    out, changed = [], 0
    for s in sentences:
        check_tree(s, not multi_root, " (--multi-root allows several)")
        p = lift(s, pseudo) if pseudo else projectivize(s, not multi_root)
        changed += p.deprels != s.deprels or bool((p.heads != s.heads).any())
        out.append(p)
    write_conllu(out, output)
    click.echo(f"{changed} of {counted(len(sentences), 'sentence')} projectivized", err=True)


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

    check_output(output, [input], force=force)
    write_conllu((lower(s, pseudo) for s in iter_conllu(input, fmt)), output)


@cli.command("render")
@click.argument("input", type=click.Path(allow_dash=True))
@click.option("-o", "--output", required=True, type=click.Path(allow_dash=True),
              help="OUT.svg (one sentence's tree) or OUT.html (every sentence, one page).")
@click.option("--sentence", type=click.IntRange(1), default=None,
              help="SVG: which sentence of INPUT (default: the first); an HTML page has "
                   "every sentence.")
@click.option("--threshold", type=_FiniteRange(0, 1), default=0.5, show_default=True,
              help="With marginals (parse --marginals): arcs below this probability are "
                   "marked.")
@FORMAT
@FORCE
def render_cmd(input, output, sentence, threshold, fmt, force):
    """Draw the trees of INPUT (CoNLL-U or CoNLL-X with HEAD and DEPREL): one as SVG, or
    all as an HTML page with navigation. Arcs with HeadProb in MISC show how sure the
    parser was."""
    from arborparse.io.atomic import atomic_open
    from arborparse.io.validate import check_tree
    from arborparse.render import page, svg

    suffix = os.path.splitext(str(output))[1].lower()
    if suffix not in (".svg", ".html", ".htm"):
        raise click.UsageError("-o: name an .svg or an .html file")
    if sentence is not None and suffix != ".svg":
        raise click.UsageError("--sentence picks the sentence of an SVG; an HTML page has "
                               "every sentence")
    check_output(output, [input], force=force)
    sentences = read_conllu(input, fmt)
    if not sentences:
        raise ArborparseError(f"{input}: no sentences")
    for s in sentences:
        if not s.has_tree:
            raise ArborparseError(f"{s.path}:{s.line}: the sentence has no tree (HEAD is "
                                  "missing): parse it first")
    if suffix == ".svg":
        sentence = sentence or 1
        if sentence > len(sentences):
            raise ArborparseError(f"{input}: --sentence {sentence}, the file has "
                                  f"{len(sentences)}")
        drawn = [sentences[sentence - 1]]
        text = svg(drawn[0], threshold)
    else:
        drawn = sentences
        text = page(sentences, os.path.basename(str(input)), threshold)
    found = []  # a graph with a cycle is drawn, to be seen, and said to be no tree (several
    for s in drawn:  # roots are a multi-root parser's trees, drawn without a word)
        try:
            check_tree(s, single_root=False)
        except TreebankFormatError as err:
            found.append(err)
    if found:
        more = f" (and {counted(len(found) - 1, 'more sentence')} with a cycle)" \
            if len(found) > 1 else ""
        click.echo(f"Warning: {found[0]}; drawn as it is{more}", err=True)
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
              help="The model file (loaded once, and once by each worker).")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="The address to listen on (0.0.0.0: every interface).")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True,
              help="The port to listen on.")
@click.option("--workers", type=click.IntRange(1),
              help="Worker processes parsing, each loading the model once (default: one "
                   f"per core); one more is kept for requests of at most {SHORT} words.")
@click.option("--timeout", type=_FiniteRange(0, min_open=True), default=TIMEOUT,
              show_default=True,
              help="Seconds a request may wait and run; after them it is answered 503 and "
                   "its work abandoned.")
@_limits
def serve_cmd(model_path, host, port, workers, timeout, max_body_kb, max_words,
              max_sentence_words):
    """Serve the model over HTTP: POST /parse (raw text, tokenized text or CoNLL-U in,
    CoNLL-U or JSON out, marginals and k-best trees on request), GET / (a web page that
    draws the trees), GET /openapi.json (the schema), GET /health. Requests are parsed by
    a pool of worker processes, the cheapest waiting request first."""
    try:
        import uvicorn

        from arborparse.service.app import Limits, create_app
    except ImportError:
        raise ArborparseError("the service needs starlette and uvicorn: pip install "
                              "'arborparse[service]'") from None
    listening = _listening(host, port)  # before any work: a port in use is said at once
    try:
        app = create_app(model_path, Limits(max_body_kb * 1024, max_words,
                                            max_sentence_words), workers, timeout)
    except BaseException:
        for sock in listening:
            sock.close()
        raise
    family, address = listening[0].family, listening[0].getsockname()
    where = f"[{address[0]}]" if family == socket.AF_INET6 else address[0]
    click.echo(f"serving {model_path} on http://{where}:{address[1]}/ (Ctrl-C stops)",
               err=True)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    # uvicorn serves until Ctrl-C or SIGTERM and raises the signal again once it has shut
    # down, where asyncio's own Ctrl-C handler may swallow it: stopping is an interruption
    try:
        server.run(sockets=listening)
    except KeyboardInterrupt:
        pass
    else:
        if not server.started:
            raise ArborparseError("the service did not start (its error is above)")
    raise KeyboardInterrupt("the service stopped")


def _listening(host: str, port: int) -> list[socket.socket]:
    """Sockets listening on every address of `host` (all interfaces for ""), at `port` (0:
    one the system picks, the same for all), or ArborparseError saying why they cannot."""
    bound: list[socket.socket] = []
    try:
        for family, kind, proto, _, address in dict.fromkeys(socket.getaddrinfo(
                host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)):
            sock = socket.socket(family, kind, proto)
            bound.append(sock)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            chosen = port or (bound[0].getsockname()[1] if len(bound) > 1 else 0)
            sock.bind((address[0], chosen, *address[2:]))
            sock.listen()
    except OSError as err:
        for sock in bound:
            sock.close()
        raise ArborparseError(f"cannot serve on {host}:{port}: "
                              f"{err.strerror or err}") from None
    return bound


def _terminate(signum, frame):
    raise KeyboardInterrupt  # SIGTERM: clean up and stop as Ctrl-C does


GC_YOUNG = 10_000  # the command's objects made between collections of the youngest (Python:
# 700): numba's import and a parse make many short-lived ones, and each collection walks
# them (English-EWT's test set, parsed: 517 collections and 0.155 CPU s at 700, 139 and
# 0.052 s at 50,000; the command 0.1-0.2 s faster at 10,000)


def main():
    """The `arborparse` command, as a process: a serial parse ends it at once (`_done`),
    without returning. To run a command inside Python, call `cli` (a click group)."""
    signal.signal(signal.SIGTERM, _terminate)
    warnings.showwarning = _warning
    gc.set_threshold(GC_YOUNG, *gc.get_threshold()[1:])
    _done.clear()
    try:
        cli(prog_name="arborparse")
    except SystemExit as end:
        if _done.is_set() and end.code in (0, None):  # a serial parse, its output written
            _end_now(0)
        raise
