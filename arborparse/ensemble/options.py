"""The ensemble's option table, `EnsembleOptions`: what its training takes (`arborparse.
ensemble.train`: a linear pipeline and a neural parser, each with its family's defaults,
combined) and what its models offer when they parse."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from arborparse import registry
from arborparse.errors import ArborparseError
from arborparse.options import Capabilities, FamilyOptions, option

DECODERS = ("mst", "eisner")


@dataclass(frozen=True)
class EnsembleOptions(FamilyOptions):
    """Two trained parsers' marginals mixed (`arborparse.ensemble`)."""

    family = "ensemble"
    components = ("tokenizer", "tagger", "lemmatizer", "parser")  # the linear member's
    parses = Capabilities(marginals=True, decoders=DECODERS, why_not=(
        ("decode_as", "an ensemble's tree is always the one of the most expected correct "
                      "heads under its mixture of marginals (MBR)"),
        ("kbest", "an ensemble gives one tree per sentence"),
        ("threads", "an ensemble parses in one thread")))

    seed: int = option(0, int, "Seed of both members' trainings (each member takes its "
                       "family's defaults otherwise; train members of your own and join "
                       "them with arborparse combine for other options).", low=0)
    multi_root: bool = option(False, bool, "Allow several words attached to the root, in "
                              "both members (default: exactly one).")

    @classmethod
    def offers(cls, header: dict) -> Capabilities:
        """Marginals and either decoder (of the mixture's tree); tags where its first parser
        tags (a neural one), as that parser's family says from its header entry."""
        try:
            first = header["members"]["first"]
            tags = registry.options_table(first["kind"]).offers(first.get("header") or {}).tags
        except (ArborparseError, KeyError, TypeError, AttributeError):
            tags = False  # a damaged header: loading the model says what is wrong
        return dataclasses.replace(cls.parses, tags=tags)
