"""`ISBNParser`: a trained ISBN with its vocabularies; parses by beam search, scores trees,
saves and loads (model kind ``isbn``).

Single-rooted output [OURS]: the transitions never attach a word to the root, so a
derivation may leave several words without a head. The parser takes the most probable
derivation of the final beam that leaves exactly one; if none does, the best one, keeping
its leftmost headless word as the root and attaching the others to it with the label most
frequent for their UPOS under a root word in training. (Masks that admit single-rooted
derivations only, in training and search, did worse: a word left on the stack then blocks
every arc over it, and on Gothic-PROIEL dev LAS fell from 78.3 to 77.1.)
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import numpy as np
import torch
from scipy.special import logsumexp

from arborparse.io.conllu import Sentence
from arborparse.io import model_files as files
from arborparse.io.validate import check_tree, require_tags
from arborparse.isbn.history import FEATURE_SETS, Derivation, Inputs, Tokens, decisions_of
from arborparse.isbn.network import Batch, Network
from arborparse.isbn.options import ISBNOptions
from arborparse.isbn.search import Scorer, beam_search
from arborparse.isbn.vocab import Vocabulary
from arborparse.options import check_options
from arborparse.transforms import lift, lower

KIND = "isbn"
VERSION = 2


def one_root(sentence: Sentence, vocab: Vocabulary) -> Sentence:
    """The sentence with every root word but the first attached to the first, labelled
    with `vocab.root_dependent` of its UPOS."""
    roots = np.flatnonzero(sentence.heads == 0)
    if len(roots) < 2:
        return sentence
    heads, labels = sentence.heads.copy(), list(sentence.deprels)
    for m in roots[1:]:
        heads[m], labels[m - 1] = roots[0], vocab.root_dependent(sentence.upos[m - 1])
    return sentence.with_tree(heads, labels)


class ISBNParser:
    """The generative parser: vocabulary, feature set, network, and the pseudo-projective
    encoding its training trees were lifted with.

    beam, branching : default beam width B and label branching K of `parse`
    single_root : output single-rooted trees (below); otherwise every word left without a
        head is attached to the root (IDP's and MaltParser's rule)
    """

    kind = KIND
    capabilities = ISBNOptions.parses

    def __init__(self, vocab: Vocabulary, network: Network, features: str = "tuned",
                 encoding: str = "head", beam: int = 10, branching: int = 5,
                 single_root: bool = True):
        self.vocab = vocab
        self.network = network
        self.features = features
        self.inputs = Inputs(vocab, FEATURE_SETS[features])
        self.encoding = encoding
        self.beam = beam
        self.branching = branching
        self.single_root = single_root
        self._scorer = None

    @property
    def scorer(self) -> Scorer:
        if self._scorer is None:
            self._scorer = Scorer(self.network)
        return self._scorer

    def refresh(self) -> None:
        """Forget the numpy copy of the weights (after training changed them)."""
        self._scorer = None

    def _search(self, sentence: Sentence, beam: int | None, branching: int | None):
        tokens = Tokens.of(sentence, self.vocab)
        return beam_search(self.scorer, tokens, self.inputs, beam or self.beam,
                           branching or self.branching)

    def parse_one(self, sentence: Sentence, **options) -> Sentence:
        """One sentence parsed; options as in `parse`."""
        return self.parse([sentence], **options)[0]

    def _parse_one(self, sentence: Sentence, beam: int | None,
                   branching: int | None) -> Sentence:
        items = self._search(sentence, beam, branching)
        item = items[0]
        if self.single_root:
            item = next((o for o in items if o.history.config.headless() == 1), item)
        heads, labels = item.history.config.tree(self.vocab.root_label)
        names = [self.vocab.root_label if lab == self.vocab.root_label
                 else self.vocab.labels[lab] for lab in labels]
        parsed = lower(sentence.with_tree(heads, names), self.encoding)
        return one_root(parsed, self.vocab) if self.single_root else parsed

    def iter_parse(self, sentences: Iterable[Sentence], **options) -> Iterator[Sentence]:
        """Parse lazily, one sentence at a time (for streams); options as in `parse`."""
        check_options(self, options)
        beam, branching = options.get("beam"), options.get("branching")
        return (self._parse_one(s, beam, branching) for s in require_tags(sentences))

    def parse(self, sentences: Iterable[Sentence], **options) -> list[Sentence]:
        """Every sentence with HEAD and DEPREL of the most probable tree found.

        beam : beam width B (default: the model's)
        branching : labels K expanded per arc (default: the model's)
        """
        return list(self.iter_parse(sentences, **options))

    def log_probability(self, sentence: Sentence) -> float:
        """log P(tree, sentence) of the sentence's own tree (lifted with the encoding)."""
        check_tree(sentence, single_root=False)
        lifted = lift(sentence, self.encoding)
        derivation = Derivation.of(Tokens.of(lifted, self.vocab), self.inputs,
                                   decisions_of(lifted, self.vocab))
        device = next(self.network.parameters()).device
        with torch.no_grad():
            return float(self.network.log_likelihood(Batch([derivation]).to(device)))

    def sentence_log_probability(self, sentence: Sentence, beam: int | None = None) -> float:
        """An estimate (a lower bound) of log P(sentence): the sum over the trees of the
        final beam."""
        return float(logsumexp([item.logp for item in self._search(sentence, beam, None)]))

    def save(self, path, force: bool = False) -> None:
        files.save(path, KIND, VERSION, *self.parts(), force=force)

    def parts(self) -> tuple[dict, dict]:
        """(header, arrays) of the model file."""
        net = self.network
        header = {"vocabulary": self.vocab.to_json(), "features": self.features,
                  "encoding": self.encoding, "hidden": net.hidden,
                  "latent_links": net.latent_links, "approximation": net.approximation,
                  "beam": self.beam, "branching": self.branching,
                  "single_root": self.single_root}
        arrays = {f"param.{name}": p.detach().cpu().numpy() for name, p in
                  net.named_parameters()}
        return header, arrays

    @classmethod
    def load(cls, path) -> ISBNParser:
        return cls.from_parts(*files.load(path, KIND, VERSION), path)

    @classmethod
    def from_parts(cls, header: dict, arrays: dict, path) -> ISBNParser:
        try:
            vocab = Vocabulary.from_json(header["vocabulary"])
            inputs = Inputs(vocab, FEATURE_SETS[header["features"]])
            net = Network(vocab, inputs, int(header["hidden"]), bool(header["latent_links"]),
                          approximation=header["approximation"])
            state = {name.removeprefix("param."): torch.from_numpy(np.asarray(a))
                     for name, a in arrays.items()}
            net.load_state_dict(state, strict=False)
            missing = {n for n, _ in net.named_parameters()} - set(state)
            if missing:
                raise KeyError(f"missing arrays {sorted(missing)}")
            return cls(vocab, net, header["features"], header["encoding"],
                       int(header["beam"]), int(header["branching"]),
                       bool(header["single_root"]))
        except (KeyError, TypeError, ValueError, RuntimeError) as e:
            raise files.ModelFileError(f"{path}: the ISBN model file is invalid ({e})") from e
