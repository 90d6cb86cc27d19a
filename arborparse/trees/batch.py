"""The batched, differentiable PyTorch back end: tree CRFs under any neural scorer.

Scores are a tensor ``S`` of shape (B, N+1, N+1) with ``S[b, h, m]`` the score of the arc
h -> m in sentence b, and ``lengths`` (B,) the number of words of each sentence (padding
beyond it is ignored). Works on CPU and GPU, in float32 or float64.

- `log_partition` is differentiable; its gradient is the marginals.
- `log_partition_and_marginals` returns both from one factorization (or one inside pass).
- `marginals` returns the arc marginals only.
- `mst` and `eisner` decode the batch in one call of the compiled decoders of
  `arborparse.trees`.
- `TreeCRF(S, lengths, projective, single_root)`: the same as a distribution object
  (``log_partition``, ``log_prob``, ``marginals``, ``entropy``, ``argmax``, ``kbest``,
  ``sample``), in the style of `torch.distributions`.

Non-projective: one batched LU factorization (``torch.linalg.lu_factor``) of the
column-shifted Matrix-Tree matrix, and the marginals from the same LU by Koo
et al.'s §3.2 formulas. On CPU the matrices are built and the formulas evaluated by the
compiled kernels of `arborparse.trees.matrix_tree` (one pass each, where a chain of tensor
operations would cost more than the factorization); on other devices by tensor
operations. A sentence whose factorization is inaccurate (huge score ranges) is
recomputed by the exact elimination (`matrix_tree.exact`).

Projective: on CPU the compiled inside-outside of `arborparse.trees.projective`, one
call for the batch; on other devices the inside algorithm vectorized over the spans of
each width, differentiated by autograd.
"""

from __future__ import annotations

import numpy as np
import torch

from arborparse.trees import matrix_tree, projective
from arborparse.trees.decode import _best_trees, kbest
from arborparse.trees.distribution import sample
from arborparse.trees.scores import NonFiniteScores


def _lengths(S: torch.Tensor, lengths) -> torch.Tensor:
    if S.dim() != 3 or S.shape[1] != S.shape[2] or S.shape[1] < 2:
        raise ValueError(f"scores must have shape (B, N+1, N+1) with N >= 1, got {tuple(S.shape)}")
    B, N1 = S.shape[0], S.shape[1]
    if lengths is None:
        return torch.full((B,), N1 - 1, dtype=torch.long, device=S.device)
    lengths = torch.as_tensor(lengths, device=S.device).long()
    if lengths.shape != (B,) or (lengths < 1).any() or (lengths > N1 - 1).any():
        raise ValueError(f"lengths must be a ({B},) tensor of values in 1..{N1 - 1}")
    return lengths


def _arc_mask(lengths: torch.Tensor, N1: int) -> torch.Tensor:
    """(B, N+1, N+1) boolean: h -> m is an arc of the sentence (h != m, m >= 1, both <= n)."""
    idx = torch.arange(N1, device=lengths.device)
    inside = idx[None, :] <= lengths[:, None]
    mask = inside[:, :, None] & inside[:, None, :]
    mask &= (idx[:, None] != idx[None, :])[None]
    mask[:, :, 0] = False
    return mask


# ---------------------------------------------------------------------- non-projective


def _exact(S: torch.Tensor, n: int, single_root: bool):
    """(log Z, marginals) of one sentence by the exact elimination (`matrix_tree.exact`),
    as numpy."""
    scores = S[:n + 1, :n + 1].detach().to("cpu", torch.float64).numpy()
    return matrix_tree.exact(scores, single_root, True)


# Sentences per chunk on CPU: the build, factorization, solve and marginal passes of a
# chunk then share the cache instead of streaming the whole batch through memory 4 times.
CHUNK_BYTES = 1 << 20
# Up to this many words, the compiled small-matrix LU beats a batched LAPACK call
# (measured: 0.72x the time at n = 16, 0.93x at 24, 1.14x at 32).
SMALL_MATRIX = 24


