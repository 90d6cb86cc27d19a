"""`combine`: two trained models made one pipeline whose parser is their `EnsembleParser`,
the first's share of the mixture chosen on dev data (``arborparse combine``).

The pipeline is the first model's (its tokenizer, tagger and lemmatizer) with the ensemble
as its parser; the second model gives its parser alone. The weight is the one of the best
LAS on the dev sentences (`arborparse.eval.evaluate`'s, counted as the CoNLL 2018 script
counts it; their words as given, their tags predicted as parsing predicts them) among 0,
0.1, ..., 1 (ties: the one nearest 0.5); each parser parses the dev data once, and each
weight costs a decoding and the labels of the trees it changes.
"""

from __future__ import annotations

import os
import sys
import time
from datetime import datetime, timezone

from arborparse import __version__
from arborparse.ensemble.parser import EnsembleParser
from arborparse.errors import ArborparseError, warn
from arborparse.eval import evaluate
from arborparse.io.model_files import check_output, is_model
from arborparse.pipeline import MEMBER_SCORES, Pipeline, load
from arborparse.trainer import UNKNOWN_LANGUAGE, sentences_of

WEIGHTS = tuple(round(0.1 * i, 1) for i in range(11))
KEPT = ("defaults_by_size", "language")  # of the first model's record


def _model(given, name: str) -> Pipeline:
    """`given` (a path or a loaded model) as a pipeline with a parser."""
    model = load(given) if isinstance(given, (str, os.PathLike)) else given
    if not isinstance(model, Pipeline):
        model = Pipeline(parser=model) if hasattr(model, "capabilities") else None
    if model is None or model.parser is None:
        raise ArborparseError(f"the {name} model has no parser to combine: give a model file "
                              "(or a loaded model) that parses")
    return model


def combine(first, second, dev=None, weight: float | None = None, fmt: str = "auto",
            report=None, progress: bool = False, path=None, force: bool = False
            ) -> Pipeline:
    """The first model's pipeline with an `EnsembleParser` of both models' parsers.

    Parameters
    ----------
    first, second : model files (paths) or loaded models (`arborparse.load`) whose parsers
        have marginals (linear, neural)
    dev : a treebank (a path, or a list of `Sentence` with their trees) the weight is chosen
        on; needed unless `weight` is given (with it, dev is scored at that weight)
    weight : the first parser's share of the mixture, 0..1 (default: chosen on `dev`)
    fmt : the format of a `dev` path (``auto``, ``conllu``, ``conllx``)
    report : called with (weight, {"UAS": ..., "LAS": ...}) for each weight tried on dev
    progress : say on stderr that both parsers parse dev (once the inputs and `path` are
        checked), with a progress bar where stderr is a terminal
    path : where to save the combined model (checked before any work, as `train` checks
        its own: never one of the inputs, never a file that is not a model unless `force`;
        a model there is replaced with a warning unless `force`)

    Returns the pipeline (``info`` says what it is: ``members``, the dev scores of the
    weight kept, ``chosen_on_dev``); ``save(path)`` writes it. Models of different
    languages, or whose label sets barely meet, are combined with a warning.
    """
    began = time.perf_counter()
    if weight is None and dev is None:
        raise ArborparseError("give dev data (--dev) to choose the weight on, or the weight "
                              "(--weight)")
    inputs = [x for x in (first, second, dev) if isinstance(x, (str, os.PathLike))]
    check_output(path, inputs, model=True, force=force)
    front, other = _model(first, "first"), _model(second, "second")
    ensemble = EnsembleParser(front.parser, other.parser, 0.5 if weight is None else weight)
    _warn_if_apart(front, other)
    if not force and path is not None and os.path.isfile(path) and is_model(path):
        warn(f"{path} holds a model, which the combined model replaces; to keep it, "
             "give another path; to replace it unwarned, force (--force)")
    scores, tried, data = {}, {}, {}
    if dev is not None:
        gold, data["dev"] = sentences_of(dev, fmt, "dev")
        if progress:
            print(f"both parsers parse {dev if isinstance(dev, (str, os.PathLike)) else 'dev'}"
                  ", then each weight is scored on it", file=sys.stderr)
        tagged = Pipeline(front.tagger, front.lemmatizer, None)  # tags as parsing predicts
        pairs = (pair for chunk in ensemble.members_parse(
            tagged.parse(gold, retag=True) if front.tagger is not None else gold,
            retag=True) for pair in chunk)  # the first parser retags where it tags
        if progress:
            from tqdm import tqdm

            pairs = tqdm(pairs, total=len(gold), desc="parsing dev", unit=" sentences",
                         file=sys.stderr, disable=not sys.stderr.isatty())
        parsed = list(pairs)
        spreads = {}  # (sentence, tree) -> the parsers' label distributions under it

        def trees_at(w: float) -> list:
            ensemble.weight = w
            trees = [ensemble.heads(a, b)[0] for a, b in parsed]
            keys = [(i, heads.tobytes()) for i, heads in enumerate(trees)]
            # most weights change few trees: only the new ones' distributions are made
            todo = [i for i, key in enumerate(keys) if key not in spreads]
            spreads.update(zip([keys[i] for i in todo], ensemble.member_distributions(
                [parsed[i] for i in todo], [trees[i] for i in todo])))
            return [a[0].with_tree(heads, [ensemble.labels[k] for k in
                                           ensemble.mixed(spreads[key]).argmax(axis=1)])
                    for (a, _), heads, key in zip(parsed, trees, keys)]

        for w in (WEIGHTS if weight is None else (weight,)):
            found = evaluate(gold, trees_at(w))
            tried[w] = {"UAS": found["UAS"], "LAS": found["LAS"]}
            if report is not None:
                report(w, tried[w])
        chosen = weight if weight is not None else max(
            WEIGHTS, key=lambda w: (tried[w]["LAS"], -abs(w - 0.5)))
        ensemble.weight, scores = chosen, tried[chosen]
    model = Pipeline(front.tagger, front.lemmatizer, ensemble, front.tokenizer,
                     _info(front, other, ensemble, scores, data, weight is None,
                           time.perf_counter() - began))
    if path is not None:
        model.save(path, force=True)  # checked above
    return model


