"""`train(...)`: a pipeline trained from a treebank, the one way to train, from Python and
from the command line alike (``arborparse train`` only parses its arguments and calls it).

    nlp = arborparse.train("en_ewt-ud-train.conllu", "en_ewt-ud-dev.conllu",
                           family="linear", trainer="mira", epochs=10)
    nlp.save("en.npz")

The front end (tokenizer, tagger, lemmatizer) is trained on the gold annotation; with a
tagger or lemmatizer the parser trains on jackknifed tags (`arborparse.text.jackknife`) and
is chosen on a retagged dev set. The family's options are its table's
(`arborparse.registry`, `arborparse.options.FamilyOptions`), with the defaults that follow
the number of training sentences (`FamilyOptions.by_size`: the neural family's epochs and
patience, the linear family's order) where the user gives none; the model records them
(``defaults_by_size`` says which came from the size), with the data, language, dev scores
and training time (`Pipeline.info`). A parser that ends below the left-neighbour baseline
on dev did not learn, and one trained without dev data whose marginals need it
(`FamilyOptions.calibrated_on_dev`) has uncalibrated HeadProb and LabelProb: `train` warns
of either, and the model's ``warnings`` say so.
"""

from __future__ import annotations

import hashlib
import json
import numbers
import os
import re
import sys
import time
import warnings
from collections.abc import Iterable
from datetime import datetime, timezone

import numpy as np
from tqdm import tqdm

from arborparse import registry
from arborparse.baselines import left_neighbour
from arborparse.errors import ArborparseError, warn
from arborparse.eval import evaluate, tag_scores
from arborparse.io import model_files, read_conllu
from arborparse.io.conllu import COLUMNS, FEATS, FORMATS, LEMMA, UPOS, XPOS, Sentence
from arborparse.io.validate import MULTI_ROOT, check_tree
from arborparse.pipeline import COMPONENTS, Pipeline
from arborparse.training import (TrainingInterrupted, checkpoint_seconds, checkpoints_kept,
                                 interrupt_of, interrupt_says, say, training_clock)

FRONT_EPOCHS = 10  # of the tagger and the lemmatizer, each keeping its best on dev
FRONT_OPTIONS = ("seed", "folds")  # what a front end and its jackknifed tags depend on
# jackknifing folds: 5 from LARGE training sentences on (dev LAS as good or better on three
# treebanks of 3,400-12,500 sentences, in 11-24 % less training time; 0.5-1.6 worse on three
# of four of 400-1,400 sentences: bench/RESULTS.md)
FOLDS, FOLDS_LARGE, LARGE = 10, 5, 3000
SCORES = ("UAS", "LAS", "UPOS", "XPOS", "UFeats", "Lemmas")
UD_NAME = re.compile(r"(?:^|[^a-z0-9])([a-z]{2,3}(?:_[a-z0-9]+)?)-ud-(?:train|dev|test)",
                     re.IGNORECASE)
UNKNOWN_LANGUAGE = "unknown"  # the language of a model whose data files are not named as UD's


