"""`train` of the ensemble family (``arborparse train --model-type ensemble``): a linear
pipeline (tokenizer, tagger, lemmatizer and parser, as the components say) and a neural
parser trained on the same data, each with its family's defaults (those that follow the
data's size among them), then made one model by `arborparse.ensemble.combine`, the linear
parser's share of the mixture chosen on dev.

With a path, each member is saved beside it as it trains (``PATH.linear``, ``PATH.neural``,
each with its own checkpoint), so that an interrupted training keeps what it finished and
`resume` goes on from there: a finished member is loaded (its data checked against the data
given), an interrupted one resumed, one not begun trained. Both are removed once the
ensemble is saved at PATH.
"""

from __future__ import annotations

import os
import sys
import warnings

from arborparse.ensemble.combine import combine
from arborparse.ensemble.options import EnsembleOptions
from arborparse.errors import ArborparseError
from arborparse.io import model_files
from arborparse.pipeline import Pipeline, load
from arborparse.training import TrainingInterrupted

# the members: (family, what it is called, its components: None for the ensemble's)
MEMBERS = (("linear", "linear pipeline", None), ("neural", "neural parser", ["parser"]))
STAGES = len(MEMBERS) + 1  # the members' trainings, then the weight chosen on dev


def train(train, dev=None, *, components=None, progress: bool = True, path=None,
          resume: bool = False, force: bool = False, lang: str | None = None,
          folds: int | None = None, fmt: str = "auto", **options) -> Pipeline:
    """`arborparse.train` for ``family="ensemble"`` (its arguments; the options are
    `EnsembleOptions`'): see the module's docstring."""
    from arborparse.trainer import _other_data, _say_trained, component_names, sentences_of

    table = EnsembleOptions.of(options)
    parts = component_names(components, EnsembleOptions.components)
    if "parser" not in parts:
        raise ArborparseError(f"components {','.join(parts)}: an ensemble is two parsers "
                              "combined; add parser")
    if dev is None:
        raise ArborparseError("an ensemble needs dev data (--dev): its members' probabilities "
                              "are fitted on it, and the share of each member is chosen on it")
    if resume and path is None:
        raise ArborparseError("resume continues the training of a model file: give its path "
                              "(--model)")
    train, dev = (source if isinstance(source, (str, os.PathLike)) else list(source)
                  for source in (train, dev))  # read once by each member
    inputs = [source for source in (train, dev) if isinstance(source, (str, os.PathLike))]
    model_files.check_output(path, inputs, model=True, force=force)
    paths = {family: None if path is None else f"{path}.{family}" for family, *_ in MEMBERS}
    begun = [p for p in paths.values() if p is not None and any(
        os.path.exists(p + end) for end in ("", ".checkpoint", ".tags"))]
    if begun and not resume and not force:
        raise ArborparseError(f"{begun[0]} holds a member of an interrupted ensemble training "
                              f"of {path}: continue it with resume (--resume), or start again "
                              "with force (--force)")
    if resume and not begun:
        raise ArborparseError(f"resume: nothing of an ensemble training of {path} is there "
                              f"(its members are trained as {' and '.join(paths.values())})")
    if not resume and not force and path is not None and os.path.isfile(path) and \
            model_files.is_model(path):
        warnings.warn(f"{path} holds a model, which this training replaces once both members "
                      "are trained (Ctrl-C before then keeps it); to keep it, give another "
                      "path; to replace it unwarned, force (--force)", stacklevel=3)
    data = {"train": sentences_of(train, fmt, "train")[1],
            "dev": sentences_of(dev, fmt, "dev")[1]} if resume else None
    members = []
    for n, (family, what, their_parts) in enumerate(MEMBERS, 1):
        member = paths[family]
        if progress:
            print(f"ensemble, {n} of {STAGES}: the {what}" + (f" ({member})" if member else ""),
                  file=sys.stderr)
        finished = resume and os.path.exists(member) and \
            not os.path.exists(f"{member}.checkpoint")
        if finished:
            members.append(load(member))
            differ = _other_data(members[-1].info.get("data"), data)
            if differ:
                raise ArborparseError(f"{member}: the interrupted training had other "
                                      f"{', '.join(differ)}; resume with the same data")
            continue
        from arborparse.trainer import train as trained

        try:
            members.append(trained(
                train, dev, family=family, components=their_parts or parts,
                progress=progress, path=member,
                resume=resume and os.path.exists(f"{member}.checkpoint"), force=force,
                lang=lang, fmt=fmt, seed=table.seed,
                **({"folds": folds} if their_parts is None else {})))
        except TrainingInterrupted as err:
            raise TrainingInterrupted(err.epoch, err.path, message=(
                f"{err}: the ensemble's {what} (stage {n} of {STAGES})" + (
                    f", which resuming the ensemble (--model {path} --resume) continues"
                    if path is not None else ""))) from None
    if progress:
        print(f"ensemble, {STAGES} of {STAGES}: the linear parser's share, chosen on dev",
              file=sys.stderr)

    def report(weight, scores):
        if progress:
            print(f"weight {weight:.1f}: dev UAS {scores['UAS']:.2f}  LAS {scores['LAS']:.2f}",
                  file=sys.stderr)
    # its training time: the members' (as they record it, a resumed run's included) and
    # the combination's
    model = combine(*members, dev, fmt=fmt, report=report, progress=progress)
    said = _below_a_member(model.info["scores"], members)
    for warning in said:
        warnings.warn(warning, stacklevel=3)
    model = Pipeline(model.tagger, model.lemmatizer, model.parser, model.tokenizer,
                     {**model.info, "options": {**model.info["options"], "seed": table.seed},
                      "warnings": model.info["warnings"] + said})
    if path is not None:
        model.save(path, force=True)  # checked above
        for member in paths.values():
            for end in ("", ".checkpoint", ".tags"):
                if os.path.exists(member + end):
                    os.remove(member + end)
    if progress:
        _say_trained(model, path)
    return model


def _below_a_member(scores: dict, members: list[Pipeline]) -> list[str]:
    """The model's warning where the ensemble's dev LAS at its weight is below a member's
    own (as its training scored it: the linear one with its second-stage labeler, which the
    mixture does without): there one member did not learn enough to help the other."""
    own = {family: (m.info.get("scores") or {}).get("LAS")
           for (family, *_), m in zip(MEMBERS, members)}
    family, best = max(((f, las) for f, las in own.items() if las is not None),
                       key=lambda pair: pair[1], default=(None, None))
    if best is None or scores.get("LAS") is None or scores["LAS"] >= best:
        return []
    return [f"the ensemble's dev LAS ({scores['LAS']:.2f}) is below its {family} member's "
            f"alone ({best:.2f}): the other member adds nothing here (too little data?); "
            f"train the {family} model alone (--model-type {family})"]
