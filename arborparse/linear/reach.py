"""The parser's reach: the arcs parsing scores, from the longest arcs of the training trees.

Two limits, both recorded by every linear trainer and saved in the model file:

- `reach`: the longest arc whose head comes before its word, and after it (the root's arcs
  not counted); longer arcs are left out of parsing.
- `TagReach`: the same per pair of tags (UPOS of the head, UPOS of the word): an arc is left
  out where its pair of tags never stood that far apart in that direction in the training
  trees, or never stood as head and word at all. An arc out of either is left out. Arcs
  between neighbours and from the root are never left out, so a tree of neighbours under
  any word is always within reach (in every class of trees: projective or not, one root
  or several); a tag the training trees did not have is held only to `reach`.

In the pipeline the parser trains on jackknifed tags, so the pairs its tagger tends to
predict are the pairs counted; training keeps the tag reach only where dev LAS is not more
than `TOLERANCE` higher without it (`keep_tag_reach`). English-EWT: 35.6 % of the test
set's arcs between words left out, LAS within 0.02 on the three treebanks at hand
(bench/RESULTS.md, "Twenty-fourth round").
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numba import njit

from arborparse.io.conllu import Sentence
from arborparse.linear.tokens import UPOS, string_hash
from arborparse.transforms import projectivize

FAR = 1 << 30  # no limit


def _trees(train: list[Sentence], single_root: bool, projective: bool):
    """(heads, UPOS) of the training trees; with `projective`, the projective trees trained
    toward too."""
    found = [(s.heads, s.upos) for s in train]
    if projective:
        found += [(projectivize(s, single_root).heads, s.upos) for s in train]
    return found


def reaches(train: list[Sentence], tag_reach: bool = True, single_root: bool = True,
            projective: bool = False) -> tuple[tuple[int, int], TagReach | None]:
    """(`reach`, `TagReach`) of the training trees (the second None unless `tag_reach`),
    the trees gathered once."""
    found = _trees(train, single_root, projective)
    return _reach(found), TagReach.of_trees(found) if tag_reach else None


def reach(train: list[Sentence], single_root: bool = True, projective: bool = False
          ) -> tuple[int, int]:
    """The parser's reach (`LinearParser`): the longest arcs of the training trees whose head
    comes before its word and after it, in words (arcs from the root not counted; at
    least 1 each way, so that a tree of arcs between neighbours is always within reach).
    With `projective`, the trees trained toward (`gold_data`'s projective trees) count
    too."""
    return _reach(_trees(train, single_root, projective))


def _reach(found) -> tuple[int, int]:
    before = after = 1
    for heads, _ in found:
        m = np.arange(1, len(heads))
        offset = (m - heads[1:])[heads[1:] > 0]
        before = max(before, int(offset.max(initial=0)))
        after = max(after, int(-offset.min(initial=0)))
    return before, after


@dataclass(frozen=True, eq=False)
class TagReach:
    """The longest arcs of the training trees per pair of tags and direction.

    tags : the UPOS tags of the training trees' words
    before, after : (K, K) int32, ``before[h, d]`` the longest arc whose head (tag h) comes
        before its word (tag d); ``after`` with the head after it; 0 where none
    """

    tags: tuple[str, ...]
    before: np.ndarray
    after: np.ndarray
    keys: np.ndarray = field(init=False, repr=False)  # the tags' hashes, as words have them

    def __post_init__(self):
        K = len(self.tags)
        if not all(isinstance(t, str) for t in self.tags) or len(set(self.tags)) != K:
            raise ValueError("the tags must be distinct strings")
        for table in (self.before, self.after):
            if table.shape != (K, K) or table.dtype != np.int32 or (table < 0).any():
                raise ValueError(f"the tables must be {K}x{K} whole numbers >= 0")
        object.__setattr__(self, "keys", np.array([string_hash(t, UPOS) for t in self.tags],
                                                  dtype=np.int64))

    @classmethod
    def of(cls, train: list[Sentence], single_root: bool = True, projective: bool = False
           ) -> TagReach:
        """The tag reach of the training trees (`reach`'s trees: with `projective`, the
        projective trees trained toward count too)."""
        return cls.of_trees(_trees(train, single_root, projective))

    @classmethod
    def of_trees(cls, found) -> TagReach:
        """The tag reach of (heads, UPOS) pairs."""
        tags = tuple(sorted({t for _, upos in found for t in upos}))
        index = {t: i for i, t in enumerate(tags)}
        before = np.zeros((len(tags), len(tags)), dtype=np.int32)
        after = np.zeros_like(before)
        for heads, upos in found:
            tag = np.array([index[t] for t in upos], dtype=np.int64)
            m = np.arange(1, len(heads))
            arc = heads[1:] > 0
            h, m = heads[1:][arc], m[arc]
            offset = m - h
            for table, side in ((before, offset > 0), (after, offset < 0)):
                np.maximum.at(table, (tag[h[side] - 1], tag[m[side] - 1]),
                              np.abs(offset[side]))
        return cls(tags, before, after)

    def header(self) -> dict:
        """As the model file's header holds it."""
        return {"tags": list(self.tags), "before": self.before.tolist(),
                "after": self.after.tolist()}

    @classmethod
    def from_header(cls, entry) -> TagReach:
        """Raises ValueError for an entry `header` did not write."""
        if not isinstance(entry, dict) or not {"tags", "before", "after"} <= set(entry):
            raise ValueError("not a tag reach")
        tags = entry["tags"]
        if not isinstance(tags, list):
            raise ValueError("the tags must be a list")
        K = len(tags)

        def whole(v):
            return isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= FAR
        tables = [entry["before"], entry["after"]]
        if not all(isinstance(t, list) and len(t) == K and all(
                isinstance(row, list) and len(row) == K and all(map(whole, row)) for row in t)
                for t in tables):
            raise ValueError(f"the tables must be {K}x{K} lists of whole numbers from 0 to "
                             f"{FAR}")
        return cls(tuple(tags), *(np.array(t, dtype=np.int32).reshape(K, K) for t in tables))

    def __eq__(self, other) -> bool:
        return isinstance(other, TagReach) and self.tags == other.tags and \
            (self.before == other.before).all() and (self.after == other.after).all()


def cut_arguments(reach: tuple[int, int] | None, tag_reach: TagReach | None
                  ) -> tuple[tuple, int]:
    """(`_cut`'s arguments after the UPOS hashes: the tag reach's tags and tables, the
    reach before and after; the sentence length, in words, up to which nothing is left
    out unless `n - 1` passes it): what `out_of_reach` and `arborparse.linear.chunk`
    read."""
    t = tag_reach
    before, after = reach or (FAR, FAR)
    tables = (np.zeros(0, dtype=np.int64) if t is None else t.keys,
              np.zeros((0, 0), dtype=np.int32) if t is None else t.before,
              np.zeros((0, 0), dtype=np.int32) if t is None else t.after, before, after)
    return tables, -1 if t is not None else min(reach) if reach else FAR


def out_of_reach(upos: np.ndarray, reach: tuple[int, int] | None,
                 tag_reach: TagReach | None) -> np.ndarray | None:
    """The arcs of a sentence that parsing leaves out, (n+1, n+1) booleans, or None where
    it leaves none out. `upos`: the UPOS hashes of words 1..n (`TokenTable.attrs`)."""
    tables, longer_than = cut_arguments(reach, tag_reach)
    if len(upos) - 1 <= longer_than:
        return None
    cut, found = _cut(np.ascontiguousarray(upos, dtype=np.int64), *tables)  # one compiled kind
    return cut if found else None


@njit(cache=True, nogil=True)
def _cut(upos, keys, before, after, reach_before, reach_after):
    n = upos.shape[0]
    tag = np.full(n, -1, dtype=np.int64)
    for i in range(n):
        for k in range(keys.shape[0]):
            if keys[k] == upos[i]:
                tag[i] = k
                break
    cut = np.zeros((n + 1, n + 1), dtype=np.bool_)
    found = False
    for h in range(1, n + 1):
        for m in range(1, n + 1):
            offset = m - h
            if offset == 1 or offset == -1 or offset == 0:
                continue
            known = tag[h - 1] >= 0 and tag[m - 1] >= 0
            if offset > 0:
                limit = reach_before
                if known:
                    limit = min(limit, max(before[tag[h - 1], tag[m - 1]], 1))
            else:
                limit = reach_after
                if known:
                    limit = min(limit, max(after[tag[h - 1], tag[m - 1]], 1))
            if abs(offset) > limit:
                cut[h, m] = True
                found = True
    return cut, found


# the dev LAS (in points) a tag reach may cost before training drops it (`keep_tag_reach`):
# the most an approximation may cost (tracker #29)
TOLERANCE = 0.1


def keep_tag_reach(parser, dev: list[Sentence], record: dict) -> dict:
    """Whether `parser` (a new best of training, whose dev scores with its tag reach are
    `record`'s) keeps its tag reach, as entries for the record: it is dropped (``parser.
    tag_reach = None``) where the dev LAS without it is higher by more than `TOLERANCE`
    points, and the record then takes the dev scores without it. Where the tags the
    parser meets are not those it trained on (a tagger far less accurate on the training
    folds than on dev), the pairs it met in training are not the pairs it meets."""
    from arborparse.eval import evaluate

    kept = parser.tag_reach
    if kept is None:
        return {"tag_reach": False}
    try:
        parser.tag_reach = None
        without = evaluate(dev, parser.parse(dev), multi_root=not parser.single_root)
    finally:
        parser.tag_reach = kept
    if without["LAS"] <= record["LAS"] + TOLERANCE:
        return {"tag_reach": True}
    parser.tag_reach = None
    return {"tag_reach": False, "tag_reach_dropped": True,
            **{k: without[k] for k in ("UAS", "LAS") if k in record}}


def kept_tag_reach(trainer, header: dict) -> None:
    """A resumed training's best parser (``trainer.parser_``) as its checkpoint `header`
    says it was: without its tag reach where `keep_tag_reach` dropped it (or the checkpoint
    was written before there was one), and then the trainer's later epochs without it too
    (``trainer.tag_reach_``), as the interrupted run scored them."""
    if not header.get("tag_reach", False):
        trainer.parser_.tag_reach = None
        trainer.tag_reach_ = None