def train(train, dev=None, *, family: str = "linear", components=None,
          progress: bool = True, path=None, resume: bool = False, force: bool = False,
          lang: str | None = None, folds: int | None = None, fmt: str = "auto",
          **options) -> Pipeline:
    """Train a pipeline: the components asked for, the parser of `family` with `options`.

    Parameters
    ----------
    train, dev : paths of treebanks (CoNLL-U or CoNLL-X, as `fmt` says), or iterables of
        `Sentence`; without dev the last epoch is kept (and C is not chosen)
    family : ``"linear"`` (``"first-order"`` is its older name), ``"isbn"``, ``"neural"``
        or ``"ensemble"`` (a linear pipeline and a neural parser, each with its family's
        defaults, combined: `arborparse.ensemble.train`)
    components : names among tokenizer, tagger, lemmatizer, parser (a list, or a
        comma-separated string); default: the family's (`FamilyOptions.components`)
    progress : progress bars and a line per epoch on stderr
    path : where the model is saved as soon as an epoch is the best so far (so that an
        interrupted run keeps it), with the checkpoint ``PATH.checkpoint`` beside it and,
        in front of a parser, the front end ``PATH.front`` (saved as soon as it is trained)
        and, behind a tagger or lemmatizer, the jackknifed tags ``PATH.tags`` (all removed
        when the training ends)
    resume : continue the interrupted training of `path` from its checkpoint (the same
        options; epochs and patience may change), with the front end `path` holds and the
        tags of ``PATH.tags``: nothing is trained again; interrupted before the parser's
        first epoch ended, from the front end of ``PATH.front`` (and its tags where they
        were made): the parser trains from its start
    force : start again although `path` has a checkpoint, and replace a file at `path` that
        is not a model file (the training data never: it is refused as an output)
    lang : the language recorded in the model (default: the UD file name's prefix, such as
        ``en_ewt``)
    folds : jackknifing folds (default: 10, or 5 from 3,000 training sentences on, where
        taggers trained on four fifths of the data serve the parser as well, and the
        jackknife takes half the time; recorded in ``defaults_by_size``)
    **options : the family's options (`arborparse train --help` lists them by family);
        anything else raises `ArborparseError`

    Returns the trained `Pipeline` (its ``info`` says what it is; ``save(path)`` writes it).
    """
    began = time.perf_counter()
    if family == "first-order" and options.get("order") is None:
        options = {**options, "order": 1}  # the older name asks for the first order
    family = registry.canonical(family)
    made = registry.trains(family)
    if made is not None:  # a parser made of other families' trained parsers
        return made(train, dev, components=components, progress=progress, path=path,
                    resume=resume, force=force, lang=lang, folds=folds, fmt=fmt, **options)
    table = registry.options_table(family).of(options)
    parts = component_names(components, table.components)
    if dev is None and options.get("extend") not in (None, 0):  # 0 asks for nothing more
        raise ArborparseError("extend goes on past the epochs only with dev data (--dev), "
                              "whose LAS says when to stop: give dev, or leave out extend")
    if folds is not None and (not isinstance(folds, numbers.Integral) or
                              isinstance(folds, bool) or folds < 2):
        raise ArborparseError(f"folds={folds!r}: give an integer >= 2")
    if not isinstance(progress, bool):
        raise ArborparseError(f"progress={progress!r}: give True or False")
    if fmt not in FORMATS:
        raise ArborparseError(f"fmt={fmt!r}: choose one of {', '.join(FORMATS)}")
    if lang is not None and not (isinstance(lang, str) and lang.strip()):
        raise ArborparseError(f"lang={lang!r}: give a language name or code, such as en_ewt")
    inputs = [source for source in (train, dev) if isinstance(source, (str, os.PathLike))]
    model_files.check_output(path, inputs, model=True, force=force)  # before any work
    checkpoint = None if path is None else f"{path}.checkpoint"
    tags = None if path is None else f"{path}.tags"  # the jackknifed tags, for resume
    front_file = None if path is None else f"{path}.front"  # the front end, for resume
    for beside in (tags, front_file):
        model_files.check_output(beside, inputs, model=True, force=force)
    if tags is not None and not force and os.path.isfile(tags) and \
            model_files.is_model(tags) and model_files.kind_of(tags) != TAGS_KIND:
        raise ArborparseError(f"{tags} is another model file, where the training keeps its "
                              "jackknifed tags; use --force (force=True) to replace it")
    lead = os.environ.get("RANK", "0") == "0"  # torchrun: process 0 writes the files
    if resume:
        if path is None or "parser" not in parts:
            raise ArborparseError("resume continues the training of a parser: give its path "
                                  "(--model)")
        if getattr(table, "scheduler", None) is not None:
            raise ArborparseError("a training on a cluster (scheduler, --scheduler) writes no "
                                  "checkpoint, so it cannot be resumed: start it again")
        if os.path.exists(checkpoint):  # from the parser's checkpoint: refuses what cannot
            registry.trainer(family, table, dev=dev is not None, progress=False,  # resume
                             checkpoint=checkpoint, resume=True)
        elif not os.path.exists(front_file):
            front_said = f", nor {front_file} (written once the front end is trained)" \
                if set(parts) - {"parser"} else ""
            raise ArborparseError(f"resume: there is no {checkpoint} (a training writes one "
                                  f"after every epoch and removes it at its end){front_said}")
        if os.path.exists(checkpoint) and not os.path.exists(path):
            raise ArborparseError(f"resume: {path} is gone (it held the best epoch and what "
                                  f"the training was), so {checkpoint} cannot go on alone: "
                                  "start again with force (--force)")
    elif "parser" in parts and checkpoint is not None and not force and \
            (os.path.exists(checkpoint) or os.path.exists(front_file)):
        held = checkpoint if os.path.exists(checkpoint) else front_file
        raise ArborparseError(f"{held} holds an interrupted training of this model: "
                              "continue it with resume (--resume), or start again with force "
                              "(--force)")
    # starting again, the interrupted run's state goes, once the data is read and checked
    stale = [] if resume or checkpoint is None or not lead else [checkpoint, tags, front_file]
    with interrupt_says("training interrupted while reading and checking the data: "
                        "nothing was written"):
        data = {"train": None, "dev": None}
        train, data["train"] = sentences_of(train, fmt, "train")
        dev, data["dev"] = sentences_of(dev, fmt, "dev") if dev is not None else (None, None)
        sized = {}  # the defaults that follow the size are the parser's
        if "parser" in parts:
            sized = {name: value for name, value in type(table).by_size(len(train), options).items()
                     if options.get(name) is None}
        theirs, recorded = {}, None
        # where the interrupted run is recorded: its model, or its front end alone where the
        # parser's first epoch did not end
        begun = resume and os.path.exists(checkpoint)
        record_file = path if begun or not resume else front_file
        if resume and os.path.exists(record_file):  # an interrupted run goes on with its own
            from arborparse.pipeline import info as info_of  # values

            before = info_of(record_file)
            # a file from before sizing (none recorded) had nothing chosen by the size
            theirs = before.get("options") or {}
            recorded = before.get("defaults_by_size") or {"train_sentences": len(train)}
            sized = {name: theirs.get(name, value) for name, value in sized.items()}
            # at the default, a value is the table's own (an order-1 run's second order too)
            defaults = {spec.name: spec.default for spec in type(table).specs()}
            sized = {name: value for name, value in sized.items() if value != defaults.get(name)}
        table = type(table).of({**options, **sized})
        if {"tokenizer", "parser"} <= set(parts) and "tagger" not in parts and \
                "tagger" in table.components:  # the family's parser reads tags
            raise ArborparseError(f"components {','.join(parts)}: the {family} parser reads tags, "
                                  "so a model that tokenizes raw text needs a tagger too (add "
                                  "tagger), or it could not parse the text it tokenizes")
        if "parser" in parts:  # every gold tree first: before what the data is too small or
            # of the wrong format for, and before the front end trains on it
            for s in train:
                check_tree(s, not table.multi_root, MULTI_ROOT)
        taggers = {"tagger", "lemmatizer"} & set(parts) and "parser" in parts
        if taggers and len(train) < 2:  # said before any training, not after the front end's
            raise ArborparseError(f"train ({data['train']['file'] or 'the data given'}): a "
                                  "parser behind a tagger or "
                                  "lemmatizer trains on jackknifed tags, which need at least 2 "
                                  "training sentences")
        if "tokenizer" in parts and all(s.format == "conllx" for s in train):
            others = ",".join(p for p in parts if p != "tokenizer")
            raise ArborparseError(f"train ({data['train']['file'] or 'the data given'}) is "
                                  "CoNLL-X, which records neither the text nor its spacing "
                                  "(SpaceAfter=No), so a tokenizer would learn nothing from it: "
                                  "train from CoNLL-U" + (", or leave the tokenizer out: "
                                                          f"components (--components) {others}"
                                                          if others else ""))
        if taggers and folds is None:  # the jackknife's default follows the data's size too
            folds = sized["folds"] = theirs.get("folds", FOLDS_LARGE if len(train) >= LARGE
                                                else FOLDS)
        if taggers and 2 <= len(train) < folds:  # a fold per sentence at most: what is used
            folds = len(train)
            if "folds" in sized:
                sized["folds"] = folds
        used = {**table.to_dict(), **({"folds": folds} if taggers else {})}
        info = {"arborparse_version": _version(), "family": family, "components": parts,
                "options": used,
                # a resumed run's record is the interrupted run's (its user's choices not sized),
                # less the values given now (epochs and patience may change)
                "defaults_by_size": {"train_sentences": len(train), **sized} if recorded is None
                else {k: v for k, v in recorded.items() if k == "train_sentences" or
                      used.get(k) == v},
                "data": data, "language": lang or _language(data), "scores": {},
                "warnings": []}
        floor = _floor(dev) if dev and "parser" in parts else None
        kept, before = {}, 0.0
        if resume:  # the interrupted run's data, components and options, its scores and time
            kept["record"], before = _resumable(record_file, info, table, front=not begun)
            # up to its last finished epoch, which may come after the best one its model holds
            seconds = checkpoint_seconds(checkpoint) if begun else None
            before = before if seconds is None else seconds
    for file in stale:
        if os.path.exists(file):
            os.remove(file)

    def described(front: Pipeline, parser, record: dict) -> Pipeline:
        scores = {**front_scores, **_syntax_scores(front),
                  **{k: record[k] for k in SCORES if k in record}}
        scores = {k: round(float(v), 2) for k, v in scores.items()}
        # the kept epoch, the C that `-C auto` chose (`ChooseC`), the second-stage
        # labeler's weight (None: left out), whether a linear parser kept its tag reach and
        # its decoder, where dev chose them (a front end kept for resume: the tagger's and
        # lemmatizer's epochs, which the jackknife's take), and the multiword tokens'
        # splitter (`arborparse.text.multiword`)
        chosen = {k: record[k] for k in ("epoch", "C", "labeler", "tag_reach", "decoder")
                  if k in record} if dev else {}
        chosen.update({k: record[k] for k in ("front_epochs",) if k in record})
        multiword = front.tokenizer.multiword if front.tokenizer is not None else None
        if multiword is not None and multiword.dev_right_:  # how unseen tokens are split
            chosen["multiword"] = multiword.unseen_by
        now = {**info, "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
               "scores": scores, "chosen_on_dev": chosen,
               "warnings": _below(floor, scores.get("UAS")) + (
                   UNCALIBRATED if parser is not None and not dev and table.calibrated_on_dev
                   else []),
               "training_seconds": round(before + time.perf_counter() - began, 1)}
        return Pipeline(front.tagger, front.lemmatizer, parser, front.tokenizer, now)

    front_parts = [p for p in parts if p != "parser"]
    nothing_yet = "" if path is None else (
        ": nothing was written (the model file is written when " +
        ("the parser's first epoch ends)" if "parser" in parts else "every component is "
                                                                     "trained)"))
    annotated = None  # the dev words as the front end tags them, where made
    if resume:  # the front end the interrupted run trained, as its model file holds it
        front, front_scores = _trained_front(record_file)
        epochs = kept["record"].get("front_epochs")  # a front end's (unused from a checkpoint)
        if not begun and lead:  # a checkpoint's resume says its own line
            say(f"resuming with the {_listed(front_parts)} of {front_file}; the parser "
                "starts from its first epoch")
    else:
        if not force and path is not None and lead and os.path.isfile(path) and \
                model_files.is_model(path):  # the data and options checked: work begins
            warn(f"{path} holds a model, which this training replaces once it has "
                 "one to save (Ctrl-C before then keeps it); to keep it, give "
                 "another path; to replace it unwarned, force (--force)")
        with interrupt_says(f"training interrupted while training the "
                            f"{_listed(front_parts)}{nothing_yet}"):
            front = front_end(parts, train, dev, table.seed, progress)
            annotated = _annotated(front, dev)  # scored here, read by the parser below
        front_scores = _front_scores(front, dev, annotated)
        # the jackknife's taggers train for as many epochs as the front end's kept
        epochs = [1 if c is None else c.best_epoch_ for c in (front.tagger, front.lemmatizer)]
        if front_parts and "parser" in parts and front_file is not None and lead and \
                getattr(table, "scheduler", None) is None:  # kept for resume (a cluster's
            # run does not resume)
            described(front, None, {"front_epochs": epochs}).save(front_file, force=True)
    kept_front = f": {front_file} holds the trained {_listed(front_parts)}: continue with " \
        "resume (--resume)" if front_file is not None and os.path.exists(front_file) \
        else nothing_yet
    if "parser" not in parts:
        pipeline = described(front, None, {})
        if path is not None:
            pipeline.save(path, force=force)
        if progress:
            _say_trained(pipeline, path)
        return pipeline
    raw_dev = dev
    scheduler = getattr(table, "scheduler", None)
    tagged_by = {"data": data, "components": parts, "seed": table.seed, "folds": folds}

    def save_best(parser, record):
        kept["record"] = record
        if path is not None:
            described(front, parser, record).save(path, force=force)
    save_best.path = path  # what an interrupted training names

    context = dict(dev=bool(dev), progress=progress, checkpoint=checkpoint, resume=begun)
    done = interrupted = False
    try:
        if (begun or (resume and os.path.exists(tags))) and (front.tagger or front.lemmatizer):
            train, dev = _tagged(tags, tagged_by, train, dev)
        elif front.tagger or front.lemmatizer:
            with interrupt_says("training interrupted while tagging the training sentences "
                                f"for the parser (jackknifing){kept_front}"):
                train = _jackknife(parts, front, train, folds, table.seed, progress, epochs)
                dev = annotated if annotated is not None else _annotated(front, dev)
                if tags is not None and lead and scheduler is None:  # a cluster's run does
                    _save_tags(tags, tagged_by, train, dev)  # not resume
        # the parser's checkpoint outlives its epochs until the stages after them end
        with checkpoints_kept(), training_clock(lambda: before + time.perf_counter() - began):
            if scheduler is None:
                with interrupt_says("training interrupted while the parser's trainer "
                                    "started (its libraries loading)" + (
                                        f": {path} and its checkpoint are as they were"
                                        if begun else kept_front)):
                    trainer = registry.trainer(family, table, **context)
                try:
                    fitted = trainer.fit(train, dev, save_best)
                except TrainingInterrupted as err:  # nothing of the parser saved yet: the
                    if err.epoch is not None or kept_front == nothing_yet:  # front end kept
                        raise
                    raise TrainingInterrupted(None, path, message="training interrupted "
                                              "before the parser's first model was saved"
                                              + kept_front) from None
            else:
                from arborparse.distributed import connect

                with connect(scheduler, table.workers) as client:
                    fitted = registry.trainer(family, table, client=client, **context).fit(
                        train, dev, save_best)
            if front.tokenizer is not None and raw_dev:
                with interrupt_says("training interrupted while the tokenizer weighed a "
                                    "parser's view of sentence ends, after the parser's "
                                    "epochs" + (f": {path} holds epoch {fitted.best_epoch_}, "
                                                "the best, without that view"
                                                if path is not None else ""),
                                    fitted.best_epoch_, path):
                    _syntax_ends(front, train, dev, raw_dev, table.seed, progress)
        done = True
    except BaseException as err:
        interrupted = interrupt_of(err) is not None
        raise
    finally:  # kept for resume after an interrupt (with the parser's checkpoint, if it has
        # one); gone once the training ends, or an error ends it (which a plain run starts
        # again from: a diverged training, say)
        if path is not None and lead and (done or not interrupted):
            for beside in (tags, front_file):
                if os.path.exists(beside):
                    os.remove(beside)
    pipeline = described(front, fitted.parser_, kept.get("record", {}))
    for warning in pipeline.info["warnings"]:
        warn(warning)
    if path is not None and lead:
        pipeline.save(path, force=force)
    if progress and lead:
        _say_trained(pipeline, path, fitted.best_epoch_)
    return pipeline