def _nonprojective_cpu(S: torch.Tensor, lengths: torch.Tensor, single_root: bool):
    B, N1, _ = S.shape
    scores = S.detach().to(torch.float64).contiguous().numpy()
    lens = lengths.numpy()
    logZ = np.empty(B)
    mu = np.empty((B, N1, N1))
    step = max(1, CHUNK_BYTES // (8 * N1 * N1))
    for start in range(0, B, step):
        part = slice(start, min(B, start + step))
        M, roots, first, shift = matrix_tree.build_matrices(scores[part], lens[part], single_root)
        if N1 - 1 <= SMALL_MATRIX:
            inverse_t, logdet, bad = matrix_tree.invert_small(M, lens[part])
            logZ[part] = logdet + shift
        else:
            # LAPACK works in column-major order: factor the transpose (the same buffer, no
            # copy) and solve with its adjoint, which leaves the transposed inverse row-major.
            LU, piv, info = torch.linalg.lu_factor_ex(torch.from_numpy(M).transpose(1, 2))
            eye = torch.eye(N1 - 1, dtype=torch.float64).expand(len(M), -1, -1)
            inverse = torch.linalg.lu_solve(LU, piv, eye, adjoint=True)
            inverse_t = inverse.transpose(1, 2).numpy()
            logZ[part], bad = matrix_tree.log_determinants(LU.numpy(), piv.numpy(), shift,
                                                           info.numpy() == 0)
        ok = matrix_tree.marginals_from_inverse(M, roots, first, lens[part], single_root,
                                                inverse_t, mu[part], matrix_tree.TOL)
        bad |= ~ok | ~np.isfinite(logZ[part])
        for b in start + np.flatnonzero(bad):
            logZ[b], m = _exact(S[b], int(lens[b]), single_root)
            mu[b] = 0.0
            mu[b, :len(m), :len(m)] = m
    return torch.from_numpy(logZ).to(S.dtype), torch.from_numpy(mu).to(S.dtype)


def _nonprojective_tensor(S: torch.Tensor, lengths: torch.Tensor, single_root: bool):
    """(log Z, marginals) of a batch by tensor operations (any device)."""
    B, N1, _ = S.shape
    n = N1 - 1
    mask = _arc_mask(lengths, N1)
    neg = torch.tensor(-torch.inf, dtype=S.dtype, device=S.device)
    logA = torch.where(mask, S, neg)
    c = logA.amax(dim=1)
    c = torch.where(torch.isfinite(c), c, torch.zeros_like(c))
    logA = logA - c[:, None, :]
    words = logA[:, 1:, 1:]
    heads = words if single_root else logA[:, :, 1:]
    log_diag = torch.logsumexp(heads, dim=1)
    eye = torch.eye(n, dtype=torch.bool, device=S.device)
    pad = torch.arange(1, N1, device=S.device)[None, :] > lengths[:, None]  # (B, n)
    logmag = torch.where(eye, log_diag[:, None, :].expand(B, n, n), words)
    sign = torch.where(eye, 1.0, -1.0).to(S.dtype).expand(B, n, n).clone()
    if single_root:
        logmag = torch.cat([logA[:, :1, 1:], logmag[:, 1:]], dim=1)
        sign[:, 0] = 1.0
    # padded words: an identity block, which leaves the determinant alone
    pad_diag = pad[:, :, None] & eye
    logmag = torch.where(pad_diag, torch.zeros_like(logmag), logmag)
    rho = logmag.amax(dim=2)
    rho = torch.where(torch.isfinite(rho), rho, torch.zeros_like(rho))
    M = sign * torch.exp(logmag - rho[:, :, None])
    LU, piv, info = torch.linalg.lu_factor_ex(M)
    diag = LU.diagonal(dim1=1, dim2=2)
    logZ = torch.log(diag.abs()).sum(-1) + rho.sum(-1) + c.sum(-1)
    eye_b = torch.eye(n, dtype=S.dtype, device=S.device).expand(B, n, n)
    Minv = torch.linalg.lu_solve(LU, piv, eye_b)  # Minv[b, j, i]
    d = Minv.diagonal(dim1=1, dim2=2)
    own = torch.exp(words - rho[:, None, :]) * d[:, None, :]
    cross = torch.exp(words - rho[:, :, None]) * Minv.transpose(1, 2)
    mu = torch.zeros_like(S)
    if single_root:
        own[:, :, 0] = 0.0
        cross[:, 0, :] = 0.0
        mu[:, 0, 1:] = torch.exp(logA[:, 0, 1:] - rho[:, :1]) * Minv[:, :, 0]
    else:
        mu[:, 0, 1:] = torch.exp(logA[:, 0, 1:] - rho) * d
    mu[:, 1:, 1:] = own - cross
    mu = torch.where(mask, mu, torch.zeros_like(mu))
    # sentences the factorization got wrong: non-finite, or marginals off the simplex
    tol = 1e-4 if S.dtype == torch.float32 else 1e-8
    bad = (info != 0) | ~torch.isfinite(logZ) | ~torch.isfinite(mu).all(dim=(1, 2))
    bad |= (mu < -tol).any(dim=(1, 2)) | (mu > 1 + tol).any(dim=(1, 2))
    col = mu.sum(dim=1)[:, 1:]
    bad |= ((col - 1).abs() > tol).masked_fill(pad, False).any(dim=1)
    mu = mu.clamp(0.0, 1.0)
    for b in torch.nonzero(bad).flatten().tolist():
        z, m = _exact(S[b], int(lengths[b]), single_root)
        logZ[b] = z
        mu[b] = 0.0
        mu[b, :len(m), :len(m)] = torch.from_numpy(m).to(mu)
    return logZ, mu


# ------------------------------------------------------------------------- projective


def _stripe(x: torch.Tensor, items: int, width: int, row: int, col: int, vertical: bool):
    """View of x[:, row + i (+ j), col + i (+ j)] for i < items, j < width (j down if vertical)."""
    B, N1, _ = x.shape
    sb, sr, sc = x.stride()
    step = sr if vertical else sc
    return x.as_strided((B, items, width), (sb, sr + sc, step),
                        x.storage_offset() + row * sr + col * sc)


def _inside_tensor(S: torch.Tensor, lengths: torch.Tensor, single_root: bool) -> torch.Tensor:
    """log Z over projective trees, vectorized over the spans of each width; differentiable."""
    B, N1, _ = S.shape
    huge = torch.finfo(S.dtype).min / 1e4  # -inf would give NaN gradients in logsumexp
    S = torch.where(_arc_mask(lengths, N1), S, torch.full_like(S, huge))
    S = torch.nan_to_num(S, neginf=huge)
    CR = S.new_full((B, N1, N1), huge)
    CL = S.new_full((B, N1, N1), huge)
    IR = S.new_full((B, N1, N1), huge)
    IL = S.new_full((B, N1, N1), huge)
    CR.diagonal(dim1=1, dim2=2).fill_(0.0)
    CL.diagonal(dim1=1, dim2=2).fill_(0.0)
    for w in range(1, N1):
        items = N1 - w
        split = torch.logsumexp(_stripe(CR, items, w, 0, 0, False)
                                + _stripe(CL, items, w, 1, w, True), dim=-1)
        IR.diagonal(w, dim1=1, dim2=2).copy_(split + S.diagonal(w, dim1=1, dim2=2))
        left = split + S.diagonal(-w, dim1=1, dim2=2)
        left = torch.cat([left.new_full((B, 1), huge), left[:, 1:]], dim=1)  # no arc into 0
        IL.diagonal(w, dim1=1, dim2=2).copy_(left)
        CR.diagonal(w, dim1=1, dim2=2).copy_(torch.logsumexp(
            _stripe(IR, items, w, 0, 1, False) + _stripe(CR, items, w, 1, w, True), dim=-1))
        CL.diagonal(w, dim1=1, dim2=2).copy_(torch.logsumexp(
            _stripe(CL, items, w, 0, 0, False) + _stripe(IL, items, w, 0, w, True), dim=-1))
    batch = torch.arange(B, device=S.device)
    if not single_root:
        return CR[batch, 0, lengths]
    r = torch.arange(1, N1, device=S.device)
    terms = S[:, 0, 1:] + CL[:, 1, 1:] + CR[batch[:, None], r[None, :], lengths[:, None]]
    terms = terms.masked_fill(r[None, :] > lengths[:, None], -torch.inf)
    return torch.logsumexp(terms, dim=-1)


def _projective_tensor(S: torch.Tensor, lengths: torch.Tensor, single_root: bool):
    with torch.enable_grad():
        leaf = S.detach().requires_grad_(True)
        logZ = _inside_tensor(leaf, lengths, single_root)
        (mu,) = torch.autograd.grad(logZ.sum(), leaf)
    return logZ.detach(), mu


def _projective_cpu(S: torch.Tensor, lengths: torch.Tensor, single_root: bool):
    logZ = np.empty(S.shape[0])
    mu = np.zeros(S.shape)
    projective._marginals_batch(S.detach().to(torch.float64).numpy(), lengths.numpy(),
                                single_root, logZ, mu)
    return torch.from_numpy(logZ).to(S.dtype), torch.from_numpy(mu).to(S.dtype)


def _compute(S: torch.Tensor, lengths: torch.Tensor, projective: bool, single_root: bool):
    cpu = S.device.type == "cpu"
    if projective:
        return (_projective_cpu if cpu else _projective_tensor)(S, lengths, single_root)
    return (_nonprojective_cpu if cpu else _nonprojective_tensor)(S, lengths, single_root)


# ------------------------------------------------------------------------------ public


class _LogPartition(torch.autograd.Function):
    @staticmethod
    def forward(ctx, S, lengths, projective, single_root):
        logZ, mu = _compute(S.detach(), lengths, projective, single_root)
        ctx.save_for_backward(mu)
        return logZ

    @staticmethod
    def backward(ctx, grad):
        (mu,) = ctx.saved_tensors
        return grad[:, None, None] * mu, None, None, None


def log_partition(S: torch.Tensor, lengths=None, projective: bool = False,
                  single_root: bool = True) -> torch.Tensor:
    """log Z of each sentence, shape (B,); differentiable (the gradient is the marginals).

    O(B N³). Non-projective by a batched LU (Matrix-Tree Theorem), projective by the
    inside-outside algorithm. First derivatives only.
    """
    return _LogPartition.apply(S, _lengths(S, lengths), projective, single_root)


def log_partition_and_marginals(S: torch.Tensor, lengths=None, projective: bool = False,
                                single_root: bool = True):
    """(log Z of shape (B,), marginals of shape (B, N+1, N+1)) from one computation.

    The outputs are not attached to the autograd graph; use `log_partition` to train.
    """
    return _compute(S.detach(), _lengths(S, lengths), projective, single_root)


def marginals(S: torch.Tensor, lengths=None, projective: bool = False,
              single_root: bool = True) -> torch.Tensor:
    """Arc marginals mu[b, h, m] = P(h -> m in y_b), shape (B, N+1, N+1); zero on padding."""
    return log_partition_and_marginals(S, lengths, projective, single_root)[1]


def _decode(S, lengths, single_root, projective):
    lengths = _lengths(S, lengths)
    out = np.full((S.shape[0], S.shape[1]), -1, dtype=np.int64)
    b = _best_trees(S.detach().double().cpu().numpy(), lengths.cpu().numpy(), projective,
                    single_root, out)
    if b >= 0:
        raise NonFiniteScores(f"sentence {b}: no tree has a finite score")
    return torch.from_numpy(out).to(S.device)


def mst(S: torch.Tensor, lengths=None, single_root: bool = True) -> torch.Tensor:
    """Best non-projective tree of each sentence: heads (B, N+1), -1 at 0 and on padding."""
    return _decode(S, lengths, single_root, False)


def eisner(S: torch.Tensor, lengths=None, single_root: bool = True) -> torch.Tensor:
    """Best projective tree of each sentence: heads (B, N+1), -1 at 0 and on padding."""
    return _decode(S, lengths, single_root, True)


class TreeCRF:
    """The distribution P(y_b) ∝ exp(Σ S[b, h, m]) over the trees of each sentence of a
    batch, in the style of `torch.distributions`: a thin face over the functions above.

    Parameters
    ----------
    scores : (B, N+1, N+1) tensor, ``S[b, h, m]``
    lengths : (B,) words per sentence (default: all N)
    projective, single_root : the class of trees

    `log_partition` and `log_prob` are differentiable (the gradient of log Z is the
    marginals); `entropy`, `argmax`, `kbest` and `sample` are not.
    """

    def __init__(self, scores: torch.Tensor, lengths=None, projective: bool = False,
                 single_root: bool = True):
        self.scores = scores
        self.lengths = _lengths(scores, lengths)
        self.projective = projective
        self.single_root = single_root

    @property
    def log_partition(self) -> torch.Tensor:
        """(B,) log Z."""
        return log_partition(self.scores, self.lengths, self.projective, self.single_root)

    @property
    def marginals(self) -> torch.Tensor:
        """(B, N+1, N+1) arc marginals; zero on padding."""
        return marginals(self.scores, self.lengths, self.projective, self.single_root)

    def score(self, heads: torch.Tensor) -> torch.Tensor:
        """(B,) the score Σ S[b, heads[b, m], m] of the given trees (heads (B, N+1), -1 at 0
        and on padding)."""
        heads = torch.as_tensor(heads, device=self.scores.device)
        words = heads >= 0
        picked = self.scores.gather(1, heads.clamp(min=0)[:, None, :]).squeeze(1)
        return (picked * words).sum(dim=1)

    def log_prob(self, heads: torch.Tensor) -> torch.Tensor:
        """(B,) log P of the given trees."""
        return self.score(heads) - self.log_partition

    @property
    def entropy(self) -> torch.Tensor:
        """(B,) the entropy in nats, log Z - Σ mu S."""
        mu = self.marginals
        S = torch.where(mu > 0, self.scores, torch.zeros_like(self.scores))
        return self.log_partition - (mu * S).sum(dim=(1, 2))

    @property
    def argmax(self) -> torch.Tensor:
        """(B, N+1) heads of the best tree of each sentence."""
        return _decode(self.scores, self.lengths, self.single_root, self.projective)

    def _each(self, fn) -> list:
        scores = self.scores.detach().double().cpu().numpy()
        return [fn(np.ascontiguousarray(scores[b, :n + 1, :n + 1]))
                for b, n in enumerate(self.lengths.tolist())]

    def kbest(self, k: int) -> list[list[tuple[float, np.ndarray]]]:
        """The k best trees of each sentence, best first: (score, heads) pairs."""
        return self._each(lambda S: kbest(S, k, self.projective, self.single_root))

    def sample(self, size: int, rng=None) -> list[np.ndarray]:
        """`size` trees drawn exactly from each sentence's distribution: (size, n+1)
        arrays of heads, one per sentence."""
        rng = np.random.default_rng(rng)
        return self._each(lambda S: sample(S, size, self.projective, self.single_root, rng))
