"""Training the ISBN parser (spec §7): regularized maximum likelihood of the gold derivations
(words included), on a GPU when one is present, by gradient steps with momentum and weight
decay, the learning rate and the decay cut when the development score or the training
likelihood gets worse, early stopping, the best development checkpoint kept.

Batched: sentences of similar length form minibatches whose states are computed step by
step together (`Network.log_likelihood`). IDP updates every 10 sentences,
Δ ← mom¹⁰ Δ + Σ∇ log P, θ ← (θ + ηΔ)(1 − λη); with minibatches of b sentences we apply
Δ ← mom^b Δ + Σ∇, θ ← (θ + ηΔ)(1 − λη)^(b/10), the same per-sentence rates.
"""

from __future__ import annotations

import sys
import time

import numpy as np
import torch
from tqdm import tqdm

from arborparse.errors import ArborparseError
from arborparse.eval import evaluate
from arborparse.io.conllu import Sentence
from arborparse.io.validate import check_tree
from arborparse.isbn.history import FEATURE_SETS, Derivation, Inputs, Tokens, decisions_of
from arborparse.isbn.network import APPROXIMATIONS, Batch, Network
from arborparse.isbn.parser import ISBNParser
from arborparse.isbn.vocab import Vocabulary
from arborparse.training import keeps_best, save_parser
from arborparse.transforms import ENCODINGS, lift


