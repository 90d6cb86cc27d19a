"""The distribution P(y | x) ∝ exp(Σ S[h, m]) over trees: log Z, marginals, entropy,
minimum Bayes-risk decoding and exact sampling; the temperatures that make a model's
distribution fit development data."""

from __future__ import annotations

import numpy as np

from arborparse.trees import matrix_tree
from arborparse.trees import projective as projective_dp
from arborparse.trees.decode import best_tree
from arborparse.trees.scores import NO_TREE, NonFiniteScores, arc_labels, check_scores, \
    fold_labels, force_arc


def _log_partition(S, projective, single_root):
    if projective:
        return float(projective_dp._log_partition(S, single_root))
    return matrix_tree.log_partition(S, single_root)


def _marginals(S, projective, single_root):
    logZ, mu = (projective_dp._marginals if projective else matrix_tree.marginals)(
        S, single_root)
    if not np.isfinite(logZ):
        raise NonFiniteScores(NO_TREE)
    return logZ, mu


def log_partition(S, projective: bool = False, single_root: bool = True) -> float:
    """log Z = log Σ_y exp(Σ_{(h,m) in y} S[h, m]) over the trees of the class.

    Non-projective: the Matrix-Tree Theorem, O(n³). Projective: the inside algorithm on
    Eisner's chart, O(n³). Labeled scores (n+1, n+1, L) sum over labels, O(n³ + L n²).
    Returns -inf when no tree has a finite score.
    """
    S = check_scores(S)
    if S.ndim == 3:
        S = fold_labels(S)
    return _log_partition(S, projective, single_root)


def log_partition_and_marginals(S, projective: bool = False, single_root: bool = True):
    """(log Z, marginals) from one computation; shapes and meaning as in `log_partition`
    and `marginals`. Raises ValueError when no tree has a finite score."""
    S = check_scores(S)
    if S.ndim == 2:
        return _marginals(S, projective, single_root)
    folded = fold_labels(S)
    logZ, mu = _marginals(folded, projective, single_root)
    with np.errstate(invalid="ignore"):  # -inf - -inf where no label is allowed
        out = np.subtract(S, folded[..., None])  # P(label | arc), then the marginals, in place
    np.exp(out, out=out)
    out *= mu[..., None]
    return logZ, np.nan_to_num(out, copy=False)


def marginals(S, projective: bool = False, single_root: bool = True) -> np.ndarray:
    """Arc marginals mu[h, m] = P(h -> m in y), an array like S.

    Each column m >= 1 sums to 1. Labeled scores give per-label marginals
    mu[h, m, l] = P(h -> m with label l). Non-projective by the matrix inverse (Koo et al.
    §3.2), projective by the outside pass; O(n³) (+ L n² labeled).
    """
    return log_partition_and_marginals(S, projective, single_root)[1]


def entropy(S, projective: bool = False, single_root: bool = True) -> float:
    """The entropy of P(y | x) in nats: log Z - Σ mu[h, m] S[h, m]. O(n³)."""
    S = check_scores(S)
    if S.ndim == 3:
        S = fold_labels(S)
    logZ, mu = _marginals(S, projective, single_root)
    used = mu > 0
    return float(logZ - (mu[used] * S[used]).sum())


def mbr(S, projective: bool = False, single_root: bool = True, marginals=None):
    """Minimum Bayes-risk tree: the tree of the class maximizing the expected number of
    correct heads, Σ_m mu[heads[m], m] (Smith & Smith 2007, §4). O(n³).

    Labeled scores also return, per word, the most probable label of its chosen arc.
    Returns heads (and labels) as `arborparse.trees.mst` does. `marginals`: the head
    marginals (n+1, n+1) of S when the caller has them already (they are not computed
    again).
    """
    S = check_scores(S)
    folded = fold_labels(S) if S.ndim == 3 else S
    mu = _marginals(folded, projective, single_root)[1] if marginals is None else marginals
    heads = best_tree(np.where(np.isneginf(folded), -np.inf, mu), projective, single_root)
    if S.ndim == 2:
        return heads
    return heads, arc_labels(S.argmax(axis=2), heads)


def sample(S, size: int, projective: bool = False, single_root: bool = True, rng=None):
    """Draw `size` trees exactly from P(y | x) ∝ exp(Σ S[h, m]).

    Each word's head is drawn from its marginal given the heads already drawn (the
    chain rule over words 1..n), the condition imposed by -inf scores on the other arcs
    into that word. O(n⁴) per tree.

    Returns
    -------
    ndarray of int, shape (size, n+1); row i holds the heads of tree i, column 0 is -1.
    """
    S = check_scores(S, labeled_ok=False)
    rng = np.random.default_rng(rng)
    N = S.shape[0]
    _, first = _marginals(S, projective, single_root)
    out = np.full((size, N), -1, dtype=np.int64)
    for i in range(size):
        cond = S.copy()
        mu = first
        for m in range(1, N):
            p = mu[:, m] / mu[:, m].sum()
            h = rng.choice(N, p=p)
            out[i, m] = h
            force_arc(cond, h, m)
            if m < N - 1:
                mu = _marginals(cond, projective, single_root)[1]
    return out


def fit_temperature(negative_log_likelihood) -> float:
    """The temperature T in [1e-4, 1e4] minimizing ``negative_log_likelihood(log T)``
    (bounded Brent, to 1e-3 in log T): what a parser's `calibrate` fits."""
    from scipy.optimize import minimize_scalar

    return float(np.exp(minimize_scalar(negative_log_likelihood,
                                        bounds=(np.log(1e-4), np.log(1e4)), method="bounded",
                                        options={"xatol": 1e-3}).x))


def label_temperature(scores: np.ndarray, gold: np.ndarray) -> float:
    """The T_l of maximum log-likelihood of the labels `gold` (W,) under P(l) ∝ exp(scores[w,
    l] / T_l), scores (W, L) (each word's label scores under its gold head; -inf for a label
    its arc may not take, `arborparse.trees.scores.allowed_scores`: a word whose gold label
    is one is left out); 1 where there are no words."""
    from scipy.special import logsumexp

    scores, gold = np.asarray(scores, dtype=np.float64), np.asarray(gold, dtype=np.int64)
    if len(gold):
        kept = np.isfinite(scores[np.arange(len(gold)), gold])
        scores, gold = scores[kept], gold[kept]
    if not len(gold):
        return 1.0
    total = scores[np.arange(len(gold)), gold].sum()
    return fit_temperature(lambda log_t: -(total * np.exp(-log_t) - logsumexp(
        scores * np.exp(-log_t), axis=1).sum()))
