"""`EnsembleParser`: two trained parsers (of the families with marginals: linear, neural)
parsing as one (model kind ``ensemble``).

With the weight w of the first, each sentence's tree is the one of the highest sum of
w P₁(h → m) + (1 − w) P₂(h → m) over its arcs, the head marginals of each parser (at its
temperatures, fitted on dev: the two are probabilities on the same scale): the tree of the
most expected correct heads under the mixture (minimum Bayes risk, Smith & Smith 2007 §4),
non-projective (``mst``) or projective (``eisner``). Each word's label is the most probable
one under w P₁(l | tree) + (1 − w) P₂(l | tree), each parser's label distribution under that
tree (`label_distributions`). ``HeadProb`` and ``LabelProb`` are the mixture's. The tags are
the first parser's where it tags (a neural one), else the input's.

Where one member is linear and the other neural, the neural member parses first and its
head marginals prune the linear member's arcs, as a first-order model prunes a second-order
one (Koo & Collins 2010): an arc whose neural marginal is below `PRUNE` times that of the
word's most probable head is left out of the linear member's trees (`left_out`), unless it
is in the neural member's best projective tree or joins two neighbours (which no reach of
the linear member leaves out, so that a tree is always left: the neighbours' chain under the
neural tree's root word). The linear member's marginals are then over the trees without
those arcs, at every weight (so that `combine` scores each weight on dev as the model
parses at it). On French-GSD dev (its linear member at order 2 with grandparents, the
weight 0.3) the linear member kept 10.3 arcs a word, 99.69 % of the gold arcs, in 0.43 of
its time, and the mixture's UAS moved from 87.40 to 87.47 (bench/RESULTS.md).
"""

from __future__ import annotations

import math
import numbers
from collections import deque
from collections.abc import Iterable, Iterator

import numpy as np

from arborparse import registry
from arborparse.errors import ArborparseError
from arborparse.io import model_files as files
from arborparse.io.chunks import chunks
from arborparse.io.conllu import Sentence
from arborparse.io.validate import only_sentences
from arborparse.ensemble.options import DECODERS, EnsembleOptions
from arborparse.options import Capabilities, check_options, tagging
from arborparse.pipeline import check_tagged, component, entry_of
from arborparse.trees.decode import best_tree

KIND = "ensemble"
VERSION = 1
MEMBERS = ("first", "second")
CHUNK = 256  # sentences parsed together (a neural parser batches them)
PRUNE = 1e-4  # of the best head's neural marginal: below it, a linear member's arc is left out


def _tag_options(parser, **options) -> dict:
    """`options` (retag, keep_tags) where `parser` tags, else none."""
    return options if parser.capabilities.tags else {}


def left_out(mu: np.ndarray, single_root: bool) -> np.ndarray:
    """The arcs ((n+1, n+1) booleans) a linear member leaves out of its trees given the
    neural member's head marginals `mu`: each below `PRUNE` times its word's highest, but
    those of mu's best projective tree (with one root word where `single_root`) and those
    between neighbours; and every arc into the root."""
    keep = mu >= PRUNE * mu.max(axis=0, keepdims=True)
    heads = best_tree(np.ascontiguousarray(mu, dtype=np.float64), True, single_root)
    words = np.arange(1, len(heads))
    keep[heads[1:], words] = True
    keep[words[:-1], words[1:]] = keep[words[1:], words[:-1]] = True
    keep[:, 0] = False
    return ~keep


def _tagged(sentences: Iterable[Sentence]) -> Iterator[Sentence]:
    """The sentences, refused where one has no tags (`check_tagged`)."""
    for sentence in sentences:
        check_tagged([sentence])
        yield sentence