class ISBNTrainer:
    """Parameters
    ----------
    hidden : latent units H (80 in the paper)
    features : ``"tuned"`` or ``"local"`` explicit features
    latent_links : False drops the relation matrices (the TF-NA ablation)
    approximation : ``"ff"`` (feed-forward) or ``"mf"`` (mean field, several times slower)
    single_root : every training tree has exactly one root, and so has every parsed one
        (see `ISBNParser`)
    encoding : pseudo-projective encoding of the training trees
    cutoff, unknown_cutoff : vocabulary frequency cut-offs
    epochs : at most this many passes; patience: stop after this many without a better
        development LAS
    batch_size : sentences per step
    learning_rate, decay, momentum : η₀, λ₀ and the per-sentence momentum
    beam, branching : search during development parsing (B, K)
    """

    def __init__(self, hidden: int = 80, features: str = "tuned", latent_links: bool = True,
                 encoding: str = "head", cutoff: int = 5, unknown_cutoff: int = 5,
                 epochs: int = 20, patience: int = 10, batch_size: int = 32,
                 learning_rate: float = 0.005, decay: float = 0.08, momentum: float = 0.99,
                 beam: int = 5, branching: int = 3, seed: int = 1, progress: bool = True,
                 approximation: str = "ff", single_root: bool = True):
        if features not in FEATURE_SETS or encoding not in ENCODINGS or \
                approximation not in APPROXIMATIONS:
            raise ArborparseError(f"features: one of {tuple(FEATURE_SETS)}; encoding: one of "
                                  f"{ENCODINGS}; approximation: one of {APPROXIMATIONS}")
        if min(hidden, epochs, patience, batch_size, beam, branching) < 1:
            raise ArborparseError("hidden, epochs, patience, batch size, beam and branching "
                                  "must be >= 1")
        self.hidden, self.features, self.latent_links = hidden, features, latent_links
        self.encoding, self.cutoff, self.unknown_cutoff = encoding, cutoff, unknown_cutoff
        self.epochs, self.patience, self.batch_size = epochs, patience, batch_size
        self.learning_rate, self.decay, self.momentum = learning_rate, decay, momentum
        self.beam, self.branching, self.seed, self.progress = beam, branching, seed, progress
        self.approximation = approximation
        self.single_root = single_root

    def _batches(self, derivations: list[Derivation]) -> list[Batch]:
        order = sorted(range(len(derivations)), key=lambda i: len(derivations[i].action))
        return [Batch([derivations[i] for i in order[k:k + self.batch_size]])
                for k in range(0, len(order), self.batch_size)]

    @keeps_best
    def fit(self, train: list[Sentence], dev: list[Sentence] | None = None,
            save_best=None) -> ISBNTrainer:
        """Train on `train`, select on `dev` (without dev: the last epoch); return self.
        `save_best`: a path where the best parser is saved as soon as it is best."""
        if not train:
            raise ArborparseError("the training data holds no sentences")
        for s in train:
            check_tree(s, self.single_root)
        lifted = [lift(s, self.encoding) for s in train]
        vocab = Vocabulary.build(lifted, self.cutoff, self.unknown_cutoff, trees=train)
        inputs = Inputs(vocab, FEATURE_SETS[self.features])
        derivations = [Derivation.of(Tokens.of(s, vocab), inputs, decisions_of(s, vocab))
                       for s in lifted]
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        batches = [b.to(device) for b in self._batches(derivations)]
        net = Network(vocab, inputs, self.hidden, self.latent_links, self.seed,
                      self.approximation).to(device)
        parser = ISBNParser(vocab, net, self.features, self.encoding, self.beam, self.branching,
                            self.single_root)
        params = list(net.parameters())
        delta = [torch.zeros_like(p) for p in params]
        eta, lam = self.learning_rate, self.decay
        rng = np.random.default_rng(self.seed)
        self.history_ = []
        best_score, best_state, previous_score, previous_nll, waited = -1.0, None, None, None, 0
        for epoch in range(1, self.epochs + 1):
            start, nll = time.perf_counter(), 0.0
            bar = tqdm(rng.permutation(len(batches)), desc=f"epoch {epoch}/{self.epochs}",
                       unit="batch", disable=None if self.progress else True, file=sys.stderr,
                       leave=False)
            for k in bar:
                batch = batches[k]
                net.zero_grad()
                loglik = net.log_likelihood(batch)
                loglik.backward()
                nll -= float(loglik.detach())
                size = int(batch.parents.shape[0])
                with torch.no_grad():
                    shrink = (1.0 - lam * eta) ** (size / 10)
                    for p, d in zip(params, delta):
                        d.mul_(self.momentum ** size)
                        if p.grad is not None:  # layers this batch does not use
                            d.add_(p.grad)
                        p.add_(eta * d).mul_(shrink)
            record = {"epoch": epoch, "seconds": time.perf_counter() - start,
                      "negative_log_likelihood": nll, "learning_rate": eta}
            if previous_nll is not None and nll > previous_nll:
                eta = max(eta * 0.3, 1e-5 * self.learning_rate)
            previous_nll = nll
            parser.refresh()  # the search reads a numpy copy of the weights
            line = f"epoch {epoch}/{self.epochs}  {record['seconds']:.1f}s  NLL {nll:.1f}"
            best = not dev
            if dev:
                scores = evaluate(dev, parser.parse(dev))
                record.update(UAS=scores["UAS"], LAS=scores["LAS"])
                line += f"  dev UAS {scores['UAS']:.2f}  LAS {scores['LAS']:.2f}"
                best = scores["LAS"] >= best_score
                if best:
                    best_score, waited = scores["LAS"], 0
                    best_state = {k: v.clone() for k, v in net.state_dict().items()}
                    line += "  (best)"
                else:
                    waited += 1
                if previous_score is not None and scores["LAS"] < previous_score:
                    eta = max(eta * 0.3, 1e-5 * self.learning_rate)
                    lam = max(lam * 0.5, 1e-5 * self.decay)
                previous_score = scores["LAS"]
            if best:
                if save_best is not None:
                    save_parser(parser, save_best)
                self.best_epoch_ = epoch
            self.history_.append(record)
            if self.progress:
                tqdm.write(line, file=sys.stderr)
            if dev and waited >= self.patience:
                break
        if best_state is not None:
            net.load_state_dict(best_state)
        parser.refresh()
        self.parser_ = parser
        return self
