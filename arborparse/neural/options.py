"""The neural family's training options: one table (`NeuralOptions`), read by
`arborparse.train`, `NeuralTrainer`'s defaults and the command line."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from arborparse.errors import ArborparseError
from arborparse.options import DIRECTORY, FILE, Capabilities, FamilyOptions, option

OBJECTIVES = ("crf", "crf-projective", "crf2o", "max-margin", "local")
SIZED, MAX_EPOCHS = 3000, 120  # `NeuralOptions.by_size`
PROJECTIVE = ("crf-projective", "crf2o")  # trained on projectivized trees, decoded by eisner


@dataclass(frozen=True)
class NeuralOptions(FamilyOptions):
    """A BiLSTM over words and characters with biaffine scores, trained with a tree
    objective; it also tags and lemmatizes."""

    family = "neural"
    components = ("tokenizer", "parser")
    parses = Capabilities(tags=True, marginals=True, mbr=True, kbest=True,
                          decoders=("mst", "eisner"))

    @classmethod
    def offers(cls, header: dict) -> Capabilities:
        """A crf2o model's marginals are second-order: it decodes projectively and keeps no
        k-best lists."""
        if header.get("objective") == "crf2o":
            return replace(cls.parses, kbest=False, decoders=("eisner",), why_not=(
                ("kbest", "a crf2o model keeps no k-best lists (train with objective crf "
                 "for them)"),
                ("decoder=mst", "a crf2o model decodes projectively")))
        return cls.parses

    @property
    def calibrated_on_dev(self) -> bool:
        """Always: a network trained to a tree objective is overconfident (its temperatures
        are fitted on dev at the end of the training, `NeuralParser.calibrate`)."""
        return True

    @classmethod
    def of(cls, given: dict) -> NeuralOptions:
        """As every family's, and refusing a word dimension beside word vectors (theirs is
        the dimension)."""
        table = super().of(given)
        if given.get("word_dim") is not None and table.embeddings is not None:
            raise ArborparseError("word_dim: the word vectors of embeddings set the word "
                                  "dimension; leave word_dim out")
        return table

    @classmethod
    def by_size(cls, sentences: int, given: dict) -> dict:
        """Passes and patience scaled by the data: 40 passes (patience 10) from SIZED
        sentences up, more for fewer (a pass over 400 sentences is a fifth of the steps
        those take), up to MAX_EPOCHS, patience a quarter of the passes."""
        epochs = round(40 * math.sqrt(SIZED / max(sentences, 1)))
        epochs = min(MAX_EPOCHS, max(40, epochs))
        return {"epochs": epochs, "patience": max(10, epochs // 4)}

    objective: str = option(
        "crf", str, "The arc objective: the tree CRF (Matrix-Tree), the projective tree CRF "
        "(inside-outside), the second-order projective tree CRF (arcs and adjacent "
        "siblings, decoded by MBR), structured max-margin (cost-augmented MST), or local "
        "head selection (cross-entropy per word).", choices=OBJECTIVES)
    hidden: int = option(200, int, "BiLSTM units per direction.", low=1)
    layers: int = option(2, int, "BiLSTM layers.", low=1)
    word_dim: int = option(100, int, "Word embedding size (given by --embeddings when "
                           "those are given).", low=1)
    dropout: float = option(0.33, float, "Dropout of the embeddings and the BiLSTM.", low=0,
                            high=0.95)
    word_dropout: float = option(0.0, float, "In training, each word read as the unknown "
                                 "word at this rate (its characters still read).", low=0,
                                 high=0.95)
    embeddings: str | None = option(
        None, FILE, "Word vectors (text format: a word and its numbers per line) to start "
        "the word embeddings from.")
    transformer: str | None = option(
        None, DIRECTORY, "A pretrained transformer's local directory (save_pretrained's, "
        "safetensors weights, a fast tokenizer), frozen, its word vectors added to the "
        "encoder's input; the model file names it. Needs arborparse[transformer].")
    batch_size: int = option(32, int, "Sentences per step.", low=1)
    learning_rate: float = option(0.002, float, "Adam's initial rate.", low=0.0, high=1.0)
    decay_steps: int = option(5000, int, "Adam's rate falls by a quarter every this many "
                              "steps.", low=1)
    epochs: int = option(40, int, "At most this many passes over the training data "
                         "(arborparse train's default: 40 from 3,000 training sentences up, "
                         "more for fewer, up to 120).", low=1, may_change=True)
    patience: int = option(10, int, "Stop after this many epochs without a better dev LAS "
                           "(arborparse train's default: 10, or a quarter of its default "
                           "epochs when those are more).", low=1, may_change=True)
    decoder: str | None = option(None, str, "Decoder for parsing (default: eisner for "
                                 "crf-projective and crf2o, which takes no other, else mst).",
                                 choices=("mst", "eisner"))
    multi_root: bool = option(False, bool, "Allow several words attached to the root "
                              "(default: exactly one).")
    seed: int = option(0, int, "Seed of the initial weights, the shuffling and dropout.",
                       low=0)
    threads: int = option(1, int, "CPU threads for training (more were slower on this "
                          "network's small matrices).", low=1, may_change=True)
