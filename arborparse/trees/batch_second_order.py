"""The batched, differentiable PyTorch back end of the second-order sibling model.

A tree's score is Σ_m S[h_m, m] + Σ sib[h, m, s] over its sibling parts (h, m, s): m is a
child of h and s its next sibling towards h on the same side (s == h for h's closest
child on that side); the root has sibling parts like any head (McDonald & Pereira 2006).
Scores are ``S`` (B, N+1, N+1) and ``sib`` (B, N+1, N+1, N+1) with ``lengths`` (B,) the
words of each sentence (padding beyond it is ignored); projective trees only.

- `log_partition`: log Z, differentiable (its gradients are the arc and sibling marginals);
- `log_partition_and_marginals`: log Z with both marginals (`marginals`: the arcs' alone);
- `eisner`: the best tree;
- `siblings` and `tree_score`: the sibling parts and scores of given trees.

On the CPU each sentence goes to the compiled kernels of `arborparse.trees.second_order`
(float64, O(n²) memory beyond the scores and marginals; at n = 40 an order of magnitude
faster than the tensors, and a sentence of hundreds of words needs no GBs); there, a
sentence whose scores hold NaN or +inf raises ValueError naming the sentence, and so does
asking for the marginals or the best tree of one that has no tree of finite score (its log
Z is -inf). Elsewhere (a GPU) the batch is computed with tensors: the
inside pass, its autograd for the marginals and, in the max semiring, for the best tree.

The tensors' inside pass (Eisner's second-order algorithm, the shape of SuPar's
`Dependency2oCRF`) is vectorized over the spans of each width. Its tables are indexed by
(start, end): ``CR``/``CL`` complete spans headed at the start/end, ``IR``/``IL`` incomplete
spans of the arc start -> end / end -> start, ``SB`` sibling spans (the right half of a
head's child at the start beside the left half of the next child at the end). Forbidden
entries hold a large finite negative number instead of -inf, which would make the gradients
NaN.
"""

from __future__ import annotations

import numpy as np
import torch

from arborparse.trees import second_order
from arborparse.trees.batch import _arc_mask, _lengths, _stripe


def _check(S: torch.Tensor, sib: torch.Tensor, lengths) -> torch.Tensor:
    lengths = _lengths(S, lengths)
    if sib.shape != S.shape + S.shape[-1:]:
        raise ValueError(f"sib must have shape {tuple(S.shape + S.shape[-1:])} (B, N+1, N+1, "
                         f"N+1), got {tuple(sib.shape)}")
    return lengths


