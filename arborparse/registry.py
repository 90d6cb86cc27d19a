"""The families by name: where each keeps its option table, its parser and its trainer.

Everything above the families (the pipeline, `train`, the command line, the service) finds
a family here, by name, and imports its modules on demand, so that loading one family never
pays for another's dependencies and adding a family means adding one line below.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module

from arborparse.errors import ArborparseError


@dataclass(frozen=True)
class Family:
    """Where a family keeps its pieces, as ``"module:attribute"``: `options` (its
    `FamilyOptions` table), `parser` (the class that loads its model files), `trainer` (a
    callable ``(options, *, dev, progress, checkpoint, resume, client) -> trainer``; None
    for a family made otherwise than by training, `MADE`)."""

    options: str
    parser: str
    trainer: str | None


FAMILIES = {
    "linear": Family("arborparse.linear.options:LinearOptions",
                     "arborparse.linear.parser:LinearParser",
                     "arborparse.linear.train:trainer"),
    "isbn": Family("arborparse.isbn.options:ISBNOptions",
                   "arborparse.isbn.parser:ISBNParser",
                   "arborparse.isbn.train:ISBNTrainer.from_options"),
    "neural": Family("arborparse.neural.options:NeuralOptions",
                     "arborparse.neural.parser:NeuralParser",
                     "arborparse.neural.train:NeuralTrainer.from_options"),
    "ensemble": Family("arborparse.ensemble.options:EnsembleOptions",
                       "arborparse.ensemble.parser:EnsembleParser", None),
}
# how the families without a trainer are made
MADE = {"ensemble": "arborparse combine FIRST SECOND --dev DEV (arborparse.combine) mixes two "
                    "trained models' parsers"}
TRAINED = tuple(name for name, family in FAMILIES.items() if family.trainer is not None)
# older names, still read in scripts and model files
ALIASES = {"first-order": "linear"}


def canonical(name: str) -> str:
    """The family's name (an alias resolved); ArborparseError for an unknown one."""
    name = ALIASES.get(name, name)
    if name not in FAMILIES:
        raise ArborparseError(f"unknown family {name!r}; choose one of "
                              f"{', '.join(FAMILIES)}")
    return name


def resolve(where: str):
    """The object at ``"module:attribute"`` (the attribute may be dotted)."""
    module, path = where.split(":")
    found = import_module(module)
    for attribute in path.split("."):
        found = getattr(found, attribute)
    return found


def options_table(name: str):
    """The `FamilyOptions` class of the family `name`."""
    return resolve(FAMILIES[canonical(name)].options)


def parser_class(name: str):
    """The parser class of the family `name` (a model kind)."""
    return resolve(FAMILIES[canonical(name)].parser)


def trained(name: str) -> str:
    """The family's name (`canonical`), refused (ArborparseError) where it is not trained
    but made otherwise (`MADE` says how)."""
    name = canonical(name)
    if name not in TRAINED:
        raise ArborparseError(f"the {name} family is not trained: {MADE[name]}; the trained "
                              f"families are {', '.join(TRAINED)}")
    return name


def trainer(name: str, options, **context):
    """The trainer of the family `name` for `options` (see `Family`)."""
    return resolve(FAMILIES[trained(name)].trainer)(options, **context)
