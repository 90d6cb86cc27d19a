"""Training the ISBN parser (spec §7): regularized maximum likelihood of the gold derivations
(words included), on a GPU when one is present, by gradient steps with momentum and weight
decay, the learning rate and the decay cut when the development score or the training
likelihood gets worse, early stopping, the best development checkpoint kept.

Batched: sentences of similar length form minibatches whose states are computed step by
step together (`Network.log_likelihood`). IDP updates every 10 sentences,
Δ ← mom¹⁰ Δ + Σ∇ log P, θ ← (θ + ηΔ)(1 − λη); with minibatches of b sentences we apply
Δ ← mom^b Δ + Σ∇, θ ← (θ + ηΔ)(1 − λη)^(b/10), the same per-sentence rates. Σ∇ is first
clipped to norm `clip` × b (not in IDP, whose per-10-sentence steps are smaller than ours).
"""

from __future__ import annotations

import time

import numpy as np
import torch

from arborparse.errors import ArborparseError
from arborparse.eval import evaluate
from arborparse.io.conllu import Sentence
from arborparse.io.validate import MULTI_ROOT, check_tree
from arborparse.isbn.history import FEATURE_SETS, Derivation, Inputs, Tokens, decisions_of
from arborparse.isbn.network import APPROXIMATIONS, Batch, Network
from arborparse.isbn.options import ISBNOptions
from arborparse.isbn.parser import ISBNParser
from arborparse.isbn.vocab import Vocabulary
from arborparse.training import Loop, keeps_best
from arborparse.transforms import ENCODINGS, lift


D = ISBNOptions()  # the defaults


class ISBNTrainer:
    """The defaults are `ISBNOptions`' (the family's option table); `checkpoint` and
    `resume` as `NeuralTrainer`'s.

    Parameters
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
    clip : the largest gradient norm per sentence; a minibatch's gradient whose norm is over
        clip × its sentences is scaled down to that (0: never). The first gradients are
        huge (≈ 100 per sentence, every output unit pushed the same way), and unclipped
        they saturate most latent units within a few steps: training then stalls at a
        unigram model on small treebanks
    beam, branching : search during development parsing (B, K)
    """

    def __init__(self, hidden: int = D.hidden, features: str = D.features,
                 latent_links: bool = D.latent_links, encoding: str = D.pseudo,
                 cutoff: int = D.cutoff, unknown_cutoff: int = D.cutoff,
                 epochs: int = D.epochs, patience: int = D.patience,
                 batch_size: int = D.batch_size, learning_rate: float = D.learning_rate,
                 decay: float = D.decay, momentum: float = D.momentum, clip: float = D.clip,
                 beam: int = D.beam,
                 branching: int = D.branching, seed: int = D.seed, progress: bool = True,
                 approximation: str = D.approximation, single_root: bool = not D.multi_root,
                 checkpoint=None, resume: bool = False):
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
        if not clip >= 0:
            raise ArborparseError("clip must be >= 0")
        self.clip = clip
        self.beam, self.branching, self.seed, self.progress = beam, branching, seed, progress
        self.approximation = approximation
        self.single_root = single_root
        self.checkpoint, self.resume = checkpoint, resume

    @classmethod
    def from_options(cls, options: ISBNOptions, *, dev: bool = False, progress: bool = True,
                     checkpoint=None, resume: bool = False, client=None) -> ISBNTrainer:
        """The trainer an option table describes (the family's trainer in
        `arborparse.registry`; `dev` and `client` change nothing here)."""
        o = options
        return cls(o.hidden, o.features, o.latent_links, o.pseudo, o.cutoff, o.cutoff,
                   o.epochs, o.patience, o.batch_size, o.learning_rate, o.decay, o.momentum,
                   o.clip, o.beam, o.branching, o.seed, progress, o.approximation, not o.multi_root,
                   checkpoint, resume)

    @property
    def settings(self) -> dict:
        """What a resumed training must share with the checkpoint."""
        return {k: getattr(self, k) for k in (
            "hidden", "features", "latent_links", "encoding", "cutoff", "unknown_cutoff",
            "batch_size", "learning_rate", "decay", "momentum", "clip", "beam", "branching", "seed",
            "approximation", "single_root")}

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
            check_tree(s, self.single_root, MULTI_ROOT)
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
        rng = np.random.default_rng(self.seed)
        # the rates, cut as training goes, and what they are cut against
        run = {"eta": self.learning_rate, "lam": self.decay, "previous_score": None,
               "previous_nll": None}
        best_state = None
        log = Loop(self, dev, save_best, patience=self.patience, checkpoint=self.checkpoint,
                   settings=self.settings, resume=self.resume, unit="batch")
        saved = log.resume()
        if saved is not None:
            header, arrays = saved
            net.load_state_dict({k[6:]: torch.from_numpy(v) for k, v in arrays.items()
                                 if k.startswith("param.")})
            best_state = {k[5:]: torch.from_numpy(v) for k, v in arrays.items()
                          if k.startswith("best.")} or None
            for i, d in enumerate(delta):
                d.copy_(torch.from_numpy(arrays[f"delta.{i}"]))
            run.update(header["run"])
            rng.bit_generator.state = header["rng"]

        def state():
            arrays = {f"param.{k}": v.cpu().numpy() for k, v in net.state_dict().items()}
            arrays.update({f"best.{k}": v.cpu().numpy() for k, v in (best_state or {}).items()})
            arrays.update({f"delta.{i}": d.cpu().numpy() for i, d in enumerate(delta)})
            return {"run": run, "rng": rng.bit_generator.state}, arrays

        def keep():
            nonlocal best_state
            best_state = {k: v.clone() for k, v in net.state_dict().items()}

        for epoch in log:
            start, nll, eta = time.perf_counter(), 0.0, run["eta"]
            for k in log.bar(epoch, rng.permutation(len(batches))):
                batch = batches[k]
                net.zero_grad()
                loglik = net.log_likelihood(batch)
                loglik.backward()
                nll -= float(loglik.detach())
                size = int(batch.parents.shape[0])
                with torch.no_grad():
                    if self.clip:  # see the class's docstring
                        torch.nn.utils.clip_grad_norm_(params, self.clip * size)
                    shrink = (1.0 - run["lam"] * eta) ** (size / 10)
                    for p, d in zip(params, delta):
                        d.mul_(self.momentum ** size)
                        if p.grad is not None:  # layers this batch does not use
                            d.add_(p.grad)
                        p.add_(eta * d).mul_(shrink)
            record = {"seconds": time.perf_counter() - start,
                      "negative_log_likelihood": nll, "learning_rate": eta}
            if run["previous_nll"] is not None and nll > run["previous_nll"]:
                run["eta"] = max(run["eta"] * 0.3, 1e-5 * self.learning_rate)
            run["previous_nll"] = nll
            parser.refresh()  # the search reads a numpy copy of the weights
            scores = evaluate(dev, parser.parse(dev)) if dev else None
            if scores is not None:
                if run["previous_score"] is not None and scores["LAS"] < run["previous_score"]:
                    run["eta"] = max(run["eta"] * 0.3, 1e-5 * self.learning_rate)
                    run["lam"] = max(run["lam"] * 0.5, 1e-5 * self.decay)
                run["previous_score"] = scores["LAS"]
            log.end(epoch, record, f"{record['seconds']:.1f}s  NLL {nll:.1f}", parser, scores,
                    keep=keep, state=state)
        if best_state is not None:
            net.load_state_dict(best_state)
        parser.refresh()
        log.finish()
        self.parser_ = parser
        return self