def report_on_stderr(weight: float, scores: dict) -> None:
    """A `combine` report that says each weight's dev scores on stderr, a line each (an
    ensemble training's; ``arborparse combine`` says the same lines, the command layer
    importing no family)."""
    print(f"weight {weight:.1f}: dev UAS {scores['UAS']:.2f}  LAS {scores['LAS']:.2f}",
          file=sys.stderr)


def _warn_if_apart(front: Pipeline, other: Pipeline) -> None:
    """Warn where the two models are of different languages (as their records name them:
    ``en`` of ``en_ewt``; not where one does not know its own), or where fewer than half of
    the second parser's labels are the first's: parsers of different treebanks mix badly."""
    languages = [str(m.info.get("language") or UNKNOWN_LANGUAGE).split("_")[0]
                 for m in (front, other)]
    if UNKNOWN_LANGUAGE not in languages and languages[0] != languages[1]:
        warn(f"the two models are of different languages ({languages[0]} and "
             f"{languages[1]}, as their model files record them): an ensemble mixes "
             "parsers of one language")
    labels = set(other.parser.labels)
    if len(labels & set(front.parser.labels)) < len(labels) / 2:
        warn("fewer than half of the second parser's labels are the first's: were "
             "the two trained on the same treebank?")


def _info(front: Pipeline, other: Pipeline, ensemble: EnsembleParser, scores: dict,
          data: dict, chosen: bool, seconds: float) -> dict:
    """What the combined model says of itself: the first model's language and record of its
    data size, each model's data (``first train``, ``second dev``, ...) and the dev data
    the weight was chosen or scored on (``dev``), each model's own dev scores as it
    recorded them (``members``), the dev scores at the weight kept, and
    the time of the two trainings and of this (None where a model does not record its
    own)."""
    own, theirs = front.info, other.info
    spent = [own.get("training_seconds"), theirs.get("training_seconds")]
    for name, record in (("first", own), ("second", theirs)):
        data.update({f"{name} {k}": v for k, v in (record.get("data") or {}).items()
                     if v is not None})
    return {**{k: own[k] for k in KEPT if own.get(k) is not None},
            "arborparse_version": __version__, "warnings": own.get("warnings") or [],
            "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "options": {"weight": ensemble.weight, "decoder": ensemble.decoder},
            "data": data,
            "members": {name: {key: scores_of[key.removeprefix("dev ")] for key in MEMBER_SCORES
                               if key.removeprefix("dev ") in scores_of}
                        for name, scores_of in (("first", own.get("scores") or {}),
                                                ("second", theirs.get("scores") or {}))},
            "scores": {k: round(v, 2) for k, v in scores.items()},
            "chosen_on_dev": {"weight": ensemble.weight} if chosen else {},
            "training_seconds": round(sum(s for s in spent if s is not None) + seconds, 1)
            if None not in spent else None}
