"""`LinearParser`: a trained linear model (first or second order) with its decoder; parses
sentences, saves, loads (model kind ``linear``; ``first-order`` in files of 0.1).

A second-order model's distribution, behind its marginals, MBR and calibration, is over
projective trees whatever the decoder (second-order marginals are projective); it has no
k-best trees."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from itertools import repeat

import numpy as np

from arborparse import trees
from arborparse.errors import ArborparseError
from arborparse.io import model_files as files
from arborparse.io.chunks import chunks
from arborparse.io.conllu import Sentence
from arborparse.io.validate import require_tags
from arborparse.linear.chunk import best_trees, concatenated
from arborparse.linear.labeler import Labeler
from arborparse.linear.model import (DECODERS, KIND, OLD_KINDS, OLDEST, THREADED_WORDS, VERSION,
                                     Encoded, LinearModel, Scores, arc_buffer, decode)
from arborparse.linear.options import GRAND_WORDS, SECOND_ORDER, SIBLING_WORDS, LinearOptions
from arborparse.linear.reach import TagReach, cut_arguments, out_of_reach
from arborparse.linear.templates import between_tables, cut_between, tree_label_scores
from arborparse.linear.tokens import UPOS, encode
from arborparse.options import check_options
from arborparse.transforms import projectivize
from arborparse.trees import second_order
from arborparse.trees.distribution import fit_temperature, label_temperature
from arborparse.trees.scores import allowed_best, allowed_scores, arc_labels, fold_labels, \
    labels_given_arcs
from arborparse.trees.structure import is_projective

# a chunk of sentences parsed by one compiled call (`LinearParser._iter_best_trees`): as many
# as make this many words, each counted as at least SHORTEST (so at most 64 sentences)
CHUNK_WORDS, SHORTEST = 2048, 32
NO_LABELER = np.zeros((0, 0), dtype=np.float32)  # `best_trees`: no labeler


class LinearParser:
    """A graph-based parser: a linear model of arcs (and, at order 2, of sibling and
    grandparent parts).

    Parameters
    ----------
    model : the trained `LinearModel`
    decoder : ``"mst"`` (non-projective) or ``"eisner"`` (projective)
    single_root : exactly one word attached to the root
    temperature : T of the distribution of the heads, P(heads) ∝ exp(Σ a(h, m) / T) with
        a(h, m) = T_l log Σ_l exp(s(h, m, l) / T_l) (and the parts' scores / T at order
        2), behind the head marginals and MBR (MAP trees do not depend on it)
    label_temperature : T_l of each arc's labels, P(l | h, m) ∝ exp(s(h, m, l) / T_l),
        behind LabelProb, the labeled marginals and the k best trees' probabilities. A
        labeled tree's probability is P(heads) Π P(l | h, m): with T_l = T the Gibbs
        distribution P(tree) ∝ exp(Σ s(h, m, l) / T) of a model trained as one (None:
        T_l = T). `calibrate` fits both (and the labeler's, below)
    labeler : the second-stage labeler (`arborparse.linear.labeler`) that labels the
        decided tree again (MAP, MBR and max-z trees; k-best trees keep the model's
        labels), or None; `fit_labeler` attaches one. Its labels' LabelProb is its own
        (`Labeler.probabilities`, at the labeler's temperature), not T_l's
    reach : (before, after), the longest arcs of the training trees whose head comes before
        its word and after it (`arborparse.linear.reach.reach`): parsing leaves longer
        arcs out (not scored; -inf), every tree and distribution is over the trees
        within reach, so a sentence of n words costs O(n · reach) arc and label scores,
        not O(n²), once n is past the shorter reach; arcs from the root are never left
        out. None (files written before it): none left out for being too long
    tag_reach : the same per pair of tags (`arborparse.linear.reach.TagReach`): an arc
        whose head's and word's UPOS never stood that far apart in that direction in the
        training trees is left out too, arcs between neighbours and from the root never.
        None (files written before it): only `reach` leaves arcs out
    """

    kind = KIND

    def __init__(self, model: LinearModel, decoder: str = "mst", single_root: bool = True,
                 temperature: float = 1.0, labeler: Labeler | None = None,
                 reach: tuple[int, int] | None = None, tag_reach: TagReach | None = None,
                 label_temperature: float | None = None):
        if decoder not in DECODERS:
            raise ArborparseError(f"unknown decoder {decoder!r}; choose one of {DECODERS}")
        self.model = model
        self.decoder = decoder
        self.single_root = single_root
        self.temperature = temperature
        self.label_temperature = temperature if label_temperature is None else label_temperature
        self.labeler = labeler
        self.reach = reach
        self.tag_reach = tag_reach

    @property
    def reach(self) -> tuple[int, int] | None:
        return self._reach

    @reach.setter
    def reach(self, reach) -> None:
        if isinstance(reach, np.ndarray):
            reach = reach.tolist()
        if reach is not None and not (isinstance(reach, (tuple, list)) and len(reach) == 2 and all(
                isinstance(r, (int, np.integer)) and not isinstance(r, bool) and r >= 1
                for r in reach)):
            raise ArborparseError(f"the reach must be two whole numbers >= 1 (or None), not "
                                  f"{reach!r}")
        self._reach = None if reach is None else (int(reach[0]), int(reach[1]))

    @property
    def tag_reach(self) -> TagReach | None:
        return self._tag_reach

    @tag_reach.setter
    def tag_reach(self, tag_reach) -> None:
        if tag_reach is not None and not isinstance(tag_reach, TagReach):
            raise ArborparseError(f"the tag reach must be a TagReach (or None), not "
                                  f"{type(tag_reach).__name__}")
        self._tag_reach = tag_reach

    @classmethod
    def load(cls, path) -> LinearParser:
        """Read a model file written by `save` (refuses other kinds and versions)."""
        return cls.from_parts(*files.load(path, KIND, VERSION, OLD_KINDS, OLDEST), path)

    def save(self, path, force: bool = False) -> None:
        """Write the model atomically (see `arborparse.io.model_files`; `force`: replace a
        file there that is not a model file)."""
        files.save(path, KIND, VERSION, *self.parts(), force=force)

    def parts(self) -> tuple[dict, dict]:
        """(header, arrays) of the model file."""
        header, arrays = self.model.parts(self.decoder, self.single_root, self.temperature)
        header["label_temperature"] = self.label_temperature
        if self.labeler is not None:
            entries, more = self.labeler.parts()
            header["labeler"] = entries
            arrays.update(more)
        if self.reach is not None:
            header["reach"] = list(self.reach)
        if self.tag_reach is not None:
            header["tag_reach"] = self.tag_reach.header()
        return header, arrays

    @classmethod
    def from_parts(cls, header: dict, arrays: dict, path) -> LinearParser:
        model = LinearModel.from_parts(header, arrays, path)
        labeler = None
        if header.get("labeler") is not None:  # files written before it have none
            try:
                labeler = Labeler.from_parts(header["labeler"], arrays, len(model.labels))
            except (KeyError, TypeError, ValueError) as e:
                raise files.ModelFileError(f"{path}: the model file's labeler is invalid "
                                           f"({e})") from e
        reach = header.get("reach")  # files written before it have none
        parser = cls(model, header["decoder"], header["single_root"], header["temperature"],
                     labeler, label_temperature=header["label_temperature"])
        try:
            parser.reach = reach
        except ArborparseError as e:
            raise files.ModelFileError(f"{path}: the model file's header is invalid ('reach': "
                                       f"{e})") from e
        if header.get("tag_reach") is not None:  # files written before it have none
            try:
                parser.tag_reach = TagReach.from_header(header["tag_reach"])
            except ValueError as e:
                raise files.ModelFileError(f"{path}: the model file's header is invalid "
                                           f"('tag_reach': {e})") from e
        return parser

    def _out_of_reach(self, x: Encoded) -> np.ndarray | None:
        """The arcs of x that parsing leaves out, (n+1, n+1) booleans (`reach`,
        `tag_reach`), or None where it leaves none out."""
        return out_of_reach(x.table.attrs[1:, UPOS], self.reach, self.tag_reach)

    def _joint(self, x: Encoded, heads: np.ndarray, tables: tuple | None = None
               ) -> np.ndarray:
        """The model's label scores s(heads[m], m, l) of the tree's arcs: (n+1, L) (from x's
        label tables, `LinearModel.label_tables`' first part, where they are made already)."""
        tables = tables or self.model.label_tables(x, with_sum=False)[0]
        return tree_label_scores(tables, np.asarray(heads, dtype=np.int64))

    def _best_with_joint(self, x: Encoded, decoder: str, combine: str = "sum",
                         threads: int = 1) -> tuple[np.ndarray, np.ndarray]:
        """The best tree (heads) and `_joint` of its arcs, the label tables made once for
        both."""
        tables = self.model.label_tables(x, with_sum=False)
        heads, _ = decode(self.model.scores(x, combine=combine, threads=threads, tables=tables,
                                            known=self._out_of_reach(x)),
                          decoder, self.single_root)
        return heads, self._joint(x, heads, tables[0])

    def fit_labeler(self, labeler: Labeler, dev: list[Sentence]) -> dict:
        """Attach `labeler` with the weight of the model's label scores that gives the best
        dev LAS (the universal part of DEPREL, as `arborparse.eval.evaluate` counts it) on
        the trees this parser decodes (`Labeler.choose`), and the temperature of its
        LabelProb fitted on them (`Labeler.fit_temperature`), or none where the model's own
        labels do as well; returns the dev scores (`evaluate`) of the parser as it now is."""
        from arborparse.eval import evaluate

        dev = [s for s in require_tags(dev) if s.has_tree]
        if not dev:
            raise ArborparseError("fit_labeler needs development sentences with trees")
        self.labeler = None
        tried = self._decoded(dev)
        universal = np.array([label.split(":")[0] for label in self.model.labels])
        gold = [(s.heads, np.array([d.split(":")[0] for d in s.deprels])) for s in dev]
        words = max(sum(len(s) for s in dev), 1)

        def las(labels):  # evaluate's LAS, on these trees alone
            return 100.0 * sum(int(((heads == gold_heads)[1:] &
                                    (universal[found[1:]] == gold_labels)).sum())
                               for (_, heads, _), (gold_heads, gold_labels), found
                               in zip(tried, gold, labels)) / words

        self.labeler, labels = labeler.choose(tried, las, self.root_label)
        if self.labeler is not None:
            self._fit_labeler_temperature(dev, tried)
        return evaluate(dev, [s.with_tree(heads, [self.model.labels[i] for i in found[1:]])
                              for s, (_, heads, _), found in zip(dev, tried, labels)],
                        multi_root=not self.single_root)

    def _decoded(self, dev: list[Sentence]) -> list[tuple]:
        """(table, heads, `_joint`) of each sentence's best tree by this parser's decoder:
        what the second-stage labeler labels."""
        tried = []
        for sentence in dev:
            x = self.model.encoded(sentence)
            tried.append((x.table, *self._best_with_joint(x, self.decoder)))
        return tried

    def _fit_labeler_temperature(self, dev: list[Sentence], tried: list | None = None
                                 ) -> float:
        """Fit the second-stage labeler's temperature on the gold labels of `dev`'s words
        whose head the parser gets right (`tried`: `_decoded(dev)` where the caller has it)
        and return it."""
        index = {label: i for i, label in enumerate(self.model.labels)}
        gold = [(s.heads, np.array([-1] + [index.get(d, -1) for d in s.deprels]))
                for s in dev]
        self.labeler = self.labeler.fit_temperature(
            self._decoded(dev) if tried is None else tried, gold, self.root_label)
        return self.labeler.temperature

    @staticmethod
    def _within_reach(S: np.ndarray, cut: np.ndarray | None) -> np.ndarray:
        """`labeled_scores` S with the arcs out of reach (`_out_of_reach`) at -inf."""
        if cut is not None:
            S[cut] = -np.inf
        return S

    def _projective(self, decoder: str | None = None) -> bool:
        """Whether the tree distribution is over projective trees (always at order 2)."""
        return (decoder or self.decoder) == "eisner" or self.model.order == 2

    def _log_partition(self, folded, sib, grand) -> float:
        """log Z of a sentence from its arc scores with the labels folded in (`folded`,
        (n+1, n+1)) and, at order 2, its sibling and grandparent scores."""
        if sib is None:
            return trees.log_partition(folded, self._projective(), self.single_root)
        return second_order.log_partition(folded, sib, grand, self.single_root)

    def calibrate(self, dev: Iterable[Sentence], limit: int = 1000) -> dict:
        """Fit the temperatures to development data, so that the marginals of a model not
        trained as a distribution (perceptron, MIRA, EG) are probabilities that mean what
        they say, and return them (``temperature``, ``label_temperature``, and
        ``labeler_temperature`` where a second-stage labeler gives the labels: its
        LabelProb's, `Labeler.fit_temperature`, on the same sentences).

        T_l maximizes Σ log P(gold label | gold arc) over the gold arcs within reach (and
        labels the model knows), each over the labels the arc may take (as LabelProb);
        then T the log-likelihood Σ log P(gold heads | sentence)
        of the first `limit` sentences with one root word where the model has one, each
        tree made projective where the distribution is (`projectivize`, as training does)
        and within reach, and scored with the parts it is parsed with
        (`LinearModel._parts_of`). (Leaving the non-projective trees out instead, a
        projective Gothic-PROIEL pipeline's mean HeadProb on dev stood 1.7 points above
        its UAS, 0.3 with them.) One temperature for both does neither: on a
        perceptron's English-EWT dev set the labels want a fifth of the heads' T, and the
        labeled trees' likelihood gave a third of it (mean HeadProb 0.11 above the UAS,
        LabelProb 0.12 below the label accuracy). Each is 1 where nothing is usable."""
        projective = self._projective()
        index = {label: i for i, label in enumerate(self.model.labels)}
        data, rows, gold_labels, used = [], [], [], []
        for sentence in dev:
            if len(data) == limit:
                break
            if not sentence.has_tree:
                continue
            used.append(sentence)
            heads, m = sentence.heads, np.arange(1, len(sentence) + 1)
            x = self.model.encoded(sentence)
            cut = self._out_of_reach(x)
            inside = np.array([label in index for label in sentence.deprels])
            if cut is not None:
                inside &= ~cut[heads[1:], m]
            rows.append(allowed_scores(self._joint(x, heads)[1:], heads[1:],
                                       self.root_label)[inside])
            gold_labels += [index[label] for label in np.array(sentence.deprels)[inside]]
            if self.single_root and (heads == 0).sum() != 1:
                continue
            if projective and not is_projective(heads):
                heads = projectivize(sentence, self.single_root).heads
            if cut is not None and cut[heads[1:], m].any():
                continue
            sib, grand = self.model.part_scores(x, marginals=True)
            parts = float(self.model.weights[self.model.tree_part_features(x, heads)].sum())
            data.append((x, cut,
                         *(None if p is None else p.astype(np.float32) for p in (sib, grand)),
                         (heads[1:], m), parts))

        self.label_temperature = label_temperature(
            np.concatenate(rows) if rows else np.empty((0, 0)), np.array(gold_labels, int))
        data = [(self.label_temperature * fold_labels(self._label_distribution_scores(x, cut)),
                 *rest) for x, cut, *rest in data]  # a(h, m)

        def heads_nll(log_t):
            scale, total = np.exp(-log_t), 0.0
            for arcs_scores, sib, grand, arcs, parts in data:
                total += (arcs_scores[arcs].sum() + parts) * scale - self._log_partition(
                    arcs_scores * scale, *(None if p is None else p * scale
                                           for p in (sib, grand)))
            return -total

        self.temperature = fit_temperature(heads_nll) if data else 1.0
        found = {"temperature": self.temperature, "label_temperature": self.label_temperature}
        if self.labeler is not None:
            found["labeler_temperature"] = self._fit_labeler_temperature(used)
        return found

    @property
    def capabilities(self) -> Capabilities:
        """The family's (`LinearOptions.parses`): marginals, MBR and k-best trees (order 1),
        either decoder; max-z only with hidden clusters."""
        return LinearOptions.offers({"clusters": self.model.clusters, "order": self.model.order})

    def marginals(self, sentence: Sentence, decoder: str | None = None) -> np.ndarray:
        """P(h -> m with label l) = P(h -> m) P(l | h, m) (`temperature`,
        `label_temperature`), over the trees of the decoder's class: an array
        (n+1, n+1, L) whose columns m >= 1 sum to 1."""
        x = self.model.encoded(sentence)
        mu = self._head_marginals(self._distribution(x), self._projective(decoder))
        return mu[..., None] * labels_given_arcs(self._label_distribution_scores(x))

    def head_marginals(self, sentence: Sentence, single_root: bool | None = None
                       ) -> np.ndarray:
        """P(h -> m) summed over labels: (n+1, n+1), each column m >= 1 sums to 1; over
        trees with one root word or any number (`single_root`; default: the model's)."""
        return self._head_marginals(self._distribution(self.model.encoded(sentence)),
                                    self._projective(), single_root)

    def _head_marginals(self, s: Scores, projective: bool, single_root: bool | None = None
                        ) -> np.ndarray:
        single_root = self.single_root if single_root is None else single_root
        if s.sib is None:
            return trees.marginals(s.folded, projective, single_root)
        return second_order.log_partition_and_marginals(s.folded, s.sib, s.grand,
                                                        single_root)[1]

    def window_marginals(self, sentence: Sentence, spans: Iterable[tuple[int, int]],
                         single_root: bool | None = None) -> Iterator[np.ndarray]:
        """`head_marginals` of the words a..b-1 (0-based) of `sentence` as a sentence of
        their own, for each (a, b) of `spans` (a paragraph's windows,
        `arborparse.text.syntax`). The marginals of cutting each window out and parsing it
        (to rounding), for less: the sentence is encoded once (at order 1 its label tables
        and in-between tables made once too, `LinearModel.window_label_tables`,
        `templates.cut_between`), and at order 1 an arc
        between two words that are inside this window and the one before, at neither
        window's edge (so it reads the same words around it in both), takes its score from
        that window instead of being scored again (a third of the arcs of windows of 30
        words every 10). A lone window is cut out and parsed as it is (a short paragraph
        would only load more compiled kernels)."""
        table, projective = encode(sentence, self.model.suffixes), self._projective()
        single_root = self.single_root if single_root is None else single_root
        spans = list(spans)
        if self.model.order > 1 or len(spans) == 1:
            for a, b in spans:
                yield self._head_marginals(self._distribution(Encoded.of_table(
                    table.cut(a, b))), projective, single_root)
            return
        scale = 1.0 / self.label_temperature  # as `_distribution` scores
        labels = self.model.label_tables(Encoded.of_table(table), scale)
        between = between_tables(table.attrs, self.model.clusters)
        before = None  # (a, b, the folded scores) of the window before
        for a, b in spans:
            known = shared = None
            if before is not None:
                lo, hi = max(a, before[0]) + 1, min(b, before[1]) - 1  # words lo..hi-1
                if hi - lo > 1:
                    shared = slice(lo - a + 1, hi - a + 1), slice(lo - before[0] + 1,
                                                                  hi - before[0] + 1)
                    known = np.zeros((b - a + 1, b - a + 1), dtype=bool)
                    known[shared[0], shared[0]] = True
            x = Encoded.of_table(table.cut(a, b))
            folded = self._distribution(
                x, known=known, tables=self.model.window_label_tables(labels, x, a, scale),
                between=cut_between(between, a, b - a + 1)).folded
            if shared is not None:
                folded[shared[0], shared[0]] = before[2][shared[1], shared[1]]
            before = (a, b, folded)
            yield trees.marginals(folded, projective, single_root)

    def kbest(self, sentence: Sentence, k: int) -> list[tuple[float, np.ndarray, list[str]]]:
        """The k most probable labeled trees, best first, as (probability, heads, labels):
        each arc with its best label (``root`` where and only where the head is 0, for a
        single-rooted model: `_rooted`), the probability that of the tree with those labels under the model's
        tree distribution (order 1 only). The trees are ranked as the best tree is chosen,
        with each arc's best label of all, so the first is the parse's tree; with two
        temperatures the probabilities need not fall in that order."""
        check_options(self, {"kbest": k})  # refused at order 2, naming what the model offers
        x = self.model.encoded(sentence)
        return self._kbest(x, self._distribution(x), k, self.decoder == "eisner")

    def _distribution(self, x: Encoded, threads: int = 1, known: np.ndarray | None = None,
                      tables: tuple | None = None, between: tuple | None = None) -> Scores:
        """The scores of the tree distribution, reduced over labels (best label, its
        score, the log-sum-exp): made at 1 / T_l and `tempered` to the heads' T, so that
        `folded` is a(h, m) / T; O(n²) memory, not O(n² L); `known`, `tables` (at 1 / T_l)
        and `between` as `LinearModel.scores` takes them (a window's)."""
        cut = self._out_of_reach(x)
        if cut is not None:
            known = cut if known is None else known | cut
        return self.model.scores(x, scale=1.0 / self.label_temperature, with_sum=True,
                                 threads=threads, known=known, tables=tables,
                                 between=between).tempered(
            self.label_temperature / self.temperature)

    def _kbest(self, x: Encoded, s: Scores, k: int, projective: bool):
        """The k best labeled trees as the best tree is chosen (by Σ s(h, m, l) with each
        arc's best label, at any temperature), each with its probability P(heads) Π P(l | h,
        m) under the two temperatures (with T_l = T in the same order; otherwise not
        always)."""
        log_z = trees.log_partition(s.folded, projective, self.single_root)
        label_log_probability = s.best_label_log_probability
        found = []
        for _, heads in trees.kbest(s.total, k, projective, self.single_root):
            m = np.arange(1, len(heads))
            score = float(s.folded[heads[1:], m].sum() +
                          label_log_probability[heads[1:], m].sum())
            best = arc_labels(s.label, heads)
            labels, joint = self._rooted(x, heads, best)
            if joint is not None:  # the probability of the labeled tree given
                changed = np.flatnonzero(labels != best)
                score += float((joint[changed, labels[changed]] -
                                joint[changed, best[changed]]).sum()) / self.label_temperature
            found.append((float(np.exp(score - log_z)), heads,
                          [self.model.labels[label] for label in labels[1:]]))
        return found

    def _label_distribution_scores(self, x: Encoded, cut: np.ndarray | None = None
                                   ) -> np.ndarray:
        """s(h, m, l) / T_l (the arcs out of reach, `cut` where the caller has it, at -inf),
        whose softmax over l is P(l | h, m) and T_l times whose log-sum-exp over l is
        a(h, m). (With hidden clusters, s / T_l is the scores under the weights / T_l, the
        clusters summed out at that scale, as `LinearModel.scores` makes them.)"""
        return self._within_reach(
            self.model.labeled_scores(x, scale=1.0 / self.label_temperature),
            self._out_of_reach(x) if cut is None else cut)

    def _label_probabilities(self, joint: np.ndarray, heads: np.ndarray, labels: np.ndarray
                             ) -> np.ndarray:
        """P(labels[m] | the tree's arc into m) at T_l over the labels the arc may take
        (`root_label`, `allowed_scores`), from the model's label scores of the tree's arcs
        (`_joint`), for each word m >= 1."""
        return self._arc_label_distribution(joint, heads)[np.arange(len(joint) - 1),
                                                          labels[1:]]

    def _arc_label_distribution(self, joint: np.ndarray, heads: np.ndarray) -> np.ndarray:
        """P(l | the tree's arc into m) at T_l of every label, (n, L), as
        `_label_probabilities` gives them for the labels chosen."""
        allowed = allowed_scores(joint[1:], heads[1:], self.root_label)
        return labels_given_arcs(allowed / self.label_temperature)

    @property
    def labels(self) -> list[str]:
        """The labels (DEPREL) the model knows, in the order of `label_distribution`'s
        columns."""
        return self.model.labels

    def iter_mixture(self, sentences: Iterable[Sentence],
                     left_out: Iterable[np.ndarray | None] | None = None) -> Iterator[tuple]:
        """What an ensemble (`arborparse.ensemble`) mixes, lazily: each sentence, its head
        marginals (n+1, n+1) as ``parse(..., marginals=True)`` gives them, and its encoding,
        which `label_distributions` reads instead of encoding the sentence again. Refused
        as `parse` refuses them: a sentence without tags, one too long for the memory.
        `left_out`: for each sentence in turn (read after it), the arcs ((n+1, n+1)
        booleans) left out of every tree, neither scored nor in any part (the marginals
        are then over the trees without them), or None."""
        cuts = repeat(None) if left_out is None else left_out
        for s, cut in zip(require_tags(sentences), cuts):
            self.model.check_fits(len(s), f"{s.where}: ", True, s.offsets is not None)
            x = self.model.encoded(s)
            yield s, self._head_marginals(self._distribution(x, known=cut),
                                          self._projective()), x

    def label_distributions(self, sentences: list[Sentence], trees: list,
                            prepared: list | None = None) -> list[np.ndarray]:
        """`label_distribution` of each sentence under its tree (heads); `prepared`: their
        encodings (`iter_mixture`), else each is encoded."""
        return [self.label_distribution(s, heads, x) for s, heads, x in
                zip(sentences, trees, prepared or [None] * len(sentences))]

    def label_distribution(self, sentence: Sentence, heads, x: Encoded | None = None
                           ) -> np.ndarray:
        """P(l | the tree `heads`) of every label l (`labels`) for each word m >= 1 of
        `sentence`, (n, L), each row summing to 1: the second-stage labeler's, each word
        given the labels it chose before it (`Labeler.distribution`), else the model's
        P(l | heads[m] -> m) at T_l, as ``LabelProb`` gives them for the labels chosen.
        `x`: the sentence's encoding, where made already."""
        x = self.model.encoded(sentence) if x is None else x
        heads = np.asarray(heads, dtype=np.int64)
        joint = self._joint(x, heads)
        if self.labeler is None:
            return self._arc_label_distribution(joint, heads)
        own = np.zeros(joint.shape)
        self.labeler.labels(x.table, heads, joint, own, root=self.root_label)
        return self.labeler.distribution(own, joint, heads, self.root_label)

    @property
    def root_label(self) -> int:
        """The id of the label ``root``, which goes with HEAD 0 and only with it (Universal
        Dependencies' one root word), or -1 for a label set without it and for a
        multi-root model (its treebank's other words under the root keep their labels)."""
        labels = self.model.labels
        return labels.index("root") if "root" in labels and self.single_root else -1

    def _rooted(self, x: Encoded, heads: np.ndarray, labels: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray | None]:
        """(`labels` (each arc's best) of the tree `heads` with ``root`` where and only
        where the head is 0, the model's label scores of the tree's arcs (`_joint`) where
        they were needed, else None): an arc that breaks the rule takes its best allowed
        label by those scores (`allowed_best`)."""
        root = self.root_label
        wrong = np.flatnonzero((heads[1:] == 0) != (labels[1:] == root)) + 1
        if root < 0 or not wrong.size:
            return labels, None
        joint, labels = self._joint(x, heads), labels.copy()
        for m in wrong:
            labels[m] = allowed_best(joint[m], heads[m], root)
        return labels, joint

    def parse_one(self, sentence: Sentence, **options) -> Sentence:
        """One sentence parsed; options as in `parse`."""
        return self.parse([sentence], **options)[0]

    def _parse_one(self, sentence: Sentence, decoder: str | None, decode_as: str,
                   marginals: bool, k: int | None, threads: int) -> Sentence:
        decoder = decoder or self.decoder
        projective = self._projective(decoder)
        self.model.check_fits(len(sentence), f"{sentence.where}: ",
                              marginals or decode_as == "mbr", sentence.offsets is not None)
        x = self.model.encoded(sentence)
        if not (marginals or k or decode_as == "mbr"):
            combine = "max" if decode_as == "max-z" else "sum"
            if self.labeler is None:
                heads, labels = decode(self.model.scores(x, combine=combine, threads=threads,
                                                         known=self._out_of_reach(x)),
                                       decoder, self.single_root)
                labels, _ = self._rooted(x, heads, labels)
            else:
                heads, joint = self._best_with_joint(x, decoder, combine, threads)
                labels = self.labeler.labels(x.table, heads, joint, root=self.root_label)
            return sentence.with_tree(heads, [self.model.labels[i] for i in labels[1:]])
        # one scoring serves the tree, MBR, the marginals and the k best; one
        # inside-outside (or Matrix-Tree elimination) serves MBR and the marginals
        s = self._distribution(x, threads)
        mu = self._head_marginals(s, projective) if marginals or decode_as == "mbr" else None
        if decode_as == "mbr":
            heads = trees.mbr(s.folded, projective, self.single_root, mu)
            labels = arc_labels(s.label, heads)
        else:
            heads, labels = decode(self.model.scores(x, combine="max", threads=threads,
                                                     known=self._out_of_reach(x))
                                   if decode_as == "max-z" else s, decoder, self.single_root)
        own = None
        if self.labeler is None:
            labels, joint = self._rooted(x, heads, labels)
        else:
            joint = self._joint(x, heads)
            own = np.zeros(joint.shape)
            labels = self.labeler.labels(x.table, heads, joint, own, root=self.root_label)
        parsed = sentence.with_tree(heads, [self.model.labels[i] for i in labels[1:]])
        if k:
            parsed = parsed.with_analysis(kbest=self._kbest(x, s, k, projective))
        if not marginals:
            return parsed
        head_prob = mu[heads[1:], np.arange(1, len(heads))]
        if own is not None and self.labeler.temperature is not None:
            label_prob = self.labeler.probabilities(own, joint, heads, labels, self.root_label)
        else:  # the model's P(label | arc) (files written before the labeler's temperature)
            label_prob = self._label_probabilities(
                self._joint(x, heads) if joint is None else joint, heads, labels)
        return parsed.with_misc([f"HeadProb={h:.4f}|LabelProb={lp:.4f}" for h, lp in
                                 zip(head_prob, label_prob)]) \
            .with_analysis(heads=mu)

    def iter_parse(self, sentences: Iterable[Sentence], **options) -> Iterator[Sentence]:
        """Parse lazily (for streams): the best trees a chunk of sentences at a time (as many
        as make `CHUNK_WORDS` words, each counted as at least `SHORTEST`), anything else
        one sentence at a time; options as in `parse`."""
        check_options(self, options)
        decoder, decode_as = options.get("decoder"), options.get("decode_as") or "map"
        marginals, k = bool(options.get("marginals")), options.get("kbest")
        threads = options.get("threads") or 1
        stream = require_tags(sentences)
        if decode_as == "map" and not (marginals or k) and self.model.clusters == 1:
            return self._iter_best_trees(stream, decoder or self.decoder, threads)
        return (self._parse_one(s, decoder, decode_as, marginals, k, threads) for s in stream)

    def _iter_best_trees(self, sentences: Iterator[Sentence], decoder: str, threads: int
                         ) -> Iterator[Sentence]:
        """`_parse_one`'s MAP trees, a chunk of sentences at a time in one compiled call
        (`arborparse.linear.chunk`): the same trees and labels. A sentence scored in
        threads, refused by `check_fits` or without a finite tree goes through
        `_parse_one` (which raises the error), after the sentences before it; where the
        input fails (a malformed line, a sentence without tags), the sentences read before
        it are parsed and given first."""
        for chunk in chunks(sentences, CHUNK_WORDS, self._chunk_words):
            yield from self._chunk_trees(chunk, decoder, threads)

    def _chunk_words(self, sentence: Sentence) -> float:
        """What a sentence counts for in a chunk: its words, at least `SHORTEST`; at order
        2, past `SHORTEST` words, times (words / `SHORTEST`)² with siblings alone and ³
        with grandparents (the chart's O(n³) and O(n⁴)), so that no chunk takes long in
        its one call (a sentence of 100 words with grandparents makes a chunk of its
        own)."""
        n = len(sentence)
        if self.model.order == 1 or n <= SHORTEST:
            return max(n, SHORTEST)
        power = {SECOND_ORDER[1]: 3, SECOND_ORDER[0]: 2}.get(self.model._parts_of(n), 0)
        return n * (n / SHORTEST) ** power

    def _chunk_trees(self, chunk: list[Sentence], decoder: str, threads: int
                     ) -> Iterator[Sentence]:
        """`_iter_best_trees` of one chunk."""
        start = 0
        while start < len(chunk):
            end = start
            while end < len(chunk) and self._chunkable(chunk[end], threads):
                end += 1
            done = self._best_trees(chunk[start:end], decoder)
            yield from done
            start += len(done)
            if start < len(chunk):
                yield self._parse_one(chunk[start], decoder, "map", False, None, threads)
                start += 1

    def _chunkable(self, sentence: Sentence, threads: int) -> bool:
        """Whether `_iter_best_trees` parses the sentence in its chunk: not scored in
        threads (`THREADED_WORDS`), and fits in memory (`check_fits`)."""
        if threads > 1 and len(sentence) >= THREADED_WORDS:
            return False
        try:
            self.model.check_fits(len(sentence), f"{sentence.where}: ", False,
                                  sentence.offsets is not None)
        except ArborparseError:
            return False
        return True

    def _best_trees(self, sentences: list[Sentence], decoder: str) -> list[Sentence]:
        """The sentences parsed by `arborparse.linear.chunk.best_trees`, up to the first
        without a tree of finite score (left out, with those after it)."""
        if not sentences:
            return []
        tables = [encode(s, self.model.suffixes) for s in sentences]
        attrs, attrs_ptr, feats_ptr, feats, feats_at = concatenated(tables)
        buf = arc_buffer(tables)
        m, labeler = self.model, self.labeler
        cut, longer_than = cut_arguments(self.reach, self.tag_reach)
        heads = np.empty(len(attrs), dtype=np.int64)
        labels = np.empty(len(attrs), dtype=np.int64)
        failed = best_trees(
            attrs, attrs_ptr, feats_ptr, feats, feats_at, buf, m.weights, m.keys,
            m.label_keys, len(m.labels), m.squeeze, *cut, longer_than, decoder == "eisner",
            self.single_root, -1 if m.order == 1 else SIBLING_WORDS,
            GRAND_WORDS if m.grandparents else -1,
            NO_LABELER if labeler is None else labeler.weights,
            1.0 if labeler is None else labeler.joint_weight, self.root_label, heads, labels)
        done = len(sentences) if failed < 0 else failed
        names = m.labels
        return [s.with_tree(heads[a:b], [names[i] for i in labels[a + 1:b]])
                for s, a, b in zip(sentences[:done], attrs_ptr[:done].tolist(),
                                   attrs_ptr[1:done + 1].tolist())]

    def parse(self, sentences: Iterable[Sentence], **options) -> list[Sentence]:
        """Every sentence with HEAD and DEPREL predicted (nothing else changes).

        decoder : override the model's decoder, ``"mst"`` or ``"eisner"``
        decode_as : ``"map"`` (the best tree), ``"mbr"`` (the tree with the most expected
            correct heads, Smith & Smith 2007 §4, each arc then labeled as the best tree's
            are) or ``"max-z"`` (models with
            hidden clusters: the best tree when each arc keeps only its best cluster,
            Smith & Smith §5)
        marginals : add ``HeadProb`` (the probability of the chosen head) and ``LabelProb``
            (of the chosen label given that head; with a second-stage labeler whose
            temperature was fitted, the labeler's probability of it given the tree and the
            labels given before, over the labels the arc may take) to each word's MISC,
            and the head
            marginals to each sentence's ``analysis["heads"]``
        kbest : put the k most probable trees in each sentence's ``analysis["kbest"]``
            (computed from the same scores as the tree)
        threads : score the arcs of sentences of 64 words or more in this many threads
            (default 1; the same trees, sooner on several cores)

        Options the model does not take raise `arborparse.options.OptionError`.
        """
        return list(self.iter_parse(sentences, **options))
