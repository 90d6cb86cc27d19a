"""The ISBN family's training options: one table (`ISBNOptions`), read by
`arborparse.train`, `ISBNTrainer`'s defaults and the command line."""

from __future__ import annotations

from dataclasses import dataclass

from arborparse.options import Capabilities, FamilyOptions, option


@dataclass(frozen=True)
class ISBNOptions(FamilyOptions):
    """The generative Incremental Sigmoid Belief Network parser (Titov & Henderson 2007)."""

    family = "isbn"
    components = ("tokenizer", "tagger", "lemmatizer", "parser")
    parses = Capabilities(beam=True)

    hidden: int = option(80, int, "Latent units per state.", low=1)
    features: str = option("tuned", str, "Explicit features (local: stack top and front).",
                           choices=("tuned", "local"))
    latent_links: bool = option(True, bool, "Relation matrices between latent states (off: "
                                "the TF-NA ablation).")
    approximation: str = option("ff", str, "Feed-forward or mean-field (several times "
                                "slower) approximation.", choices=("ff", "mf"))
    pseudo: str = option("head", str, "Pseudo-projective encoding of the training trees.",
                         choices=("head", "path", "head+path"))
    cutoff: int = option(5, int, "Rarer words, bundles and lemmas become #UNKNOWN#.", low=1)
    batch_size: int = option(32, int, "Sentences per step.", low=1)
    learning_rate: float = option(0.005, float, "Initial learning rate (cut when the dev "
                                  "score or the training likelihood gets worse).", low=0.0)
    decay: float = option(0.08, float, "Initial weight decay.", low=0)
    momentum: float = option(0.99, float, "Momentum per sentence.", low=0, high=1)
    clip: float = option(10.0, float, "Largest gradient norm per sentence: a step's gradient "
                         "beyond it is scaled down (0: never). Without it the first steps "
                         "saturate the latent units on small treebanks.", low=0)
    epochs: int = option(10, int, "At most this many passes over the training data.", low=1,
                         may_change=True)
    patience: int = option(10, int, "Stop after this many epochs without a better dev LAS.",
                           low=1, may_change=True)
    beam: int = option(5, int, "Beam width when parsing dev (the model keeps it for "
                       "parsing).", low=1)
    branching: int = option(3, int, "Labels expanded per arc in the search.", low=1)
    multi_root: bool = option(False, bool, "Allow several words attached to the root "
                              "(default: exactly one).")
    seed: int = option(0, int, "Seed of the initial weights and the shuffling.", low=0)
