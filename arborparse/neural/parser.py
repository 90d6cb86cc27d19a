"""`NeuralParser`: the trained network with its vocabulary; tags, lemmatizes and parses
(model kind ``neural``).

The model reads the words alone. By default it writes its UPOS, XPOS and FEATS into the
sentences that lack UPOS somewhere and its lemmas where LEMMA is ``_``; with
``retag=True`` into every sentence and word, with ``keep_tags=True`` nowhere. HEAD and
DEPREL are always its own.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from itertools import islice

import numpy as np
import torch

from arborparse import memory
from arborparse.io import model_files as files
from arborparse.io.conllu import FEATS, LEMMA, UPOS, XPOS, Sentence
from arborparse.io.validate import only_sentences
from arborparse.neural.network import Batch, Network
from arborparse.neural.objectives import decode, marginals, tree_log_prob, word_mask
from arborparse.neural.options import NeuralOptions
from arborparse.neural.vocab import Vocabulary
from arborparse.options import check_options, tagging
from arborparse.text.lemmatizer import applies, apply_script
from arborparse.transforms import projectivize
from arborparse.trees import batch as tb
from arborparse.trees.distribution import fit_temperature, label_temperature
from arborparse.trees.scores import allowed_scores, labels_given_arcs

KIND = "neural"
# 2: the temperatures of the marginals (HeadProb, LabelProb), which a reader of version 1
# would leave out; version 1 files are read with both at 1, as they were written
VERSION, OLDEST = 2, 1
CHUNK = 1024  # sentences read ahead from a stream; sorted by length into batches
BATCH_WORDS = 2000  # words per batch when parsing
SCRIPTS_TRIED = 8  # lemma scripts tried, best first, for one that applies to the form
# what a parse takes per (n+1)², in bytes (its arc scores in float32 and float64, the
# decoder's arrays), for the best tree and with the marginals or MBR (measured with the
# default network: 46 and 54 bytes at 8,000 words), and a crf2o parse per (n+1)³ (its
# sibling scores and their marginals: 21 bytes at 450 words, decoded either way)
ARC_BYTES = (48, 64)
SIBLING_BYTES = 24


def batches(sentences: list[Sentence], words: int) -> list[list[int]]:
    """Indices of `sentences` in batches of similar length, about `words` words each."""
    order = sorted(range(len(sentences)), key=lambda i: len(sentences[i]))
    out, current, size = [], [], 0
    for i in order:
        if current and size + len(sentences[i]) > words:
            out.append(current)
            current, size = [], 0
        current.append(i)
        size += len(sentences[i])
    return out + [current] if current else out


class NeuralParser:
    """Parameters
    ----------
    vocab, network : the vocabulary and the trained network
    objective : what the arc scores were trained with (`objectives.OBJECTIVES`); a
        ``crf2o`` model also scores siblings, and decodes by MBR over its second-order
        marginals unless told ``decode_as="map"``
    decoder : ``"mst"`` (non-projective) or ``"eisner"`` (projective), the default of `parse`
    single_root : exactly one word attached to the root
    temperature, label_temperature : T of the tree CRF, whose scores are the network's / T
        (HeadProb, the marginals, MBR and the k best trees' probabilities; the best tree
        does not depend on it), and T_l of each arc's labels, P(l | h, m) ∝ exp(s / T_l)
        (LabelProb); `calibrate` fits both on dev, as `LinearParser.calibrate` does (a
        network trained to the tree CRF's likelihood overfits it: on Tamil-TTB dev, mean
        HeadProb 84.6 against UAS 69.8 at T = 1)
    """

    kind = KIND

    def __init__(self, vocab: Vocabulary, network: Network, objective: str = "crf",
                 decoder: str = "mst", single_root: bool = True, temperature: float = 1.0,
                 label_temperature: float = 1.0):
        self.vocab = vocab
        self.network = network
        self.objective = objective
        self.decoder = decoder
        self.single_root = single_root
        self.temperature, self.label_temperature = temperature, label_temperature
        self.capabilities = NeuralOptions.offers({"objective": objective})
        self.second_order = objective == "crf2o"

    # ------------------------------------------------------------------ parsing

    def _scripted(self, form: str, best: list[int]) -> str:
        """The form under the first lemma script of `best` (script ids, best first) that
        applies to it, else the form."""
        for k in best:
            script = self.vocab.scripts[k]
            if applies(form, script):
                return apply_script(form, script)
        return form

    def _lemmas(self, sentences: list[Sentence], upos: list[list[str]], states, retag: bool,
                wanted: list[bool]) -> dict[int, list[str]]:
        """Sentence index -> LEMMA column, for the sentences `wanted`: each word (each
        blank one unless `retag`) gets the lemma seen with its form and UPOS in training,
        else its form under the best applicable script; scripts are scored for those
        words only."""
        known = self.vocab.lemmas
        out, missing = {}, []  # missing: (sentence, word) without a known lemma
        need = torch.zeros(states.shape[:2], dtype=torch.bool)
        for b, s in enumerate(sentences):
            if not wanted[b]:
                continue
            column = out[b] = list(s.lemmas)
            for i, (form, u, lemma) in enumerate(zip(s.forms, upos[b], s.lemmas)):
                if lemma == "_" or retag:
                    seen = known.get(f"{form}\t{u}")
                    if seen is None:
                        missing.append((b, i))
                        need[b, i + 1] = True
                    else:
                        column[i] = seen
        if missing:
            scores = self.network.tag_scores(states, need.to(states.device), ("lemma",))
            ranked = scores["lemma"].topk(min(SCRIPTS_TRIED, scores["lemma"].shape[1])) \
                .indices.tolist()
            for (b, i), best in zip(missing, ranked):  # row-major, as `need` is
                out[b][i] = self._scripted(sentences[b].forms[i], best)
        return out

    def check_fits(self, sentence: Sentence, marginals: bool = False) -> None:
        """Refuse (`ArborparseError`, naming the sentence) a sentence whose parse would not
        fit in the memory free (`arborparse.memory`): `ARC_BYTES` for its arcs, the
        best tree or, with `marginals`, its marginals (or MBR tree, or k best) too, and a crf2o
        model's `SIBLING_BYTES` for its siblings."""
        memory.check_fits(len(sentence), ARC_BYTES[marginals or self.second_order],
                          SIBLING_BYTES * self.second_order, f"{sentence.where}: ",
                          "this crf2o model", "parse it with a first-order model "
                          "(arborparse train --model-type neural --objective crf)",
                          sentence.offsets is not None)

    def _parse_batch(self, sentences: list[Sentence], decoder: str, mbr: bool,
                     want_mu: bool, retag: bool, keep_tags: bool,
                     k: int | None = None) -> list[Sentence]:
        net, vocab = self.network, self.vocab
        with torch.inference_mode():
            lengths, states, S, sib, words = self._encoded(sentences, mbr or want_mu or bool(k))
            projective = decoder == "eisner"
            mu = marginals(S.double(), lengths, projective, self.single_root,
                           sib) if mbr or want_mu else None
            kbest = self._kbest(tb.TreeCRF(S.double(), lengths, projective, self.single_root),
                                states, lengths, k) if k else None
            heads = decode(S, lengths, projective, self.single_root, mu if mbr else None, sib)
            label_scores = net.label_scores(states, heads.to(states.device), words).float().cpu()
            labels = self._best_labels(label_scores, heads[words.cpu()])
            columns = self._tag_columns(sentences, states, words, retag, keep_tags)
        offsets = np.cumsum([0] + [len(s) for s in sentences]).tolist()
        out = []
        for b, s in enumerate(sentences):
            n = len(s)
            rows = slice(offsets[b], offsets[b + 1])  # the sentence's rows in the word scores
            parsed = s.with_tree(heads[b, :n + 1].numpy(),
                                 [vocab.labels[k] for k in labels[rows]])
            if columns[b]:
                parsed = parsed.with_columns(columns[b])
            if want_mu:
                m = np.arange(1, n + 1)
                mu_b = mu[b].numpy()[:n + 1, :n + 1]
                head_prob = mu_b[heads[b, 1:n + 1].numpy(), m]
                label_prob = self._label_distribution(
                    label_scores[rows].numpy(), heads[b, 1:n + 1].numpy())[
                    np.arange(n), labels[rows]]  # P(l given | arc)
                parsed = parsed.with_misc([f"HeadProb={h:.4f}|LabelProb={lp:.4f}"
                                           for h, lp in zip(head_prob, label_prob)]) \
                    .with_analysis(heads=mu_b)
            if k:
                parsed = parsed.with_analysis(kbest=kbest[b])
            out.append(parsed)
        return out

    def _tag_columns(self, sentences: list[Sentence], states: torch.Tensor,
                     words: torch.Tensor, retag: bool, keep_tags: bool) -> list[dict]:
        """The columns the model writes into each sentence of a batch (UPOS, XPOS and FEATS,
        LEMMA; none where it keeps the sentence's: the module docstring), from the
        encoder's `states` at the positions `words` (B, N+1)."""
        vocab = self.vocab
        tagged = [retag or (not keep_tags and "_" in s.upos) for s in sentences]
        lemmatized = [bool(vocab.scripts) and not keep_tags and (retag or "_" in s.lemmas)
                      for s in sentences]
        best = {}
        if any(tagged):
            best = {name: s.argmax(-1).tolist() for name, s in
                    self.network.tag_scores(states, words, ("upos", "xpos", "feats")).items()}
        offsets = np.cumsum([0] + [len(s) for s in sentences]).tolist()
        columns = [{column: [getattr(vocab, name)[k] for k in best[name][a:z]]
                    for name, column in (("upos", UPOS), ("xpos", XPOS), ("feats", FEATS))}
                   if tag else {} for tag, a, z in zip(tagged, offsets, offsets[1:])]
        if any(lemmatized):
            upos = [c.get(UPOS, s.upos) for c, s in zip(columns, sentences)]
            for b, lemmas in self._lemmas(sentences, upos, states, retag,
                                          lemmatized).items():
                columns[b][LEMMA] = lemmas
        return columns

    def iter_mixture(self, sentences: Iterable[Sentence], retag: bool = False,
                     keep_tags: bool = False) -> Iterator[tuple]:
        """What an ensemble (`arborparse.ensemble`) mixes, lazily: each sentence tagged as
        `parse` tags it (without a tree), its head marginals (n+1, n+1) as ``parse(...,
        marginals=True)`` gives them, and its label features (`Network.label_features`:
        the heads' (n+1, d+1) and the words' (n, d+1)), which `label_distributions` reads
        instead of encoding the sentence again."""
        yield from self._batched(sentences, lambda batch: self._mixture_batch(
            batch, retag, keep_tags))

    def _mixture_batch(self, sentences: list[Sentence], retag: bool, keep_tags: bool
                       ) -> list[tuple]:
        """`iter_mixture` of a batch of sentences."""
        with torch.inference_mode():
            lengths, states, S, sib, words = self._encoded(sentences, marginals=True)
            mu = marginals(S.double(), lengths, self.decoder == "eisner", self.single_root,
                           sib)
            columns = self._tag_columns(sentences, states, words, retag, keep_tags)
            features = self._label_features(sentences, states)
        return [(s.with_columns(c) if c else s, mu[b].numpy()[:len(s) + 1, :len(s) + 1],
                 features[b]) for b, (s, c) in enumerate(zip(sentences, columns))]

    def _states(self, sentences: list[Sentence], marginals: bool = False) -> tuple:
        """(lengths, the encoder's states) of a batch of sentences, each checked to fit in
        memory with room for its `marginals` or not (`check_fits`); in the caller's
        inference mode."""
        for s in sentences:
            self.check_fits(s, marginals)
        batch = Batch.of(self.vocab, sentences)
        return batch.lengths, self.network.encode(batch.to(next(
            self.network.parameters()).device))

    def _encoded(self, sentences: list[Sentence], marginals: bool) -> tuple:
        """(lengths, the encoder's states, arc scores, sibling scores or None, the words'
        positions (B, N+1)) of a batch of sentences (`_states`)."""
        lengths, states = self._states(sentences, marginals)
        S, sib = self._scores(states)
        return lengths, states, S, sib, word_mask(lengths, S.shape[1]).to(states.device)

    def _label_features(self, sentences: list[Sentence], states: torch.Tensor) -> list[tuple]:
        """Each sentence's label features (`Network.label_features`, on the CPU): the heads'
        (n+1, d+1) and the words' (n, d+1)."""
        head, dep = (f.float().cpu().numpy() for f in self.network.label_features(states))
        return [(head[b, :len(s) + 1], dep[b, 1:len(s) + 1]) for b, s in enumerate(sentences)]

    def _scores(self, states: torch.Tensor, temperature: float | None = None):
        """(arc scores (B, N+1, N+1), sibling scores (B, N+1, N+1, N+1) or None) / T (the
        model's, or `temperature`) on the CPU, in float32."""
        t = self.temperature if temperature is None else temperature
        sib = self.network.sibling_scores(states).float().cpu() / t if self.second_order \
            else None
        return self.network.arc_scores(states).float().cpu() / t, sib

    def calibrate(self, dev: Iterable[Sentence], limit: int = 1000) -> dict:
        """Fit the two temperatures to development data and return them (``temperature``,
        ``label_temperature``): T_l of maximum log-likelihood of the gold labels on the
        gold arcs (labels the model knows; over the labels each arc may take, `_root`, as
        LabelProb), T of the gold trees under the tree CRF, over
        the first `limit` sentences with a tree (one root word where the model has one;
        made projective where the CRF is, `projectivize`). Each is 1 where nothing is
        usable."""
        projective = self.decoder == "eisner" or self.second_order
        usable = [projectivize(s, self.single_root) if projective else s for s in islice(
            (s for s in dev if s.has_tree and
             (not self.single_root or (s.heads == 0).sum() == 1)), limit)]
        index = {label: i for i, label in enumerate(self.vocab.labels)}
        net, trees, rows, gold = self.network, [], [], []
        device = next(net.parameters()).device
        net.eval()
        with torch.inference_mode():
            for group in batches(usable, BATCH_WORDS):
                sentences = [usable[i] for i in group]
                lengths = torch.tensor([len(s) for s in sentences])
                heads = torch.full((len(sentences), int(lengths.max()) + 1), -1)
                for b, s in enumerate(sentences):
                    heads[b, :len(s) + 1] = torch.from_numpy(s.heads.astype(np.int64))
                states = net.encode(Batch.of(self.vocab, sentences).to(device))
                S, sib = (p if p is None else p.double() for p in self._scores(states, 1.0))
                trees.append((S, sib, lengths, heads))
                ids = torch.tensor([index.get(d, -1) for s in sentences for d in s.deprels])
                scores = net.label_scores(states, heads.to(device), word_mask(
                    lengths, heads.shape[1]).to(device)).double().cpu()
                known = (ids >= 0).numpy()
                words = heads[word_mask(lengths, heads.shape[1])].numpy()
                rows.append(allowed_scores(scores.numpy(), words, self._root)[known])
                gold.append(ids.numpy()[known])

        def trees_nll(log_t):
            t = np.exp(log_t)
            return -sum(float(tree_log_prob(S / t, heads, lengths, projective,
                                            self.single_root, None if sib is None else
                                            sib / t).sum())
                        for S, sib, lengths, heads in trees)

        self.label_temperature = label_temperature(
            np.concatenate(rows) if rows else np.empty((0, 0)),
            np.concatenate(gold) if gold else np.empty(0, int))
        self.temperature = fit_temperature(trees_nll) if trees else 1.0
        return {"temperature": self.temperature, "label_temperature": self.label_temperature}

    def _sentence(self, sentence: Sentence):
        """(arc scores, sibling scores or None, the encoder's states) of one sentence (with
        room for its marginals: `check_fits`)."""
        self.check_fits(sentence, marginals=True)
        net = self.network
        net.eval()
        with torch.no_grad():
            states = net.encode(Batch.of(self.vocab, [sentence]).to(
                next(net.parameters()).device))
            return *self._scores(states), states

    def head_marginals(self, sentence: Sentence, single_root: bool | None = None
                       ) -> np.ndarray:
        """P(h -> m) under the model's tree CRF: (n+1, n+1), columns m >= 1 sum to 1; over
        trees with one root word or any number (`single_root`; default: the model's)."""
        S, sib, _ = self._sentence(sentence)
        single_root = self.single_root if single_root is None else single_root
        return marginals(S.double(), torch.tensor([len(sentence)]), self.decoder == "eisner",
                         single_root, sib)[0].numpy()

    @property
    def labels(self) -> list[str]:
        """The labels (DEPREL) the model knows, in the order of `label_distributions`'
        columns."""
        return self.vocab.labels

    def label_distributions(self, sentences: list[Sentence], trees: list,
                            prepared: list | None = None) -> list[np.ndarray]:
        """P(l | heads[m] -> m) at T_l of every label l (`labels`) for each word m >= 1 of
        each sentence under its tree (heads), (n, L), each row summing to 1 (``root``
        where and only where the head is 0), as ``LabelProb`` gives them for the labels
        chosen; the sentences encoded in batches of similar length, or, given `prepared`
        (each one's label features, from `iter_mixture`), not encoded again."""
        if prepared is None:
            prepared = list(self._batched(sentences, self._encoded_features))
        return self._prepared_distributions(prepared, trees)

    def _encoded_features(self, sentences: list[Sentence]) -> list[tuple]:
        """`_label_features` of a batch of sentences, encoded (`_states`)."""
        with torch.inference_mode():
            return self._label_features(sentences, self._states(sentences)[1])

    def _prepared_distributions(self, prepared: list, trees: list) -> list[np.ndarray]:
        """`label_distributions` from the sentences' label features (`iter_mixture`), about
        `BATCH_WORDS` words a call."""
        net, found = self.network, [None] * len(trees)
        device = next(net.parameters()).device
        for group in batches(trees, BATCH_WORDS):
            heads = [np.asarray(trees[i])[1:] for i in group]
            head = np.concatenate([prepared[i][0][np.maximum(h, 0)]  # -1: as the root
                                   for i, h in zip(group, heads)])
            dep = np.concatenate([prepared[i][1] for i in group])
            with torch.inference_mode():
                scores = net.label_products(torch.from_numpy(dep).to(device),
                                            torch.from_numpy(head).to(device))
            scores = scores.float().cpu().numpy()
            offsets = np.cumsum([0] + [len(h) for h in heads])
            for i, h, a, z in zip(group, heads, offsets, offsets[1:]):
                found[i] = self._label_distribution(scores[a:z], h)
        return found

    def _label_distribution(self, scores: np.ndarray, heads: np.ndarray) -> np.ndarray:
        """P(l | heads[m] -> m) at T_l of every label, (W, L), from the words' label scores
        (W, L) under their `heads` (W,), over the labels each arc may take (`_root`)."""
        return labels_given_arcs(allowed_scores(scores, heads, self._root) /
                                 self.label_temperature)

    def kbest(self, sentence: Sentence, k: int) -> list[tuple[float, np.ndarray, list[str]]]:
        """The k most probable trees, best first, as (probability, heads, labels), each
        word with the best label under its head."""
        check_options(self, {"kbest": k})
        S, _, states = self._sentence(sentence)
        lengths = torch.tensor([len(sentence)])
        crf = tb.TreeCRF(S.double(), lengths, self.decoder == "eisner", self.single_root)
        return self._kbest(crf, states, lengths, k)[0]

    def _kbest(self, crf, states, lengths, k: int) -> list[list]:
        """`kbest` of every sentence of a batch, from its CRF and encoder states."""
        log_z = crf.log_partition
        words = word_mask(lengths, states.shape[1]).to(states.device)
        out = []
        for b, found in enumerate(crf.kbest(k)):
            trees = []
            for score, heads in found:
                padded = torch.zeros(1, states.shape[1], dtype=torch.long)
                padded[0, :len(heads)] = torch.from_numpy(np.asarray(heads))
                with torch.no_grad():
                    labels = self._best_labels(self.network.label_scores(
                        states[b:b + 1], padded.to(states.device), words[b:b + 1]).cpu(),
                        torch.from_numpy(np.asarray(heads[1:])))
                trees.append((float(np.exp(score - float(log_z[b]))), np.asarray(heads),
                              [self.vocab.labels[label] for label in labels]))
            out.append(trees)
        return out

    def _best_labels(self, scores: torch.Tensor, heads: torch.Tensor) -> list[int]:
        """Each word's best label by its `scores` (W, L) under its head in `heads` (W,),
        with ``root`` where and only where the head is 0 (`_root`)."""
        return allowed_scores(scores.numpy(), heads.numpy(), self._root).argmax(-1).tolist()

    @property
    def _root(self) -> int:
        """The id of the label ``root``, which goes with HEAD 0 and only with it (Universal
        Dependencies' one root word), or -1 for a label set without it and for a
        multi-root model."""
        labels = self.vocab.labels
        return labels.index("root") if "root" in labels and self.single_root else -1

    def iter_parse(self, sentences: Iterable[Sentence], **options) -> Iterator[Sentence]:
        """Parse lazily, a chunk of sentences at a time (for streams); options as in
        `parse`."""
        check_options(self, options)
        retag, keep_tags = tagging(options)
        decode_as = options.get("decode_as") or ("mbr" if self.second_order else "map")
        settings = (options.get("decoder") or self.decoder, decode_as == "mbr",
                    bool(options.get("marginals")), retag, keep_tags, options.get("kbest"))
        yield from self._batched(sentences, lambda batch: self._parse_batch(batch, *settings))

    def _batched(self, sentences: Iterable[Sentence], each_batch) -> Iterator:
        """What `each_batch` gives for each sentence of a batch, for every sentence of a
        stream, lazily and in order: `CHUNK` sentences read ahead, sorted by length into
        batches (`batches`)."""
        self.network.eval()
        stream = only_sentences(sentences)
        while chunk := list(islice(stream, CHUNK)):
            found = [None] * len(chunk)
            for group in batches(chunk, BATCH_WORDS):
                for i, item in zip(group, each_batch([chunk[i] for i in group])):
                    found[i] = item
            yield from found

    def parse(self, sentences: Iterable[Sentence], **options) -> list[Sentence]:
        """Every sentence with HEAD and DEPREL of the best tree, and tags and lemmas as the
        module docstring says.

        decoder : ``"mst"`` or ``"eisner"`` (default: the model's)
        decode_as : ``"map"`` (the best tree) or ``"mbr"`` (the most expected correct arcs;
            the default of a ``crf2o`` model)
        marginals : add ``HeadProb`` (the head's marginal probability) and ``LabelProb``,
            and the head marginals to each sentence's ``analysis["heads"]``
        kbest : the k most probable trees in each sentence's ``analysis["kbest"]``
        retag, keep_tags : tag every sentence, or none
        """
        return list(self.iter_parse(sentences, **options))

    # ------------------------------------------------------------------ model files

    def save(self, path, force: bool = False) -> None:
        files.save(path, KIND, VERSION, *self.parts(), force=force)

    def parts(self) -> tuple[dict, dict]:
        """(header, arrays) of the model file."""
        header = {"vocabulary": self.vocab.to_json(), "network": self.network.config,
                  "objective": self.objective, "decoder": self.decoder,
                  "single_root": self.single_root, "temperature": self.temperature,
                  "label_temperature": self.label_temperature}
        arrays = {f"param.{name}": p.detach().cpu().numpy()
                  for name, p in self.network.named_parameters()}
        return header, arrays

    @classmethod
    def load(cls, path) -> NeuralParser:
        return cls.from_parts(*files.load(path, KIND, VERSION, oldest=OLDEST), path)

    @classmethod
    def from_parts(cls, header: dict, arrays: dict, path) -> NeuralParser:
        try:
            vocab = Vocabulary.from_json(header["vocabulary"])
            net = Network(vocab.sizes(), **header["network"])
            state = {name.removeprefix("param."): torch.from_numpy(np.asarray(a))
                     for name, a in arrays.items() if name.startswith("param.")}
            net.load_state_dict(state, strict=True)
            net.eval()
            # files written before the temperatures: the network's own distribution
            temperatures = [float(header.get(k, 1.0))
                            for k in ("temperature", "label_temperature")]
            if not all(0 < t < float("inf") for t in temperatures):
                raise ValueError("the temperatures must be numbers > 0")
            return cls(vocab, net, str(header["objective"]), str(header["decoder"]),
                       bool(header["single_root"]), *temperatures)
        except (KeyError, TypeError, ValueError, RuntimeError) as e:
            raise files.ModelFileError(f"{path}: the neural model file is invalid ({e})") \
                from None
