"""Exact inference over dependency trees, on score arrays only.

Conventions: ``S[h, m]`` is the score of the arc h -> m, index 0 is the root, words are
1..n, column 0 and the diagonal are ignored, -inf forbids an arc. A tree is an integer
array ``heads`` of length n+1 with ``heads[0] = -1``. ``single_root=True`` means exactly one
word attaches to the root; ``projective=True`` restricts to projective trees.

Decoding: `mst` (Chu-Liu-Edmonds/Tarjan, O(n²)), `eisner` (O(n³); O(n² R) with arcs cut to
a reach R), `kbest`, `mbr`.
The distribution P(y | x) ∝ exp(Σ S[h, m]): `log_partition`, `marginals` (both at once:
`log_partition_and_marginals`), `entropy`, `sample`. Second-order models (adjacent
siblings, grandparents) are `arborparse.trees.second_order`. The batched, differentiable
PyTorch back ends are `arborparse.trees.batch` and `arborparse.trees.batch_second_order`;
tree properties (cycles, projectivity) are in `arborparse.trees.structure`.

The functions are imported on first use, so that code needing only `structure` does not
pay for numba's start-up.
"""

from importlib import import_module

_HOME = {"mst": "decode", "eisner": "decode", "kbest": "decode", "mbr": "distribution",
         "log_partition": "distribution", "marginals": "distribution",
         "log_partition_and_marginals": "distribution", "entropy": "distribution",
         "sample": "distribution"}

__all__ = list(_HOME)


def __getattr__(name):
    if name not in _HOME:
        raise AttributeError(f"module 'arborparse.trees' has no attribute {name!r}")
    value = getattr(import_module(f"arborparse.trees.{_HOME[name]}"), name)
    globals()[name] = value
    return value