def _say_trained(pipeline: Pipeline, path, epoch: int | None = None) -> None:
    """The last line of a training: its time, its dev scores and kept epoch, and where the
    model is."""
    scores = pipeline.info["scores"]
    said = [f"dev {'  '.join(f'{k} {scores[k]:.2f}' for k in ('UAS', 'LAS') if k in scores)}"
            ] if "UAS" in scores else []
    said += [f"epoch {epoch}"] if epoch is not None else []
    where = f"saved {path} (arborparse info {path} says what it holds)" \
        if path is not None else "not saved (save(path) writes it)"
    tqdm.write(f"trained in {pipeline.info['training_seconds']:.1f} s"
               + (f" ({', '.join(said)})" if said else "") + f": {where}", file=sys.stderr)


# the model's warning where its marginals need dev data (`FamilyOptions.calibrated_on_dev`)
UNCALIBRATED = ["trained without dev data: the parser's HeadProb and LabelProb (parse "
                "--marginals) are its scores as trained, not probabilities fitted on data; "
                "give dev data (--dev) to fit their temperatures"]


def _floor(dev: list[Sentence]) -> float:
    """The dev UAS of attaching every word to its left neighbour: what a parser that
    learned anything beats."""
    return evaluate(dev, [left_neighbour(s) for s in dev])["UAS"]