def _by_width(sib: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The sibling scores of the right and left arcs, laid out by span width: R[b, w, i, k]
    = sib[b, i, i+w, i+k] (k = 0: the closest child, s = i) and L[b, w, i, k] =
    sib[b, i+w, i, i+k+1] (k = w-1: the closest child, s = i+w); outside the sentence
    clamped. One gather, so that the backward pass scatters once, not once per width."""
    B, N1 = sib.shape[:2]
    r = torch.arange(N1, device=sib.device)
    i, w, k = r[:, None, None], r[None, :, None], r[None, None, :]
    last = N1 - 1
    right = i * N1 * N1 + (i + w).clamp(max=last) * N1 + (i + k).clamp(max=last)
    left = (i + w).clamp(max=last) * N1 * N1 + i * N1 + (i + k + 1).clamp(max=last)
    flat = sib.reshape(B, -1)
    return tuple(flat[:, index.transpose(0, 1).reshape(-1)].view(B, N1, N1, N1)
                 for index in (right, left))


def _leaves(*tensors: torch.Tensor) -> list[torch.Tensor]:
    """Fresh copies of `tensors` that autograd may use, even if they were made under
    `torch.inference_mode` (call it under ``inference_mode(False)``)."""
    return [t.detach().clone() for t in tensors]


def _inside(S: torch.Tensor, sib: torch.Tensor, lengths: torch.Tensor, single_root: bool,
            reduce) -> torch.Tensor:
    """(B,) the inside score of the whole sentence: log Z with ``reduce`` = logsumexp, the
    best tree's score with max. Differentiable."""
    B, N1, _ = S.shape
    huge = torch.finfo(S.dtype).min / 1e4
    S = torch.where(_arc_mask(lengths, N1), torch.nan_to_num(S, neginf=huge), huge)
    # one tensor a width (unbind's backward stacks them once; slicing a width out of the
    # whole would scatter into a zero tensor of the whole at each width)
    inside = torch.arange(N1, device=S.device)[None, :] <= lengths[:, None]  # (B, N+1)
    inside = inside[:, :, None, None] & inside[:, None, :, None] & inside[:, None, None, :]
    sib = torch.where(inside, torch.nan_to_num(sib, neginf=huge), 0.0)  # padding: ignored
    R, L = (x.unbind(1) for x in _by_width(sib))
    CR, CL, IR, IL, SB = (S.new_full((B, N1, N1), huge) for _ in range(5))
    CR.diagonal(dim1=1, dim2=2).fill_(0.0)
    CL.diagonal(dim1=1, dim2=2).fill_(0.0)
    for w in range(1, N1):
        items = N1 - w
        diag = lambda table: table.diagonal(w, dim1=1, dim2=2)  # noqa: E731
        inner = lambda table: table.diagonal(w - 1, dim1=1, dim2=2)  # noqa: E731
        sib_right, sib_left = R[w][:, :items, :w], L[w][:, :items, :w]
        # arc i -> i+w: its closest right child (i's right half empty), or after the
        # child i+k whose right half meets i+w's left half in SB[i+k, i+w]
        first = inner(CL)[:, 1:] + sib_right[:, :, 0]
        after = (_stripe(IR, items, w - 1, 0, 1, False) + _stripe(SB, items, w - 1, 1, w, True)
                 + sib_right[:, :, 1:])
        if single_root:  # the root's only child is its closest one
            after = torch.cat([torch.full_like(after[:, :1], huge), after[:, 1:]], dim=1)
        diag(IR).copy_(diag(S) + reduce(torch.cat([first[:, :, None], after], dim=2)))
        # arc i+w -> i: the mirror image
        first = inner(CR)[:, :items] + sib_left[:, :, -1]
        after = (_stripe(IL, items, w - 1, 1, w, True) + _stripe(SB, items, w - 1, 0, 1, False)
                 + sib_left[:, :, :-1])
        left = S.diagonal(-w, dim1=1, dim2=2) + reduce(torch.cat([after, first[:, :, None]],
                                                                   dim=2))
        no_arc_into_0 = left.new_full((B, 1), huge)
        diag(IL).copy_(torch.cat([no_arc_into_0, left[:, 1:]], dim=1))
        diag(SB).copy_(reduce(_stripe(CR, items, w, 0, 0, False)
                              + _stripe(CL, items, w, 1, w, True)))
        diag(CR).copy_(reduce(_stripe(IR, items, w, 0, 1, False)
                              + _stripe(CR, items, w, 1, w, True)))
        diag(CL).copy_(reduce(_stripe(CL, items, w, 0, 0, False)
                              + _stripe(IL, items, w, 0, w, True)))
    return CR[torch.arange(B, device=S.device), 0, lengths]


def _logsumexp(x: torch.Tensor) -> torch.Tensor:
    return torch.logsumexp(x, dim=-1)


def _max(x: torch.Tensor) -> torch.Tensor:
    return x.max(dim=-1).values  # the gradient goes to one argument: a single tree


def _sentence(X: torch.Tensor, b: int, n: int) -> np.ndarray:
    """Sentence b's scores (n words) out of a padded batch, as a float64 array."""
    return X[(b,) + (slice(0, n + 1),) * (X.dim() - 1)].detach().to(
        torch.float64).contiguous().numpy()


def _each(S: torch.Tensor, sib: torch.Tensor, lengths: torch.Tensor, fn):
    """(b, n, fn(arc scores, sibling scores) of sentence b of n words) for each sentence,
    a ValueError of `arborparse.trees.second_order` naming the sentence."""
    for b, n in enumerate(lengths.tolist()):
        try:
            yield b, n, fn(_sentence(S, b, n), _sentence(sib, b, n))
        except ValueError as e:  # NonFiniteScores stays one (a diverged training says so)
            raise type(e)(f"sentence {b}: {e}") from None


def _compiled_marginals(S: torch.Tensor, sib: torch.Tensor, lengths: torch.Tensor,
                        single_root: bool, parts: int = 2):
    """(log Z, arc marginals, sibling marginals) by the compiled kernels, sentence by
    sentence (CPU), in the dtype of S: `parts` 0 gives log Z alone, 1 the arc marginals
    too (the others None)."""
    B, N1 = S.shape[:2]
    logZ = S.new_empty(B)
    mu = S.new_zeros(B, N1, N1) if parts >= 1 else None
    mu_sib = S.new_zeros(B, N1, N1, N1) if parts >= 2 else None
    fn = second_order.log_partition_and_marginals if parts else second_order.log_partition
    for b, n, out in _each(S, sib, lengths, lambda A, X: fn(A, X, None, single_root)):
        logZ[b] = out[0] if parts else out
        if mu is not None:
            mu[b, :n + 1, :n + 1] = torch.from_numpy(out[1])
        if mu_sib is not None:
            mu_sib[b, :n + 1, :n + 1, :n + 1] = torch.from_numpy(out[2])
    return logZ, mu, mu_sib


def _tensor_marginals(S: torch.Tensor, sib: torch.Tensor, lengths: torch.Tensor,
                      single_root: bool):
    """(log Z, arc marginals, sibling marginals) by autograd of the tensors' inside pass,
    in the wider dtype of the two scores."""
    dtype = torch.promote_types(S.dtype, sib.dtype)
    with torch.inference_mode(False), torch.enable_grad():
        S, sib = (x.detach().to(dtype, copy=True).requires_grad_(True) for x in (S, sib))
        (lengths,) = _leaves(lengths)
        logZ = _inside(S, sib, lengths, single_root, _logsumexp)
        mu, mu_sib = torch.autograd.grad(logZ.sum(), (S, sib))
    return logZ.detach(), mu, mu_sib


def _compiled_eisner(S: torch.Tensor, sib: torch.Tensor, lengths: torch.Tensor,
                     single_root: bool) -> torch.Tensor:
    """`_tensor_eisner` by the compiled kernels, sentence by sentence (CPU)."""
    heads = torch.full(S.shape[:2], -1, dtype=torch.long)
    for b, n, best in _each(S, sib, lengths, lambda A, X: second_order.eisner(
            A, X, None, single_root)):
        heads[b, :n + 1] = torch.from_numpy(best)
    return heads


def _tensor_eisner(S: torch.Tensor, sib: torch.Tensor, lengths: torch.Tensor,
                   single_root: bool) -> torch.Tensor:
    """The best trees: the gradient of the best score (the max-semiring inside pass) marks
    the best tree's arcs; ties go to one of the best trees."""
    with torch.inference_mode(False), torch.enable_grad():
        S, sib, lengths = _leaves(S, sib, lengths)
        S.requires_grad_(True)
        best = _inside(S, sib, lengths, single_root, _max)
        (arcs,) = torch.autograd.grad(best.sum(), S)
    heads = arcs.argmax(dim=1)
    words = torch.arange(S.shape[1], device=S.device)
    inside = (words[None, :] >= 1) & (words[None, :] <= lengths[:, None])
    return torch.where(inside, heads, -1)


class _CompiledLogPartition(torch.autograd.Function):
    """log Z by the compiled kernels; its gradients, the marginals, kept from the forward
    pass (computed only when a gradient is wanted). First derivatives only."""

    @staticmethod
    def forward(ctx, S, sib, lengths, single_root):
        wanted = any(ctx.needs_input_grad[:2])
        logZ, mu, mu_sib = _compiled_marginals(S, sib, lengths, single_root, 2 * wanted)
        if wanted:
            ctx.save_for_backward(mu, mu_sib.to(sib.dtype))
        return logZ

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, grad):
        mu, mu_sib = ctx.saved_tensors
        return grad[:, None, None] * mu, grad[:, None, None, None] * mu_sib, None, None


