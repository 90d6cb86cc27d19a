"""The arc objectives and decoding, on batched scores ``S`` (B, N+1, N+1).

- ``crf``: the tree CRF over non-projective trees, -log P(gold) = log Z - s(gold), with log
  Z by the Matrix-Tree Theorem (Koo et al. 2007; Smith & Smith 2007);
- ``crf-projective``: the same over projective trees, log Z by inside-outside (its training
  trees are projectivized);
- ``crf2o``: the projective tree CRF of arcs and adjacent siblings (McDonald & Pereira 2006;
  Zhang et al. 2020), log Z by the second-order inside pass of
  `arborparse.trees.batch_second_order`, decoded by MBR over its arc marginals;
- ``max-margin``: the structured hinge max_y [s(y) + Hamming(y, gold)] - s(gold), y found by
  cost-augmented MST;
- ``local``: each word's head by cross-entropy over the words of its sentence (Dozat &
  Manning's head selection), the reference.

Each returns the sum over the batch; words are single-rooted or not as `single_root` says.
"""

from __future__ import annotations

import torch

from arborparse.neural.options import OBJECTIVES
from arborparse.trees import batch as tb
from arborparse.trees import batch_second_order as so


def word_mask(lengths: torch.Tensor, N1: int) -> torch.Tensor:
    """(B, N+1) boolean: positions 1..n."""
    idx = torch.arange(N1, device=lengths.device)
    return (idx[None, :] >= 1) & (idx[None, :] <= lengths[:, None])


def arc_loss(objective: str, S: torch.Tensor, heads: torch.Tensor, lengths: torch.Tensor,
             single_root: bool = True, sib: torch.Tensor | None = None) -> torch.Tensor:
    """The objective's loss summed over the batch (a scalar to minimize); ``crf2o`` needs
    the sibling scores `sib` (B, N+1, N+1, N+1)."""
    if objective in ("crf", "crf-projective", "crf2o"):
        return -tree_log_prob(S, heads, lengths, objective == "crf-projective", single_root,
                              sib if objective == "crf2o" else None).sum()
    if objective == "max-margin":
        cost = torch.ones_like(S)
        cost.scatter_(1, heads.clamp(min=0)[:, None, :], 0.0)  # no cost on the gold arcs
        augmented = tb.TreeCRF(S + cost, lengths, single_root=single_root)
        return (augmented.score(augmented.argmax) - tb.TreeCRF(S, lengths).score(heads)).sum()
    if objective == "local":
        N1 = S.shape[1]
        idx = torch.arange(N1, device=S.device)
        allowed = (idx[None, :, None] <= lengths[:, None, None]) & \
            (idx[:, None] != idx[None, :])[None]
        log_p = S.masked_fill(~allowed, float("-inf")).log_softmax(dim=1)
        words = word_mask(lengths, N1)
        picked = log_p.gather(1, heads.clamp(min=0)[:, None, :]).squeeze(1)
        return -(picked[words]).sum()
    raise ValueError(f"objective: one of {OBJECTIVES}, got {objective!r}")


def tree_log_prob(S: torch.Tensor, heads: torch.Tensor, lengths: torch.Tensor,
                  projective: bool, single_root: bool, sib: torch.Tensor | None = None
                  ) -> torch.Tensor:
    """(B,) log P of the trees `heads` (B, N+1; -1 at 0 and on padding) under the
    first-order tree CRF of S or, given the sibling scores `sib`, the second-order one."""
    if sib is not None:
        return so.SiblingCRF(S, sib, lengths, single_root).log_prob(heads)
    return tb.TreeCRF(S, lengths, projective, single_root).log_prob(heads)


def marginals(S: torch.Tensor, lengths: torch.Tensor, projective: bool, single_root: bool,
              sib: torch.Tensor | None = None) -> torch.Tensor:
    """(B, N+1, N+1) arc marginals of the first-order tree CRF of S or, given the sibling
    scores `sib`, of the second-order (projective) one, in the precision of S (the sibling
    scores may stay in float32: the back end widens them, on the CPU a sentence at a
    time)."""
    if sib is not None:
        return so.marginals(S, sib, lengths, single_root)
    return tb.marginals(S, lengths, projective, single_root)


def decode(S: torch.Tensor, lengths: torch.Tensor, projective: bool, single_root: bool,
           marginals: torch.Tensor | None = None,
           sib: torch.Tensor | None = None) -> torch.Tensor:
    """(B, N+1) heads: the best tree under S (and the sibling scores `sib`: second-order
    projective) (MAP) or, given the arc `marginals`, the tree with the most expected correct
    arcs (MBR: the best tree under the marginals)."""
    if marginals is None and sib is not None:
        return so.eisner(S, sib, lengths, single_root)
    return tb.TreeCRF(S if marginals is None else marginals, lengths, projective,
                      single_root).argmax
