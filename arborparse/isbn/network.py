"""The ISBN's network under the feed-forward approximation (spec §5), in PyTorch.

Each state t has a latent vector of means μ_t = σ(b + Σ_f B[f] + Σ_c J_c μ_{parent_c(t)})
(H units; B: the input vectors of its explicit features; J_c: one H×H matrix per structural
relation). Every elementary decision of state t is a softmax over its allowed values of
W·μ_t + b: the action (masked by Φ), the label of a left or a right arc (two layers), the
POS of the next word, its FEATS bundle within the POS and its form within the (POS,
bundle) cell. `log_likelihood` computes Σ log P(derivation, words) of a whole minibatch of
gold derivations, state by state for all sentences at once.

The mean-field approximation (spec §6, ``approximation="mf"``) re-estimates the means
after each elementary decision d_k of a state, among the allowed values A_k:
m^k = argmax_m log softmax_A(W m + b)[d_k] - KL(Bern(m) || Bern(m^{k-1})), whose stationary
point m = σ(logit(m^{k-1}) + W_{d_k} - W_Aᵀ p(m)) we reach by damped fixed-point iteration
(unrolled for the gradient); P(d_k) reads m^{k-1} and later states read the final m. It
runs sentence by sentence, slower than the feed-forward approximation.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from arborparse.isbn.history import RELATIONS, Derivation, Inputs
from arborparse.isbn.transitions import LA, RA
from arborparse.isbn.vocab import Vocabulary

DTYPE = torch.float64
APPROXIMATIONS = ("ff", "mf")
MF_ITERATIONS, MF_DAMPING, MF_TOLERANCE = 30, 0.5, 1e-6


def mean_field_update(m: torch.Tensor, W: torch.Tensor, b: torch.Tensor,
                      chosen: int) -> torch.Tensor:
    """The means after decision `chosen` among the rows of (W, b) (spec §6)."""
    m = m.clamp(1e-12, 1 - 1e-12)
    target = torch.logit(m) + W[chosen]
    for _ in range(MF_ITERATIONS):
        p = torch.softmax(W @ m + b, dim=0)
        step = MF_DAMPING * m + (1 - MF_DAMPING) * torch.sigmoid(target - W.T @ p)
        converged = float((step - m).detach().abs().max()) < MF_TOLERANCE
        m = step
        if converged:
            break
    return m


def _ranges(sizes) -> tuple[torch.Tensor, torch.Tensor]:
    stops = torch.tensor(np.cumsum(sizes), dtype=torch.long)
    return stops - torch.tensor(sizes, dtype=torch.long), stops


class Network(nn.Module):
    """Parameters: input vectors, hidden bias, relation matrices (absent with
    ``latent_links=False``: the TF-NA ablation), output layers."""

    def __init__(self, vocab: Vocabulary, inputs: Inputs, hidden: int = 80,
                 latent_links: bool = True, seed: int = 1, approximation: str = "ff"):
        super().__init__()
        if approximation not in APPROXIMATIONS:
            raise ValueError(f"unknown approximation {approximation!r}; choose one of "
                             f"{APPROXIMATIONS}")
        self.approximation = approximation
        generator = torch.Generator().manual_seed(seed)

        def uniform(scale, *shape):
            return nn.Parameter((torch.rand(*shape, generator=generator, dtype=DTYPE) * 2 - 1)
                                * scale)

        self.hidden = hidden
        self.latent_links = latent_links
        self.inputs = uniform(0.05, inputs.size, hidden)
        self.bias = uniform(0.05, hidden)
        self.relations = uniform(0.05, RELATIONS, hidden, hidden) if latent_links else None
        feat_sizes = [len(f) for f in vocab.feats]
        word_sizes = [len(cell) for cells in vocab.words for cell in cells]
        self.layers = nn.ParameterDict()
        for name, size in (("action", 4), ("left_label", len(vocab.labels)),
                           ("right_label", len(vocab.labels)), ("pos", len(vocab.pos)),
                           ("feat", sum(feat_sizes)), ("form", sum(word_sizes))):
            self.layers[name] = uniform(5e-4, size, hidden + 1)  # last column: the bias
        self.register_buffer("feat_start", _ranges(feat_sizes)[0])
        self.register_buffer("feat_stop", _ranges(feat_sizes)[1])
        cells = [vocab.cell_range(p, f) for p in range(len(vocab.pos))
                 for f in range(len(vocab.feats[p]))]
        self.register_buffer("cell_start", torch.tensor([c[0] for c in cells]))
        self.register_buffer("cell_stop", torch.tensor([c[1] for c in cells]))
        cell_of = np.cumsum([0] + feat_sizes)
        self.register_buffer("first_cell", torch.tensor(cell_of[:-1]))
        with torch.no_grad():  # row 0 pads the input lists: zero, and never trained
            self.inputs[0].zero_()

    def logits(self, name: str, mu: torch.Tensor) -> torch.Tensor:
        W = self.layers[name]
        return mu @ W[:, :-1].T + W[:, -1]

    def means(self, batch: Batch) -> torch.Tensor:
        """μ of every state of every sentence: (B, T, H)."""
        B, T = batch.parents.shape[:2]
        pre = self.bias + nn.functional.embedding(batch.inputs, self.inputs,
                                                  padding_idx=0).sum(dim=2)  # (B, T, H)
        if not self.latent_links:
            return torch.sigmoid(pre)
        buffer = torch.zeros(B, T + 1, self.hidden, dtype=DTYPE, device=pre.device)  # T: none
        rows = torch.arange(B, device=pre.device)[:, None]
        for t in range(T):
            parents = buffer[rows, batch.parents[:, t]]  # (B, 7, H)
            eta = pre[:, t] + torch.einsum("bch,cgh->bg", parents, self.relations)
            buffer[:, t] = torch.sigmoid(eta)
        return buffer[:, :T]

    @staticmethod
    def _pick(logits: torch.Tensor, chosen: torch.Tensor, allowed=None) -> torch.Tensor:
        if allowed is not None:
            logits = logits.masked_fill(~allowed, -torch.inf)
        return torch.log_softmax(logits, dim=-1).gather(1, chosen[:, None]).sum()

    def _pick_in_range(self, name, mu, chosen, start, stop) -> torch.Tensor:
        """Σ log softmax over the rows [start, stop) of layer `name` (per state)."""
        logits = self.logits(name, mu)
        cols = torch.arange(logits.shape[1], device=logits.device)
        inside = (cols >= start[:, None]) & (cols < stop[:, None])
        return self._pick(logits, chosen, inside)

    def decisions(self, d: Derivation, t: int):
        """The elementary decisions of state t: (layer, first row, allowed rows (None: a
        range from the first row), chosen index among them)."""
        out = []
        if d.action[t] >= 0:
            allowed = np.flatnonzero(d.allowed[t])
            out.append(("action", 0, allowed, int(np.searchsorted(allowed, d.action[t]))))
            if d.action[t] in (LA, RA):
                out.append(("left_label" if d.action[t] == LA else "right_label", 0,
                            len(self.layers["left_label"]), int(d.label[t])))
        if d.pos[t] >= 0:
            p = int(d.pos[t])
            out.append(("pos", 0, len(self.layers["pos"]), p))
            if d.feat[t] >= 0:
                start, stop = int(self.feat_start[p]), int(self.feat_stop[p])
                out.append(("feat", start, stop - start, int(d.feat[t])))
                cell = int(self.first_cell[p]) + int(d.feat[t])
                start, stop = int(self.cell_start[cell]), int(self.cell_stop[cell])
                out.append(("form", start, stop - start, int(d.form[t])))
        return out

    def _mean_field_log_likelihood(self, d: Derivation) -> torch.Tensor:
        total = torch.zeros((), dtype=DTYPE, device=self.bias.device)
        finals = []
        for t in range(len(d.action)):
            eta = self.bias + self.inputs[d.inputs[t]].sum(dim=0)
            if self.latent_links:
                for c, parent in enumerate(d.parents[t]):
                    if parent >= 0:
                        eta = eta + self.relations[c] @ finals[parent]
            m = torch.sigmoid(eta)
            for name, start, rows, chosen in self.decisions(d, t):
                layer = self.layers[name]
                block = layer[rows] if isinstance(rows, np.ndarray) else \
                    layer[start:start + rows]
                W, b = block[:, :-1], block[:, -1]
                total = total + torch.log_softmax(W @ m + b, dim=0)[chosen]
                if len(block) > 1:
                    m = mean_field_update(m, W, b, chosen)
            finals.append(m)
        return total

    def log_likelihood(self, batch: Batch) -> torch.Tensor:
        """Σ over the batch of log P(derivation, sentence)."""
        if self.approximation == "mf":
            return sum(self._mean_field_log_likelihood(d) for d in batch.derivations)
        mu = self.means(batch)[batch.valid]  # (N, H), the states in order
        total = torch.zeros((), dtype=DTYPE, device=mu.device)
        acts = batch.action >= 0
        total = total + self._pick(self.logits("action", mu[acts]), batch.action[acts],
                                   batch.allowed[acts])
        for name, kind in (("left_label", LA), ("right_label", RA)):
            sel = batch.action == kind
            if sel.any():
                total = total + self._pick(self.logits(name, mu[sel]), batch.label[sel])
        gen = batch.pos >= 0
        total = total + self._pick(self.logits("pos", mu[gen]), batch.pos[gen])
        word = batch.feat >= 0
        p, f = batch.pos[word], batch.feat[word]
        total = total + self._pick_in_range("feat", mu[word], self.feat_start[p] + f,
                                            self.feat_start[p], self.feat_stop[p])
        cell = self.first_cell[p] + f
        start = self.cell_start[cell]
        total = total + self._pick_in_range("form", mu[word], start + batch.form[word], start,
                                            self.cell_stop[cell])
        return total


class Batch:
    """Gold derivations padded to T states: parents (B, T, 7) with -1 pointing at the
    empty slot T, inputs (B, T, F); the per-state decision arrays flattened over the valid
    states in order."""

    def __init__(self, derivations: list[Derivation]):
        T = max(len(d.action) for d in derivations)
        F = max(len(r) for d in derivations for r in d.inputs)
        B = len(derivations)
        self.derivations = derivations
        parents = np.full((B, T, RELATIONS), T, dtype=np.int64)
        inputs = np.zeros((B, T, F), dtype=np.int64)
        valid = np.zeros((B, T), dtype=bool)
        for b, d in enumerate(derivations):
            n = len(d.action)
            parents[b, :n] = np.where(d.parents < 0, T, d.parents)
            for t, rows in enumerate(d.inputs):
                inputs[b, t, :len(rows)] = rows
            valid[b, :n] = True
        self.parents = torch.from_numpy(parents)
        self.inputs = torch.from_numpy(inputs)
        self.valid = torch.from_numpy(valid)

        def flat(name):
            return torch.from_numpy(np.concatenate([getattr(d, name) for d in derivations]))

        self.action, self.label = flat("action"), flat("label")
        self.pos, self.feat, self.form = flat("pos"), flat("feat"), flat("form")
        self.allowed = flat("allowed")
        self.states = int(valid.sum())

    def to(self, device) -> Batch:
        """This batch with its tensors on `device` (in place)."""
        for name, value in vars(self).items():
            if isinstance(value, torch.Tensor):
                setattr(self, name, value.to(device))
        return self