def log_partition(S: torch.Tensor, sib: torch.Tensor, lengths=None,
                  single_root: bool = True) -> torch.Tensor:
    """log Z over the projective trees of each sentence, shape (B,); differentiable (first
    derivatives).

    Parameters
    ----------
    S : (B, N+1, N+1) arc scores ``S[b, h, m]``
    sib : (B, N+1, N+1, N+1) sibling scores ``sib[b, h, m, s]``
    lengths : (B,) words per sentence (default: all N)
    single_root : exactly one word attached to the root

    O(B N³) time and memory (the sibling scores and their gradients).
    """
    lengths = _check(S, sib, lengths)
    if S.device.type == "cpu":
        return _CompiledLogPartition.apply(S, sib, lengths, single_root)
    return _inside(S, sib, lengths, single_root, _logsumexp)


def log_partition_and_marginals(S: torch.Tensor, sib: torch.Tensor, lengths=None,
                                single_root: bool = True):
    """(log Z (B,), arc marginals (B, N+1, N+1), sibling marginals (B, N+1, N+1, N+1)):
    ``mu[b, h, m]`` = P(h -> m), ``mu_sib[b, h, m, s]`` = P(the part (h, m, s)); zero on
    padding and on entries that are no part. Not attached to the autograd graph."""
    lengths = _check(S, sib, lengths)
    if S.device.type == "cpu":
        return _compiled_marginals(S, sib, lengths, single_root)
    return _tensor_marginals(S, sib, lengths, single_root)


