"""A pretrained transformer read from a local directory, as word vectors for the encoder.

The directory is what Hugging Face ``save_pretrained`` writes (``config.json``, weights in
``model.safetensors``, a fast tokenizer); nothing is downloaded and pickled weights are
refused. The transformer is frozen: each word's vector is the mean, over its subwords, of
the mean of the last four layers (fewer when the model has fewer); the root's is the first
special token's. Sentences longer than the model's positions are read in windows of whole
words. A model file records the directory and a digest of its ``config.json``; the
directory must be there, unchanged, to load it. Needs the extra ``arborparse[transformer]``.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import torch

from arborparse.errors import ArborparseError

LAYERS = 4  # the last layers averaged


def record(path) -> dict:
    """What a model file keeps of the transformer in directory `path`: the directory and the
    SHA-256 of its ``config.json``."""
    path = Path(path).resolve()
    config = path / "config.json"
    if not config.is_file():
        raise ArborparseError(f"{path}: not a transformer directory (no config.json; one is "
                              "written by save_pretrained)")
    return {"path": str(path), "config_sha256": hashlib.sha256(config.read_bytes()).hexdigest()}


class Transformer:
    """The transformer of a `record`, read from its directory, which must be unchanged."""

    def __init__(self, recorded: dict):
        self.path = recorded["path"]
        if record(self.path) != recorded:
            raise ArborparseError(f"{self.path}: the transformer's config.json differs from "
                                  "the one the model was trained with")
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        try:
            from transformers import AutoModel, AutoTokenizer
            from transformers.utils import logging
        except ImportError:
            raise ArborparseError("a transformer needs the package transformers: pip install "
                                  "'arborparse[transformer]'") from None
        logging.disable_progress_bar()
        logging.set_verbosity_error()
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(self.path, local_files_only=True)
            self.model = AutoModel.from_pretrained(self.path, local_files_only=True,
                                                   use_safetensors=True)
        except (OSError, ValueError) as err:
            first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
            raise ArborparseError(f"{self.path}: the transformer cannot be read ({first})") \
                from None
        if not self.tokenizer.is_fast:
            raise ArborparseError(f"{self.path}: the tokenizer must be a fast one "
                                  "(tokenizer.json), which maps subwords to words")
        self.model.eval().requires_grad_(False)
        self.dim = int(self.model.config.hidden_size)
        limits = [self.tokenizer.model_max_length,
                  getattr(self.model.config, "max_position_embeddings", None)]
        self.window = min(x for x in limits if x) - self.tokenizer.num_special_tokens_to_add()

    def _windows(self, sentences: list[list[str]]) -> list[tuple[int, int, int]]:
        """(sentence, first word, end word) of windows of at most `window` subwords."""
        counts = self.tokenizer(sentences, is_split_into_words=True, add_special_tokens=False)
        out = []
        for b, words in enumerate(sentences):
            per_word = [0] * len(words)
            for w in counts.word_ids(b):
                per_word[w] += 1
            first, used = 0, 0
            for i, k in enumerate(per_word):
                if used + k > self.window and i > first:
                    out.append((b, first, i))
                    first, used = i, 0
                used += k
            out.append((b, first, len(words)))
        return out

    def __call__(self, sentences: list[list[str]], width: int, device) -> torch.Tensor:
        """(B, width, dim): the root's and each word's vector, zeros past the words (and for
        a word without subwords)."""
        self.model.to(device)
        out = torch.zeros(len(sentences), width, self.dim, device=device)
        windows = self._windows(sentences)
        pieces = [sentences[b][i:j] for b, i, j in windows]
        enc = self.tokenizer(pieces, is_split_into_words=True, padding=True,
                             return_tensors="pt").to(device)
        with torch.no_grad():
            layers = self.model(**enc, output_hidden_states=True).hidden_states
            states = torch.stack(layers[-LAYERS:]).mean(0)  # (windows, T, dim)
        for k, (b, first, _) in enumerate(windows):
            if first == 0:
                out[b, 0] = states[k, 0]
            ids = enc.word_ids(k)
            rows = [t for t, w in enumerate(ids) if w is not None]
            if not rows:
                continue
            words = torch.tensor([1 + first + ids[t] for t in rows], device=device)
            out[b].index_add_(0, words, states[k, rows])
            counts = torch.zeros(width, device=device).index_add_(
                0, words, torch.ones(len(rows), device=device))
            covered = counts > 0
            out[b, covered] = out[b, covered] / counts[covered, None]
        return out
