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
    for a family whose parser is made of other families' trained parsers) and `trains`
    (for such a family, what `arborparse.train` hands its training to: a callable taking
    `arborparse.train`'s arguments, the family's options among them)."""

    options: str
    parser: str
    trainer: str | None
    trains: str | None = None


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
                       "arborparse.ensemble.parser:EnsembleParser", None,
                       "arborparse.ensemble.train:train"),
}
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


def trainer(name: str, options, **context):
    """The trainer of the family `name` for `options` (see `Family`); ArborparseError for
    a family without one of its own (`trains` trains it)."""
    where = FAMILIES[canonical(name)].trainer
    if where is None:
        raise ArborparseError(f"the {canonical(name)} family has no trainer of its own: "
                              f"arborparse.train(..., family={canonical(name)!r}) trains it")
    return resolve(where)(options, **context)


def trains(name: str):
    """What trains a model of the family `name` whose parser is made of other families'
    (`Family.trains`), or None for a family with a trainer of its own."""
    where = FAMILIES[canonical(name)].trains
    return None if where is None else resolve(where)