def marginals(S: torch.Tensor, sib: torch.Tensor, lengths=None,
              single_root: bool = True) -> torch.Tensor:
    """The arc marginals alone (B, N+1, N+1), as `log_partition_and_marginals` gives them
    (on the CPU without holding the sibling marginals of the whole batch)."""
    lengths = _check(S, sib, lengths)
    if S.device.type == "cpu":
        return _compiled_marginals(S, sib, lengths, single_root, parts=1)[1]
    return _tensor_marginals(S, sib, lengths, single_root)[1]


def eisner(S: torch.Tensor, sib: torch.Tensor, lengths=None,
           single_root: bool = True) -> torch.Tensor:
    """The best projective tree of each sentence: heads (B, N+1), -1 at 0 and on padding."""
    lengths = _check(S, sib, lengths)
    if S.device.type == "cpu":
        return _compiled_eisner(S, sib, lengths, single_root)
    return _tensor_eisner(S, sib, lengths, single_root)


def siblings(heads: torch.Tensor) -> torch.Tensor:
    """The sibling part of each word: ``s[b, m]`` is m's next sibling towards its head
    (the head itself for its closest child on that side); -1 where ``heads`` is -1.

    Parameters
    ----------
    heads : (B, N+1) integer heads, -1 at 0 and on padding
    """
    B, N1 = heads.shape
    idx = torch.arange(N1, device=heads.device)
    h = heads.clamp(min=0)
    # same[b, m, c]: c is a child of m's head, strictly between the head and m
    same = (heads[:, None, :] == heads[:, :, None]) & (heads[:, :, None] >= 0)
    low, high = torch.minimum(h, idx)[:, :, None], torch.maximum(h, idx)[:, :, None]
    same &= (idx > low) & (idx < high)
    right = torch.where(same, idx, -1).amax(dim=2)  # the nearest one below m (m > head)
    left = torch.where(same, idx, N1).amin(dim=2)  # the nearest one above m (m < head)
    s = torch.where(idx[None] > h, right, left)
    s = torch.where((s < 0) | (s >= N1), h, s)
    return torch.where(heads >= 0, s, -1)


def tree_score(S: torch.Tensor, sib: torch.Tensor, heads: torch.Tensor) -> torch.Tensor:
    """(B,) the second-order score of the given trees (heads (B, N+1), -1 at 0 and on
    padding); differentiable in ``S`` and ``sib``."""
    B, N1 = heads.shape
    words = heads >= 0
    h, s = heads.clamp(min=0), siblings(heads).clamp(min=0)
    m = torch.arange(N1, device=heads.device).expand(B, N1)
    b = torch.arange(B, device=heads.device)[:, None].expand(B, N1)
    parts = S[b, h, m] + sib[b, h, m, s]
    return torch.where(words, parts, torch.zeros_like(parts)).sum(dim=1)


class SiblingCRF:
    """The distribution P(y_b) ∝ exp(Σ S[b, h, m] + Σ sib[b, h, m, s]) over the projective
    trees of each sentence of a batch (arcs and adjacent siblings), in the style of
    `torch.distributions` and `arborparse.trees.batch.TreeCRF`: a thin face over the
    functions above.

    Parameters
    ----------
    scores : (B, N+1, N+1) tensor, ``S[b, h, m]``
    siblings : (B, N+1, N+1, N+1) tensor, ``sib[b, h, m, s]``
    lengths : (B,) words per sentence (default: all N)
    single_root : exactly one word attached to the root

    `log_partition`, `score` and `log_prob` are differentiable; `marginals` and `argmax`
    are not.
    """

    def __init__(self, scores: torch.Tensor, siblings: torch.Tensor, lengths=None,
                 single_root: bool = True):
        self.scores, self.siblings = scores, siblings
        self.lengths = _check(scores, siblings, lengths)
        self.single_root = single_root

    @property
    def log_partition(self) -> torch.Tensor:
        """(B,) log Z."""
        return log_partition(self.scores, self.siblings, self.lengths, self.single_root)

    @property
    def marginals(self) -> tuple[torch.Tensor, torch.Tensor]:
        """Arc marginals (B, N+1, N+1) and sibling marginals (B, N+1, N+1, N+1)."""
        return log_partition_and_marginals(self.scores, self.siblings, self.lengths,
                                           self.single_root)[1:]

    def score(self, heads: torch.Tensor) -> torch.Tensor:
        """(B,) the score of the given trees (heads (B, N+1), -1 at 0 and on padding)."""
        return tree_score(self.scores, self.siblings, heads)

    def log_prob(self, heads: torch.Tensor) -> torch.Tensor:
        """(B,) log P of the given trees."""
        return self.score(heads) - self.log_partition

    @property
    def argmax(self) -> torch.Tensor:
        """(B, N+1) heads of the best tree of each sentence."""
        return eisner(self.scores, self.siblings, self.lengths, self.single_root)