def _below(floor: float | None, uas: float | None) -> list[str]:
    """The model's warnings: its kept dev UAS below the left-neighbour baseline's."""
    if floor is None or uas is None or uas >= floor:
        return []
    return [f"the parser's dev UAS ({uas:.2f}) is below that of attaching every word to its "
            f"left neighbour ({floor:.2f}): it did not learn; train longer, or with other "
            "options (such as a smaller learning rate or batch size), and check the data"]


def _resumable(path, info: dict, table, front: bool = False) -> tuple[dict, float]:
    """(the kept epoch's scores and what dev chose, the training seconds) of the
    interrupted training whose model is at `path` (`front`: its front end alone, whose
    components are those before the parser, and whose options that matter are
    `FRONT_OPTIONS`); refuses to go on with other data, components or options."""
    from arborparse.pipeline import info as info_of

    before = info_of(path)
    if front:  # the parser trains from its start: its own options may change
        info = {**info, "components": [c for c in info["components"] if c != "parser"],
                "options": {k: v for k, v in info["options"].items() if k in FRONT_OPTIONS}}
    if before.get("family") not in (None, info["family"]):
        raise ArborparseError(f"{path}: the interrupted training is of the "
                              f"{before['family']} family; resume it as that family (model "
                              f"type {before['family']}) with the same data, components and "
                              "options")
    differ = ["components"] if before.get("components") != info["components"] else []
    differ += _other_data(before.get("data"), info["data"])
    # an option added after the interrupted run's version had its default there
    theirs = {**{s.name: s.default for s in table.specs()}, **(before.get("options") or {})}
    changeable = {s.name for s in table.specs() if s.may_change}
    differ += sorted(f"{k} {theirs.get(k)!r} (now {v!r})" for k, v in info["options"].items()
                     if k not in changeable and theirs.get(k) != v)
    if differ:
        raise ArborparseError(f"{path}: the interrupted training had other "
                              f"{', '.join(differ)}; resume with the same data, components "
                              "and options")
    kept = {**(before.get("scores") or {}), **(before.get("chosen_on_dev") or {})}
    return kept, float(before.get("training_seconds") or 0.0)


