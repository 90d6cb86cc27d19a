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

from arborparse.ensemble.combine import combine, report_on_stderr
from arborparse.ensemble.options import EnsembleOptions
from arborparse.errors import ArborparseError, warn
from arborparse.io import model_files
from arborparse.pipeline import Pipeline, load
from arborparse.training import TrainingInterrupted, interrupt_says

# the members: (family, what it is called, its components: None for the ensemble's)
MEMBERS = (("linear", "linear pipeline", None), ("neural", "neural parser", ["parser"]))
STAGES = len(MEMBERS) + 1  # the members' trainings, then the weight chosen on dev
FILES = ("", ".checkpoint", ".front", ".tags")  # a member's: its model, checkpoint, front end
# and jackknifed tags
BEGUN = (".checkpoint", ".front")  # a member's files that say its training was interrupted


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
        os.path.exists(p + end) for end in FILES)]
    if begun and not resume and not force:
        raise ArborparseError(f"{begun[0]} holds a member of an interrupted ensemble training "
                              f"of {path}: continue it with resume (--resume), or start again "
                              "with force (--force)")
    if resume and not begun:
        raise ArborparseError(f"resume: nothing of an ensemble training of {path} is there "
                              f"(its members are trained as {' and '.join(paths.values())})")
    if not resume and not force and path is not None and os.path.isfile(path) and \
            model_files.is_model(path):
        warn(f"{path} holds a model, which this training replaces once both members "
             "are trained (Ctrl-C before then keeps it); to keep it, give another "
             "path; to replace it unwarned, force (--force)")
    data = {"train": sentences_of(train, fmt, "train")[1],
            "dev": sentences_of(dev, fmt, "dev")[1]} if resume else None
    members = []
    for n, (family, what, their_parts) in enumerate(MEMBERS, 1):
        member, their_parts = paths[family], their_parts or parts
        if progress:
            print(f"ensemble, {n} of {STAGES}: the {what}" + (f" ({member})" if member else ""),
                  file=sys.stderr)
        interrupted = member is not None and any(os.path.exists(member + end)
                                                 for end in BEGUN)
        if resume and os.path.exists(member) and not interrupted:
            members.append(load(member))  # finished: what it was trained as is checked
            differ = _other_data(members[-1].info.get("data"), data) + _other_member(
                members[-1].info, family, their_parts, table)
            if differ:
                raise ArborparseError(f"{member}: the interrupted training had other "
                                      f"{', '.join(differ)}; resume with the same data and "
                                      "options, or start again with force (--force)")
            continue
        from arborparse.trainer import train as trained

        try:
            members.append(trained(
                train, dev, family=family, components=their_parts, progress=progress,
                path=member, resume=resume and interrupted,
                force=force, lang=lang, fmt=fmt, seed=table.seed, multi_root=table.multi_root,
                **({"folds": folds} if family == "linear" else {})))
        except TrainingInterrupted as err:
            raise TrainingInterrupted(err.epoch, err.path, message=(
                f"{err} (in the ensemble's {what}, stage {n} of {STAGES})"
                f"{_to_go_on(path, paths)}")) from None
    if progress:
        print(f"ensemble, {STAGES} of {STAGES}: the linear parser's share, chosen on dev",
              file=sys.stderr)

    # its training time: the members' (as they record it, a resumed run's included) and
    # the combination's
    kept = "" if path is None else f": both members are kept ({', '.join(paths.values())})"
    with interrupt_says(f"training interrupted while choosing the members' shares on dev "
                        f"(stage {STAGES} of {STAGES}){kept}{_to_go_on(path, paths)}"):
        model = combine(*members, dev, fmt=fmt, progress=progress,
                        report=report_on_stderr if progress else None)
    better = _better_member(model.info["scores"], members)
    said = [] if better is None else [_below(model.info["scores"], *better, paths)]
    for warning in said:
        warn(warning)
    own = {k: v for k, v in (members[0].info.get("scores") or {}).items()
           if k not in ("UAS", "LAS")}  # the front end's: tags, lemmas, sentence ends
    model = Pipeline(model.tagger, model.lemmatizer, model.parser, model.tokenizer, {
        **model.info, "scores": {**own, **model.info["scores"]},
        "options": {**model.info["options"], "seed": table.seed,
                    "multi_root": table.multi_root},
        "warnings": model.info["warnings"] + said})
    if path is not None:
        model.save(path, force=True)  # checked above
        better_alone = None if better is None else paths[better[0]]
        for left in (member + end for member in paths.values() for end in FILES):
            if left != better_alone and os.path.exists(left):
                os.remove(left)
    if progress:
        _say_trained(model, path)
    return model


def _to_go_on(path, paths: dict) -> str:
    """How to go on after an interrupt, where a member (or its checkpoint) is there to go
    on from."""
    if path is None or not any(os.path.exists(p + end) for p in paths.values()
                               for end in ("", *BEGUN)):
        return ""
    return f"; to go on, resume the ensemble (--model {path} --resume)"


def _other_member(info: dict, family: str, parts: list[str], table) -> list[str]:
    """What differs between a finished member's model record and the member this training
    makes (its family, components, seed and whether it allows several roots)."""
    options = info.get("options") or {}
    differ = [f"family {info.get('family')!r} (now {family!r})"] \
        if info.get("family") != family else []
    differ += [f"components {info.get('components')!r} (now {parts!r})"] \
        if info.get("components") != parts else []
    return differ + [f"{name} {options.get(name)!r} (now {getattr(table, name)!r})"
                     for name in ("seed", "multi_root")
                     if options.get(name, False) != getattr(table, name)]


def _better_member(scores: dict, members: list[Pipeline]) -> tuple[str, float] | None:
    """(family, dev LAS) of the member whose own dev LAS (as its training scored it: its
    tree decoded as it parses alone, not the mixture's most expected correct heads) is
    above the ensemble's at its weight, the higher where both are; else None."""
    own = [(family, (m.info.get("scores") or {}).get("LAS"))
           for (family, *_), m in zip(MEMBERS, members)]
    own = [(family, las) for family, las in own if las is not None]
    best = max(own, key=lambda pair: pair[1], default=None)
    if best is None or scores.get("LAS") is None or scores["LAS"] >= best[1]:
        return None
    return best


def _below(scores: dict, family: str, las: float, paths: dict) -> str:
    """The model's warning where a member alone is better on dev (`_better_member`)."""
    kept = f"; it is kept at {paths[family]}" if paths[family] is not None else \
        f"; train it alone (--model-type {family})"
    return (f"the ensemble's dev LAS ({scores['LAS']:.2f}) is below that of its {family} "
            f"member parsing alone ({las:.2f}): that model alone serves this data better"
            f"{kept}")
