"""The network: encoder, biaffine arc and label scorers, tagging heads.

Each word is the concatenation of its word embedding and a character CNN over its
characters (max-pooled), the root a learned word of its own; a multi-layer BiLSTM reads the
sentence; with a pretrained transformer (`transformer`), its frozen word vectors join
the BiLSTM's input. Arc scores are biaffine (Dozat & Manning 2017):
``S[b, h, m] = d_m W h_h + u h_h`` with ``h`` and ``d`` two MLPs of the BiLSTM states
(head and dependent roles); label scores at a given head are bilinear per label over two
more MLPs. For the second-order objective, sibling scores are triaffine over three more MLPs
(head, dependent, sibling; Zhang et al. 2020): ``sib[b, h, m, s] = Σ W[i, j, k] h_i d_j s_k``
with a bias unit on the head and the sibling. UPOS, XPOS, FEATS and lemma edit scripts are
linear heads over the BiLSTM states.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from arborparse.io.conllu import Sentence
from arborparse.neural.vocab import PAD, ROOT, Vocabulary

HEADS = ("upos", "xpos", "feats", "lemma")  # the tagging heads


@dataclass
class Batch:
    """Sentences as tensors: word ids (B, N+1), the characters of the batch's distinct
    forms (U, C) with each word's form index (B, N+1), lengths (B,), the sentences' forms
    (for a transformer) and, for training, targets name -> (B, N+1) with -1 where there is
    nothing to predict."""

    words: torch.Tensor
    chars: torch.Tensor
    forms: torch.Tensor
    lengths: torch.Tensor
    texts: list[list[str]]
    targets: dict[str, torch.Tensor] | None = None

    @classmethod
    def of(cls, vocab: Vocabulary, sentences: list[Sentence],
           targets: list[dict] | None = None) -> Batch:
        """The batch of `sentences`; `targets`: their `Vocabulary.targets`, for training."""
        B, N1 = len(sentences), 1 + max(len(s) for s in sentences)
        words = np.zeros((B, N1), dtype=np.int64)
        forms = np.zeros((B, N1), dtype=np.int64)
        distinct = {"": 0, None: 1}  # padding, root
        for b, s in enumerate(sentences):
            words[b, :len(s) + 1] = vocab.word_ids(s)
            forms[b, 0] = 1
            forms[b, 1:len(s) + 1] = [distinct.setdefault(f, len(distinct)) for f in s.forms]
        spelled = [[PAD], [ROOT]] + [vocab.char_ids(f) for f in list(distinct)[2:]]
        chars = np.zeros((len(spelled), max(map(len, spelled))), dtype=np.int64)
        for u, ids in enumerate(spelled):
            chars[u, :len(ids)] = ids
        gold = None
        if targets is not None:
            gold = {}
            for b, (s, values_of) in enumerate(zip(sentences, targets)):
                for name, values in values_of.items():
                    gold.setdefault(name, np.full((B, N1), -1, dtype=np.int64))[b, :len(s) + 1] \
                        = values
            gold = {name: torch.from_numpy(a) for name, a in gold.items()}
        return cls(torch.from_numpy(words), torch.from_numpy(chars), torch.from_numpy(forms),
                   torch.tensor([len(s) for s in sentences]), [s.forms for s in sentences],
                   gold)

    def to(self, device) -> Batch:
        """The batch on `device`."""
        move = lambda t: t.to(device)  # noqa: E731
        return Batch(move(self.words), move(self.chars), move(self.forms), move(self.lengths),
                     self.texts, None if self.targets is None else
                     {name: move(t) for name, t in self.targets.items()})


def _with_bias(x: torch.Tensor) -> torch.Tensor:
    """x with a last unit of 1 (..., d) -> (..., d+1)."""
    return torch.cat([x, x.new_ones(x.shape[:-1] + (1,))], -1)


class MLP(nn.Module):
    def __init__(self, n_in: int, n_out: int, dropout: float):
        super().__init__()
        self.linear = nn.Linear(n_in, n_out)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        return self.dropout(nn.functional.leaky_relu(self.linear(x), 0.1))


class Network(nn.Module):
    """Parameters
    ----------
    sizes : vocabulary sizes (`Vocabulary.sizes`)
    word_dim, char_dim, char_out : word embeddings, character embeddings, CNN filters
    hidden, layers : BiLSTM units per direction and layers
    arc_dim, label_dim : the arc and label MLPs
    sib_dim : the sibling MLPs (0: no sibling scores)
    dropout : on embeddings, between BiLSTM layers and after the MLPs
    transformer : a pretrained transformer's `transformer.record` (its directory and the
        digest of its configuration), or None
    """

    def __init__(self, sizes: dict[str, int], word_dim: int = 100, char_dim: int = 50,
                 char_out: int = 100, hidden: int = 200, layers: int = 2, arc_dim: int = 256,
                 label_dim: int = 128, sib_dim: int = 0, dropout: float = 0.33,
                 transformer: dict | None = None):
        super().__init__()
        self.config = {"word_dim": word_dim, "char_dim": char_dim, "char_out": char_out,
                       "hidden": hidden, "layers": layers, "arc_dim": arc_dim,
                       "label_dim": label_dim, "sib_dim": sib_dim, "dropout": dropout,
                       "transformer": transformer}
        self.transformer = None  # not a submodule: frozen, and not in the model file
        if transformer is not None:
            from arborparse.neural.transformer import Transformer
            self.transformer = Transformer(transformer)
        self.words = nn.Embedding(sizes["words"], word_dim, padding_idx=PAD)
        self.chars = nn.Embedding(sizes["chars"], char_dim, padding_idx=PAD)
        self.conv = nn.Conv1d(char_dim, char_out, 3, padding=1)
        self.dropout = nn.Dropout(dropout)
        extra = 0 if self.transformer is None else self.transformer.dim
        self.lstm = nn.LSTM(word_dim + char_out + extra, hidden, layers, batch_first=True,
                            bidirectional=True, dropout=dropout if layers > 1 else 0.0)
        width = 2 * hidden
        self.arc_head, self.arc_dep = MLP(width, arc_dim, dropout), MLP(width, arc_dim, dropout)
        self.arc_weight = nn.Parameter(torch.zeros(arc_dim, arc_dim))
        self.arc_bias = nn.Parameter(torch.zeros(arc_dim))
        if sib_dim:
            self.sib_head, self.sib_dep, self.sib_sib = (MLP(width, sib_dim, dropout)
                                                         for _ in range(3))
            self.sib_weight = nn.Parameter(torch.zeros(sib_dim + 1, sib_dim, sib_dim + 1))
        self.label_head = MLP(width, label_dim, dropout)
        self.label_dep = MLP(width, label_dim, dropout)
        self.label_weight = nn.Parameter(torch.zeros(sizes["labels"], label_dim + 1,
                                                     label_dim + 1))
        self.tags = nn.ModuleDict({name: nn.Linear(width, max(sizes[name], 1))
                                   for name in HEADS})

    def _characters(self, batch: Batch) -> torch.Tensor:
        """(B, N+1, char_out): the CNN over each distinct form, max-pooled."""
        x = self.conv(self.chars(batch.chars).transpose(1, 2))  # (U, char_out, C)
        x = x.masked_fill((batch.chars == PAD)[:, None, :], float("-inf")).amax(dim=2)
        x = torch.where(torch.isfinite(x), x, torch.zeros_like(x))  # the padding form
        return x[batch.forms]

    def encode(self, batch: Batch) -> torch.Tensor:
        """(B, N+1, 2 hidden): the BiLSTM states of the root and the words."""
        parts = [self.words(batch.words), self._characters(batch)]
        if self.transformer is not None:
            parts.append(self.transformer(batch.texts, batch.words.shape[1],
                                          batch.words.device))
        x = torch.cat(parts, dim=-1)
        x = self.dropout(x)
        # the lengths on the CPU, wherever the batch is (PyTorch asks for that)
        packed = pack_padded_sequence(x, (batch.lengths + 1).cpu(), batch_first=True,
                                      enforce_sorted=False)
        out, _ = self.lstm(packed)
        out, _ = pad_packed_sequence(out, batch_first=True, total_length=x.shape[1])
        return self.dropout(out)

    def arc_scores(self, states: torch.Tensor) -> torch.Tensor:
        """(B, N+1, N+1): S[b, h, m]."""
        head, dep = self.arc_head(states), self.arc_dep(states)
        S = head @ (dep @ self.arc_weight).transpose(1, 2)
        return S + (head @ self.arc_bias)[:, :, None]

    def sibling_scores(self, states: torch.Tensor) -> torch.Tensor:
        """(B, N+1, N+1, N+1): sib[b, h, m, s], the score of m as h's child whose next
        sibling towards h is s (`arborparse.trees.batch_second_order`)."""
        head, sib = _with_bias(self.sib_head(states)), _with_bias(self.sib_sib(states))
        dep = self.sib_dep(states)
        head_w = torch.einsum("bhi,ijk->bhjk", head, self.sib_weight)
        head_dep = torch.einsum("bhjk,bmj->bhmk", head_w, dep)
        return head_dep @ sib.transpose(1, 2)[:, None]

    def label_features(self, states: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(head, dep), each (B, N+1, label_dim+1): the two label MLPs' outputs of every
        position, with a bias unit (`label_products` reads them)."""
        return _with_bias(self.label_head(states)), _with_bias(self.label_dep(states))

    def label_scores(self, states: torch.Tensor, heads: torch.Tensor,
                     words: torch.Tensor) -> torch.Tensor:
        """(W, L): the score of each label for the W words where `words` (B, N+1) is true
        (row-major order), each under its head in `heads` (B, N+1)."""
        head, dep = self.label_features(states)
        head = head.gather(1, heads.clamp(min=0)[:, :, None].expand_as(head))[words]
        return self.label_products(dep[words], head)

    def label_products(self, dep: torch.Tensor, head: torch.Tensor) -> torch.Tensor:
        """(W, L): dep W_l head of each label l, for W (dependent, head) rows of
        `label_features`."""
        if not torch.is_grad_enabled():  # parsing: one kernel, the faster there
            return nn.functional.bilinear(dep, head, self.label_weight)  # dep W_l head, each l
        # training: the same by two matrix products, whose backward on the CPU takes a
        # 25th of bilinear's (0.06 s against 1.6 s for 640 words and 50 labels)
        L, i, j = self.label_weight.shape
        left = (dep @ self.label_weight.transpose(0, 1).reshape(i, L * j)).view(-1, L, j)
        return (left @ head[:, :, None]).squeeze(-1)

    def tag_scores(self, states: torch.Tensor, words: torch.Tensor,
                   names: tuple[str, ...] = HEADS) -> dict[str, torch.Tensor]:
        """name -> (W, classes) for the heads `names` (UPOS, XPOS, FEATS, lemma scripts) of
        the W positions where `words` (B, N+1) is true, in row-major order."""
        states = states[words]
        return {name: self.tags[name](states) for name in names}