def _other_data(before: dict | None, now: dict) -> list[str]:
    """What differs between the data of an interrupted training and of its resumption
    (`sentences_of`'s records by part): a part whose bytes (or, in memory, sizes) differ, said
    with both records; the files' names do not count."""
    if not isinstance(before, dict):
        return ["data (the interrupted training's is not recorded)"]

    def said(record) -> str:
        if not record:
            return "none"
        digest = f", sha256 {record['sha256'][:12]}…" if record.get("sha256") else ""
        return f"{record.get('file') or 'sentences given in memory'}, " \
            f"{record.get('sentences')} sentences, {record.get('words')} words{digest}"

    def content(record) -> dict:
        return {k: v for k, v in (record or {}).items() if k != "file"}
    return [f"{part} data ({said(before.get(part))}; now {said(now.get(part))})"
            for part in sorted(set(before) | set(now))
            if content(before.get(part)) != content(now.get(part))]


def component_names(components, default: tuple[str, ...]) -> list[str]:
    """The components asked for (a list of names or a comma-separated string; None:
    `default`), in `COMPONENTS`' order; `ArborparseError` for a name none has."""
    if components is None:
        return list(default)
    if not isinstance(components, (str, list, tuple)):
        raise ArborparseError(f"components: a list of names or a comma-separated string, not "
                              f"{components!r}")
    names = components.split(",") if isinstance(components, str) else list(components)
    names = [str(c).strip() for c in names if str(c).strip()]
    unknown = sorted(set(names) - set(COMPONENTS))
    if unknown or not names:
        raise ArborparseError(f"components: choose among {', '.join(COMPONENTS)} (got "
                              f"{components!r})")
    return [c for c in COMPONENTS if c in names]


