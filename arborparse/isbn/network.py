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
(unrolled for the gradient); P(d_k) reads m^{k-1} and later states read the final m. It is
batched too: state t of every sentence, one elementary decision after the other.
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
                      chosen: torch.Tensor, allowed: torch.Tensor) -> torch.Tensor:
    """The means (N, H) of N states after their decisions (spec §6): candidate
    `chosen[i]` among state i's candidate rows W[i] (R, H), b[i] (R,) where allowed[i]
    (R,). A state whose decision had no alternative keeps its means; each state iterates
    until its own means settle. (Differentiating the unrolled iterations measured faster
    here than the implicit gradient through the fixed point, which needs an H×H system
    per state and decision.)"""
    x = m.clamp(1e-12, 1 - 1e-12)
    target = torch.logit(x) + W[torch.arange(len(m), device=m.device), chosen]
    choice = allowed.sum(dim=1) > 1
    active = choice
    for _ in range(MF_ITERATIONS):
        if not bool(active.any()):
            break
        z = torch.einsum("nrh,nh->nr", W, x) + b
        p = torch.softmax(z.masked_fill(~allowed, -torch.inf), dim=1)
        step = MF_DAMPING * x + (1 - MF_DAMPING) * torch.sigmoid(
            target - torch.einsum("nr,nrh->nh", p, W))
        settled = (step - x).detach().abs().amax(dim=1) < MF_TOLERANCE
        x = torch.where(active[:, None], step, x)
        active = active & ~settled
    return torch.where(choice[:, None], x, m)


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

    def _explicit(self, batch: Batch) -> torch.Tensor:
        """The hidden bias plus the input vectors of every state: (B, T, H)."""
        return self.bias + nn.functional.embedding(batch.inputs, self.inputs,
                                                   padding_idx=0).sum(dim=2)

    def _linked(self, means: torch.Tensor, batch: Batch, rows: torch.Tensor,
                t: int) -> torch.Tensor:
        """Σ_c J_c μ of the parents of state t of sentences `rows`, read from `means`
        (B, T + 1, H), whose slot T (no parent) is zero: (N, H)."""
        parents = means[rows[:, None], batch.parents[rows, t]]  # (N, 7, H)
        return torch.einsum("nch,cgh->ng", parents, self.relations)

    def means(self, batch: Batch) -> torch.Tensor:
        """μ of every state of every sentence: (B, T, H)."""
        B, T = batch.parents.shape[:2]
        pre = self._explicit(batch)
        if not self.latent_links:
            return torch.sigmoid(pre)
        buffer = torch.zeros(B, T + 1, self.hidden, dtype=DTYPE, device=pre.device)
        rows = torch.arange(B, device=pre.device)
        for t in range(T):
            buffer[:, t] = torch.sigmoid(pre[:, t] + self._linked(buffer, batch, rows, t))
        return buffer[:, :T]

    @staticmethod
    def _pick(logits: torch.Tensor, chosen: torch.Tensor, allowed=None) -> torch.Tensor:
        """Σ log softmax of the chosen rows among the allowed ones (per state)."""
        if allowed is not None:
            logits = logits.masked_fill(~allowed, -torch.inf)
        return torch.log_softmax(logits, dim=-1).gather(1, chosen[:, None]).sum()

    def _decisions(self, batch: Batch, states: torch.Tensor):
        """The elementary decisions of the given states (flat indices), kind by kind in the
        order a state makes them: (layer, which of the states make one (bool), the chosen
        rows of the layer, the allowed rows: a boolean mask over the layer per state, a
        range (start, stop) per state, or None: all)."""
        action = batch.action[states]
        acts = action >= 0
        yield "action", acts, action[acts], batch.allowed[states][acts]
        label = batch.label[states]
        for name, kind in (("left_label", LA), ("right_label", RA)):
            sel = action == kind
            yield name, sel, label[sel], None
        pos, feat = batch.pos[states], batch.feat[states]
        gen = pos >= 0
        yield "pos", gen, pos[gen], None
        word = feat >= 0
        p, f = pos[word], feat[word]
        yield "feat", word, self.feat_start[p] + f, (self.feat_start[p], self.feat_stop[p])
        cell = self.first_cell[p] + f
        start = self.cell_start[cell]
        yield "form", word, start + batch.form[states][word], (start, self.cell_stop[cell])

    def _candidates(self, name, chosen, allowed):
        """Per state, its candidate rows of layer `name`: (W (N, R, H), b (N, R), the
        position of the chosen row among them, which are allowed (N, R))."""
        layer, n = self.layers[name], len(chosen)
        if isinstance(allowed, tuple):  # a range of rows: gathered, padded to the longest
            start, stop = allowed
            rows = start[:, None] + torch.arange(int((stop - start).max()),
                                                 device=start.device)
            allowed = rows < stop[:, None]
            block = layer[rows.clamp(max=len(layer) - 1)]
            chosen = chosen - start
        else:
            block = layer.expand(n, *layer.shape)
            if allowed is None:
                allowed = torch.ones(n, len(layer), dtype=torch.bool, device=layer.device)
        return block[..., :-1], block[..., -1], chosen, allowed

    def log_likelihood(self, batch: Batch) -> torch.Tensor:
        """Σ over the batch of log P(derivation, sentence)."""
        if self.approximation == "mf":
            return self._mean_field_log_likelihood(batch)
        mu = self.means(batch)[batch.valid]  # (N, H), the states in order
        states = torch.arange(batch.states, device=mu.device)
        total = torch.zeros((), dtype=DTYPE, device=mu.device)
        for name, sel, chosen, allowed in self._decisions(batch, states):
            if isinstance(allowed, tuple):
                cols = torch.arange(len(self.layers[name]), device=mu.device)
                allowed = (cols >= allowed[0][:, None]) & (cols < allowed[1][:, None])
            total = total + self._pick(self.logits(name, mu[sel]), chosen, allowed)
        return total

    def _mean_field_log_likelihood(self, batch: Batch) -> torch.Tensor:
        B, T = batch.parents.shape[:2]
        pre = self._explicit(batch)
        finals = torch.zeros(B, T + 1, self.hidden, dtype=DTYPE, device=pre.device)
        total = torch.zeros((), dtype=DTYPE, device=pre.device)
        for t in range(T):
            rows = torch.nonzero(batch.valid[:, t])[:, 0]
            eta = pre[rows, t]
            if self.latent_links:
                eta = eta + self._linked(finals, batch, rows, t)
            m = torch.sigmoid(eta)
            for name, sel, chosen, allowed in self._decisions(batch, batch.index[rows, t]):
                if not bool(sel.any()):
                    continue
                where = torch.nonzero(sel)[:, 0]
                W, b, chosen, allowed = self._candidates(name, chosen, allowed)
                z = torch.einsum("nrh,nh->nr", W, m[where]) + b
                total = total + self._pick(z, chosen, allowed)
                m = m.index_put((where,), mean_field_update(m[where], W, b, chosen, allowed))
            finals[rows, t] = m
        return total


class Batch:
    """Gold derivations padded to T states: parents (B, T, 7) with -1 pointing at the
    empty slot T, inputs (B, T, F); the per-state decision arrays flattened over the valid
    states in order."""

    def __init__(self, derivations: list[Derivation]):
        T = max(len(d.action) for d in derivations)
        F = max(len(r) for d in derivations for r in d.inputs)
        B = len(derivations)
        parents = np.full((B, T, RELATIONS), T, dtype=np.int64)
        inputs = np.zeros((B, T, F), dtype=np.int64)
        valid = np.zeros((B, T), dtype=bool)
        index = np.zeros((B, T), dtype=np.int64)
        for b, d in enumerate(derivations):
            n = len(d.action)
            parents[b, :n] = np.where(d.parents < 0, T, d.parents)
            for t, rows in enumerate(d.inputs):
                inputs[b, t, :len(rows)] = rows
            valid[b, :n] = True
        self.parents = torch.from_numpy(parents)
        self.inputs = torch.from_numpy(inputs)
        self.valid = torch.from_numpy(valid)
        index[valid] = np.arange(valid.sum())
        self.index = torch.from_numpy(index)  # of each state in the flat arrays

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
