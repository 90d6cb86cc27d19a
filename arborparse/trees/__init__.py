"""Exact inference over dependency trees, on score arrays only.

Conventions: ``S[h, m]`` is the score of the arc h -> m, index 0 is the root, words are
1..n, column 0 and the diagonal are ignored, -inf forbids an arc. A tree is an integer
array ``heads`` of length n+1 with ``heads[0] = -1``. ``single_root=True`` means exactly one
word attaches to the root; ``projective=True`` restricts to projective trees.

Decoding: `mst` (Chu-Liu-Edmonds/Tarjan, O(n²)), `eisner` (O(n³)), `kbest`, `mbr`.
The distribution P(y | x) ∝ exp(Σ S[h, m]): `log_partition`, `marginals` (both at once:
`log_partition_and_marginals`), `entropy`, `sample`. The batched, differentiable PyTorch
back end is `arborparse.trees.batch`.
"""

from arborparse.trees.decode import eisner, kbest, mst
from arborparse.trees.distribution import (
                                           entropy,
                                           log_partition,
                                           log_partition_and_marginals,
                                           marginals,
                                           mbr,
                                           sample,
)

__all__ = ["mst", "eisner", "kbest", "mbr", "log_partition", "marginals",
           "log_partition_and_marginals", "entropy", "sample"]