def sentences_of(source, fmt: str, what: str) -> tuple[list[Sentence], dict]:
    """The sentences of a path or an iterable, and what the model records of them."""
    if isinstance(source, (str, os.PathLike)):
        sentences = read_conllu(source, fmt)
        digest = hashlib.sha256()
        with open(source, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        name, sha = os.path.basename(os.fspath(source)), digest.hexdigest()
    elif isinstance(source, Iterable):
        sentences = list(source)
        if not all(isinstance(s, Sentence) for s in sentences):
            raise ArborparseError(f"{what}: give a path or Sentence objects")
        name, sha = None, None
    else:
        raise ArborparseError(f"{what}: give a path or an iterable of Sentence, not "
                              f"{type(source).__name__}")
    if not sentences:
        raise ArborparseError(f"{what}: no sentences in {name or 'the data given'}")
    return sentences, {"file": name, "sha256": sha, "sentences": len(sentences),
                       "words": sum(map(len, sentences))}


def _language(data: dict) -> str:
    """The UD file name's prefix (``en_ewt`` of ``en_ewt-ud-train.conllu``), or
    `UNKNOWN_LANGUAGE`."""
    for part in ("train", "dev"):
        match = UD_NAME.search((data[part] or {}).get("file") or "")
        if match:
            return match.group(1).lower()
    return UNKNOWN_LANGUAGE


def _listed(names: list[str]) -> str:
    """tokenizer, tagger and lemmatizer (the front end, when there are none)."""
    return " and ".join(filter(None, [", ".join(names[:-1]), names[-1]])) if names else \
        "front end"


def _version() -> str:
    from arborparse import __version__

    return __version__


def _annotated(front: Pipeline, dev: list[Sentence] | None) -> list[Sentence] | None:
    """The dev words as the front end tags and lemmatizes them (None without dev data, or
    without a tagger or lemmatizer)."""
    if not dev or (front.tagger is None and front.lemmatizer is None):
        return None
    return Pipeline(front.tagger, front.lemmatizer, None)._annotate(dev, retag=True)


def _front_scores(front: Pipeline, dev: list[Sentence] | None,
                  annotated: list[Sentence] | None = None) -> dict:
    """The front end's dev scores: its tags and lemmas of the dev words (`annotated`, where
    made already: `_annotated`), as `evaluate` and the CoNLL 2018 script count them (UFeats
    the universal features, a gold lemma ``_`` matched by any; XPOS where the tagger has
    some), and the tokenizer's boundary F1."""
    scores = {}
    annotated = _annotated(front, dev) if annotated is None else annotated
    if annotated is not None:
        found = tag_scores(dev, annotated)
        names = [*(getattr(front.tagger, "scores_", None) or ())] + \
            ["Lemmas"] * (front.lemmatizer is not None and front.lemmatizer.enabled)
        scores = {name: found[name] for name in names}
    tokenizer = front.tokenizer
    if tokenizer is not None and getattr(tokenizer, "history_", None):
        kept = [r["boundary F1"] for r in tokenizer.history_ if "boundary F1" in r]
        if kept:
            scores["boundary_F1"] = max(kept)
    if tokenizer is not None and dev:
        scores.update(_segmentation_scores(tokenizer, dev))
    return scores


def _segmentation_scores(tokenizer, dev: list[Sentence]) -> dict:
    """The tokenizer's Tokens, Words (its multiword tokens split) and Sentences F1 on the
    dev text, as the CoNLL 2018 script counts them (sentences by the characters' and
    words' view, before a parser's view is weighed: ``sentences_syntax``); none where the
    dev text holds characters the tokenizer drops (the two would not spell one text)."""
    from arborparse.eval.aligned import evaluate_aligned
    from arborparse.text.tokenizer import paragraphs

    text = "\n\n".join(t for t, _ in paragraphs(dev))
    with warnings.catch_warnings():  # dev's letters unseen in training are no news here
        warnings.simplefilter("ignore")
        read = Pipeline(tokenizer=tokenizer).parse_text(text)
    found = [s.with_tree(np.arange(-1, len(s)), ["dep"] * len(s)) for s in read]  # a chain:
    # no tree scored
    try:
        aligned = evaluate_aligned(dev, found)
    except ArborparseError:
        return {}
    return {name: aligned[name]["f1"] for name in ("Tokens", "Words", "Sentences")}


def _syntax_scores(front: Pipeline) -> dict:
    """The dev sentence F1 with a parser's view of sentence ends, where it was kept."""
    if getattr(front.tokenizer, "syntax", None) is None:
        return {}
    return {"sentences_syntax": front.tokenizer.syntax_f1_["syntax"]}


def _trained_front(path) -> tuple[Pipeline, dict]:
    """The front end held by the model file of an interrupted training, and its scores."""
    nlp = Pipeline.load(path)
    scores = {k: v for k, v in (nlp.info.get("scores") or {}).items() if k not in ("UAS", "LAS")}
    return Pipeline(nlp.tagger, nlp.lemmatizer, None, nlp.tokenizer), scores


TAGS_KIND, TAGS_VERSION = "jackknifed-tags", 1
TAGGED = (UPOS, XPOS, FEATS, LEMMA)


def _save_tags(tags, tagged_by: dict, train: list[Sentence], dev: list[Sentence] | None
               ) -> None:
    """Keep the jackknifed training tags (and the retagged dev set) beside the model, so
    that a resumed training does not tag them again; `tagged_by`: the data, components,
    seed and folds that made them. Removed with the parser's checkpoint."""
    arrays = {}
    for part, sentences in (("train", train), ("dev", dev or [])):
        for column in TAGGED:
            values = "\n".join(v for s in sentences for v in s.column(column))
            arrays[f"{part}.{COLUMNS[column]}"] = np.frombuffer(values.encode("utf-8"),
                                                                dtype=np.uint8)
    model_files.save(tags, TAGS_KIND, TAGS_VERSION, {"tagged_by": tagged_by}, arrays)


def _tagged(tags, tagged_by: dict, train: list[Sentence], dev: list[Sentence] | None):
    """The training and dev sentences with the interrupted run's tags (`_save_tags`)."""
    if not os.path.exists(tags):
        raise ArborparseError(f"resume: there is no {tags} (the jackknifed tags of the "
                              "interrupted training): start again with force (--force)")
    header, arrays = model_files.load(tags, TAGS_KIND, TAGS_VERSION)
    if header.get("tagged_by") != json.loads(json.dumps(tagged_by)):
        raise ArborparseError(f"resume: {tags} holds the tags of another training (other data, "
                              "components, seed or folds): start again with force (--force)")
    tagged = []
    for part, sentences in (("train", train), ("dev", dev or [])):
        columns = {c: bytes(arrays[f"{part}.{COLUMNS[c]}"]).decode("utf-8").split("\n")
                   for c in TAGGED}
        at, out = 0, []
        for s in sentences:
            out.append(s.with_columns({c: v[at:at + len(s)] for c, v in columns.items()}))
            at += len(s)
        tagged.append(out)
    return tagged[0], tagged[1] if dev else None


def front_end(parts, train, dev, seed: int, progress: bool,
              epochs: tuple[int, int] = (FRONT_EPOCHS, FRONT_EPOCHS),
              backward: bool = True) -> Pipeline:
    """A pipeline of the tokenizer, tagger and lemmatizer among `parts`, trained on the
    gold annotation, the tagger and lemmatizer for `epochs`, each keeping its best epoch
    on `dev` (the tagger's pairs scored right to left too with `backward`)."""
    from arborparse.text.lemmatizer import Lemmatizer
    from arborparse.text.tagger import Tagger
    from arborparse.text.tokenizer import Tokenizer

    began = time.perf_counter()
    tagger = Tagger(epochs[0], seed=seed, progress=progress, backward=backward).fit(
        train, dev) if "tagger" in parts else None
    if progress and tagger is not None:  # the scores the model records (`info`)
        _took("tagger", began, _front_scores(Pipeline(tagger), dev))
    if progress and "lemmatizer" in parts:  # it shows no epochs of its own
        tqdm.write("training the lemmatizer", file=sys.stderr)
    began = time.perf_counter()
    lemmatizer = Lemmatizer(epochs[1], seed=seed).fit(train, dev) \
        if "lemmatizer" in parts else None
    if progress and lemmatizer is not None:
        _took("lemmatizer", began, {k: v for k, v in _front_scores(
            Pipeline(tagger, lemmatizer), dev).items() if k == "Lemmas"})
    tokenizer = Tokenizer(seed=seed, progress=progress).fit(train, dev) \
        if "tokenizer" in parts else None
    right = tokenizer.multiword.dev_right_ if tokenizer is not None else {}
    if progress and right:
        tqdm.write(f"multiword tokens: dev tokens split right {right['rules']:.2f} % by rules, "
                   f"{right['segmenter']:.2f} % by characters: the "
                   f"{tokenizer.multiword.unseen_by} kept",
                   file=sys.stderr)
    return Pipeline(tagger, lemmatizer, tokenizer=tokenizer)


def _took(what: str, began: float, scores: dict) -> None:
    """Say on stderr that `what` is trained, its dev `scores` and the time it took."""
    said = "  ".join(f"{k} {v:.2f}" for k, v in scores.items())
    tqdm.write(f"{what} trained in {time.perf_counter() - began:.1f} s" +
               (f": dev {said}" if said else ""), file=sys.stderr)


def _syntax_ends(front: Pipeline, train: list[Sentence], dev: list[Sentence],
                 raw_dev: list[Sentence], seed: int, progress: bool) -> None:
    """Let the tokenizer weigh a parser's view of sentence ends (`arborparse.text.syntax`):
    a parser of windows of the paragraphs, trained on the training sentences with the tags
    the parser trains on (`train`, `dev`: jackknifed, tagged), kept if the dev sentences
    (`raw_dev`) come out better. Only behind a tagger (that parser reads tags) and a
    word-level splitter (whose margins it weighs)."""
    from arborparse.text.syntax import GAIN, window_parser

    if front.tokenizer.splitter is None or front.tagger is None:
        return
    if progress:
        tqdm.write("sentence ends with a parser's trees: training a parser of windows of "
                   "the paragraphs (the epoch and decoder lines up to the next 'sentence "
                   "ends' line are that parser's, not the model's)", file=sys.stderr)
    parser = window_parser(train, dev, seed, progress)
    crossing = Pipeline(front.tagger, front.lemmatizer, None, front.tokenizer).crossing(parser)
    kept = front.tokenizer.fit_syntax(raw_dev, crossing, parser)
    if progress:
        f1 = front.tokenizer.syntax_f1_
        tqdm.write(f"sentence ends with a parser's trees: dev sentence F1 "
                   f"{f1['syntax']:.2f}, with the splitter's margin alone {f1['words']:.2f}: "
                   + ("kept" if kept else f"not kept (it needs {GAIN} more)"),
                   file=sys.stderr)


def _jackknife(parts, front, train, folds, seed, progress, epochs):
    """The training sentences with tags (and lemmas) predicted by models that did not see
    them (`arborparse.text.jackknife`), each trained for as many `epochs` as the `front`
    end's tagger and lemmatizer kept. Their taggers score the pairs left to right alone
    (`Tagger`'s `backward`), in half the time (English-EWT, a fold: 26.5 CPU s against
    47.3), their tags a little less right than the front end's; the parser's dev LAS with
    these against with taggers of both directions: English-EWT 78.72 / 78.78, Turkish-IMST
    56.06 / 55.77, Gothic-PROIEL 74.32 / 74.32."""
    from arborparse.text.jackknife import jackknife

    taggers = [p for p in parts if p in ("tagger", "lemmatizer")]
    if progress:  # said in a log too, where the folds' bar is not shown
        tqdm.write(f"jackknifing: the training sentences tagged in {folds} folds, each by "
                   f"a {' and '.join(taggers)} trained on the others", file=sys.stderr)

    def annotate(others, fold):
        return front_end(taggers, others, None, seed, False, epochs, backward=False).parse(
            fold, retag=True)

    return jackknife(train, folds, annotate, progress=progress)

