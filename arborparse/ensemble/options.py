"""What an ensemble offers when it parses: `EnsembleOptions`, an option table without
options (an ensemble is made by `arborparse.ensemble.combine`, not trained)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from arborparse import registry
from arborparse.errors import ArborparseError
from arborparse.options import Capabilities, FamilyOptions

DECODERS = ("mst", "eisner")


@dataclass(frozen=True)
class EnsembleOptions(FamilyOptions):
    """Two trained parsers' marginals mixed (`arborparse.ensemble`)."""

    family = "ensemble"
    components = ("tokenizer", "tagger", "lemmatizer", "parser")  # the first model's, as a rule
    parses = Capabilities(marginals=True, decoders=DECODERS, why_not=(
        ("decode_as", "an ensemble's tree is always the one of the most expected correct "
                      "heads under its mixture of marginals (MBR)"),
        ("kbest", "an ensemble gives one tree per sentence"),
        ("threads", "an ensemble parses in one thread")))

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
