"""`Parser`: a trained first-order model with its decoder; parses sentences, saves, loads."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from arborparse.errors import ArborparseError
from arborparse.io.conllu import Sentence
from arborparse.models.first_order import DECODERS, Encoded, FirstOrderModel, decode


class Parser:
    """A first-order graph-based parser.

    Parameters
    ----------
    model : the trained `FirstOrderModel`
    decoder : ``"mst"`` (non-projective) or ``"eisner"`` (projective)
    single_root : exactly one word attached to the root
    """

    def __init__(self, model: FirstOrderModel, decoder: str = "mst", single_root: bool = True):
        if decoder not in DECODERS:
            raise ArborparseError(f"unknown decoder {decoder!r}; choose one of {DECODERS}")
        self.model = model
        self.decoder = decoder
        self.single_root = single_root

    @classmethod
    def load(cls, path) -> Parser:
        """Read a model file written by `save` (refuses other kinds and versions)."""
        model, header = FirstOrderModel.load(path)
        return cls(model, header["decoder"], header["single_root"])

    def save(self, path) -> None:
        """Write the model atomically (see `arborparse.models.files`)."""
        self.model.save(path, self.decoder, self.single_root)

    def parse_one(self, sentence: Sentence, decoder: str | None = None) -> Sentence:
        """The sentence with HEAD and DEPREL predicted (nothing else changes)."""
        x = Encoded.of(sentence)
        heads, labels = decode(self.model.scores(x), decoder or self.decoder, self.single_root)
        names = self.model.labels
        return sentence.with_tree(heads, [names[label] for label in labels[1:]])

    def iter_parse(self, sentences: Iterable[Sentence], decoder: str | None = None
                   ) -> Iterator[Sentence]:
        """Parse lazily, one sentence at a time (for streams)."""
        for sentence in sentences:
            yield self.parse_one(sentence, decoder)

    def parse(self, sentences: Iterable[Sentence], decoder: str | None = None) -> list[Sentence]:
        """Parse every sentence; `decoder` overrides the model's decoder."""
        return list(self.iter_parse(sentences, decoder))