class EnsembleParser:
    """Parameters
    ----------
    first, second : trained parsers with marginals (`capabilities.marginals`)
    weight : w, the first's share of the mixture, 0..1 (1: the first alone, decoded from
        its marginals, a linear one's arcs pruned by a neural second; 0: the second
        alone, likewise)
    decoder : ``"mst"`` or ``"eisner"``, the default of `parse` (the mixture's tree;
        None: the first parser's)
    """

    kind = KIND

    def __init__(self, first, second, weight: float, decoder: str | None = None):
        for name, parser in zip(MEMBERS, (first, second)):
            if not parser.capabilities.marginals or not hasattr(parser, "iter_mixture"):
                raise ArborparseError(f"the {name} parser ({parser.kind}) cannot be mixed: an "
                                      "ensemble mixes the marginals of linear and neural "
                                      "parsers")
        if isinstance(weight, bool) or not isinstance(weight, numbers.Real) or \
                not math.isfinite(weight) or not 0 <= weight <= 1:
            raise ArborparseError(f"weight={weight!r}: give a number from 0 to 1 (the first "
                                  "parser's share)")
        decoder = first.decoder if decoder is None else decoder
        if decoder not in DECODERS:
            raise ArborparseError(f"unknown decoder {decoder!r}; choose one of {DECODERS}")
        self.first, self.second = first, second
        self.weight, self.decoder = float(weight), decoder
        self.single_root = first.single_root
        self.labels = list(dict.fromkeys([*first.labels, *second.labels]))
        place = {label: i for i, label in enumerate(self.labels)}
        self._columns = [np.array([place[label] for label in parser.labels], dtype=np.int64)
                         for parser in (first, second)]

    @property
    def members(self) -> tuple:
        return self.first, self.second

    @property
    def capabilities(self):
        """`EnsembleOptions.parses`, and tags where the first parser tags."""
        return EnsembleOptions.parses | Capabilities(tags=self.first.capabilities.tags)

    # ------------------------------------------------------------------ parsing

    def members_parse(self, sentences: Iterable[Sentence], retag: bool = False,
                      keep_tags: bool = False) -> Iterator[list[tuple[tuple, tuple]]]:
        """What each parser mixes of each sentence (its `iter_mixture`: the sentence, its
        head marginals, what its label distributions read), the first's and the second's,
        lazily, in chunks of `CHUNK`; the second reads the first's sentences (its tags).
        Where a neural member prunes a linear one (`pruner`), it parses each chunk first."""
        pruner = self.pruner
        if pruner == 1:
            yield from chunks(self._pruned_first(sentences), CHUNK)
            return
        firsts = self.first.iter_mixture(sentences, **_tag_options(
            self.first, retag=retag, keep_tags=keep_tags))
        for chunk in chunks(firsts, CHUNK):
            cuts = {} if pruner is None else {"left_out": [
                left_out(mu, self.second.single_root) for _, mu, _ in chunk]}
            seconds = self.second.iter_mixture([s for s, _, _ in chunk], **_tag_options(
                self.second, keep_tags=True), **cuts)
            yield list(zip(chunk, seconds, strict=True))  # to its end: its warnings too

    @property
    def pruner(self) -> int | None:
        """The member (0: the first, 1: the second) whose head marginals prune the other's
        arcs: the neural one, where the other is linear; else None."""
        kinds = [registry.canonical(parser.kind) for parser in self.members]
        return kinds.index("neural") if sorted(kinds) == ["linear", "neural"] else None

    def _pruned_first(self, sentences: Iterable[Sentence]) -> Iterator[tuple[tuple, tuple]]:
        """`members_parse`'s pairs, one by one, of a linear first parser pruned by a neural
        second: the second parses each chunk of the input (its tags as given) before the
        first reads it, in one stream (its warnings given once, at the end)."""
        parsed, pending = deque(), deque()  # the second's, before and after its cut is read

        def read() -> Iterator[Sentence]:
            for chunk in chunks(only_sentences(sentences), CHUNK):
                parsed.extend(self.second.iter_mixture(chunk, keep_tags=True))
                yield from chunk

        def cuts() -> Iterator[np.ndarray]:
            while parsed:  # the first reads a sentence, then its cut
                pending.append(parsed.popleft())
                yield left_out(pending[-1][1], self.first.single_root)
        for first in self.first.iter_mixture(read(), left_out=cuts()):
            yield first, pending.popleft()

    def heads(self, first: tuple, second: tuple, decoder: str | None = None
              ) -> tuple[np.ndarray, np.ndarray]:
        """(the mixture's tree, its head marginals (n+1, n+1)) of a sentence as the two
        parsers give it (`members_parse`)."""
        w = self.weight
        mu = w * first[1] + (1 - w) * second[1]
        heads = best_tree(np.ascontiguousarray(mu, dtype=np.float64),
                          (decoder or self.decoder) == "eisner", self.single_root)
        return heads, mu

    def member_distributions(self, pairs: list[tuple[tuple, tuple]], trees: list
                             ) -> list[tuple[np.ndarray, np.ndarray]]:
        """Each parser's label distributions (`label_distributions`) of each sentence
        (`members_parse`'s pairs) under its tree, (n, L) over `labels`: a pair per
        sentence."""
        spread = []
        for k, (parser, columns) in enumerate(zip(self.members, self._columns)):
            found = []
            sentences, prepared = [p[k][0] for p in pairs], [p[k][2] for p in pairs]
            for s, own in zip(sentences, parser.label_distributions(sentences, trees,
                                                                    prepared)):
                wide = np.zeros((len(s), len(self.labels)))
                wide[:, columns] = own
                found.append(wide)
            spread.append(found)
        return list(zip(*spread))

    def mixed(self, members: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
        """The mixture at the weight of the two parsers' label distributions of a sentence
        (`member_distributions`): (n, L), each row summing to 1."""
        return self.weight * members[0] + (1 - self.weight) * members[1]

    def labeled(self, first: Sentence, heads: np.ndarray, mu: np.ndarray | None,
                distribution: np.ndarray) -> Sentence:
        """The sentence as the first parser tagged it with the tree `heads`, the best label
        of each word in `distribution` (`mixed`), and, given the mixture's head marginals
        `mu`, ``HeadProb`` and ``LabelProb`` and ``analysis["heads"]``."""
        best = distribution.argmax(axis=1)
        parsed = first.with_tree(heads, [self.labels[i] for i in best])
        parsed.analysis = None  # what an earlier parse left: the mixture's alone, if any
        if mu is None:
            return parsed
        words = np.arange(1, len(heads))
        return parsed.with_misc([f"HeadProb={h:.4f}|LabelProb={lp:.4f}" for h, lp in zip(
            mu[heads[1:], words], distribution[words - 1, best])]).with_analysis(heads=mu)

    def iter_parse(self, sentences: Iterable[Sentence], **options) -> Iterator[Sentence]:
        """Parse lazily, a chunk of sentences at a time; options as in `parse`."""
        check_options(self, options)
        retag, keep_tags = tagging(options)
        decoder, marginals = options.get("decoder"), bool(options.get("marginals"))
        if keep_tags and not self.second.capabilities.tags:  # the second reads the tags
            sentences = _tagged(sentences)
        for chunk in self.members_parse(sentences, retag, keep_tags):
            trees = [self.heads(first, second, decoder) for first, second in chunk]
            spreads = self.member_distributions(chunk, [heads for heads, _ in trees])
            for (first, _), (heads, mu), spread in zip(chunk, trees, spreads):
                yield self.labeled(first[0], heads, mu if marginals else None,
                                   self.mixed(spread))

    def parse(self, sentences: Iterable[Sentence], **options) -> list[Sentence]:
        """Every sentence with HEAD and DEPREL of the mixture (see the module docstring).

        decoder : ``"mst"`` or ``"eisner"``, the mixture's tree (default: the ensemble's)
        marginals : add the mixture's ``HeadProb`` and ``LabelProb``, and its head marginals
            to each sentence's ``analysis["heads"]``
        retag, keep_tags : where the first parser tags, tag every sentence, or none
        """
        return list(self.iter_parse(sentences, **options))

    # ------------------------------------------------------------------ model files

    def parts(self) -> tuple[dict, dict]:
        """(header, arrays) of the model file: each parser's entry and arrays under its
        name (``first``, ``second``)."""
        header, arrays = {"weight": self.weight, "decoder": self.decoder, "members": {}}, {}
        for name, parser in zip(MEMBERS, self.members):
            header["members"][name], parts = entry_of(parser)
            arrays.update(files.nested(name, parts))
        return header, arrays

    def save(self, path, force: bool = False) -> None:
        files.save(path, KIND, VERSION, *self.parts(), force=force)

    @classmethod
    def load(cls, path) -> EnsembleParser:
        return cls.from_parts(*files.load(path, KIND, VERSION), path)

    @classmethod
    def from_parts(cls, header: dict, arrays: dict, path) -> EnsembleParser:
        members = header.get("members")
        if not isinstance(members, dict) or set(members) != set(MEMBERS):
            raise files.ModelFileError(f"{path}: the ensemble's header names no first and "
                                       "second parser")
        found = [component("parser", members[name], files.inner(name, arrays), path,
                           f"the ensemble's {name} parser") for name in MEMBERS]
        try:
            return cls(*found, header.get("weight"), header.get("decoder"))
        except ArborparseError as e:
            raise files.ModelFileError(f"{path}: the ensemble model file is invalid ({e})") \
                from None
