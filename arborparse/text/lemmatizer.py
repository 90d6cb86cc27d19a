"""`Lemmatizer`: lemmas from the training dictionary where the word was seen with its UPOS,
otherwise from an edit script chosen by a classifier (as UDPipe's and spaCy's lemmatizers
do).

An edit script rewrites a form into its lemma: cut a prefix and a suffix (stored as the
strings cut, so a script applies only to forms that have them), add others, and lowercase
the result, capitalise it (its first letter upper case, the others lower) or keep the form's
case: ``("", "", "ies", "y", lower)`` turns ``Puppies`` into ``puppy``, ``("", "", "", "",
title)`` ``SMITH`` into ``Smith``. Scripts are read off the training pairs (the longest
common substring of the lowercased form and lemma is kept); a pair no script of that kind
describes keeps its lemma whole. The classifier (`arborparse.text.classifier`) chooses
among the scripts seen with the word's UPOS that apply to the form (and give a lemma that
begins as the training lemmas do), reading the word, its context and its UPOS and FEATS.
A script's score is its own weights' and those of its parts (`script_parts`: the prefix
rewrite, the suffix rewrite, the case), which it shares with every script that has them
(dev lemmas on gold words and tags: Finnish-TDT 78.20 -> 78.79, Gothic-PROIEL 94.67
-> 95.07, Russian-GSD 92.27 -> 92.52, German-GSD, Turkish-IMST and Hungarian-Szeged
+0.04 to +0.05). A script that adds letters applies only to forms of the writing systems
(that of the form's last letter: Latin, Tamil, CJK, ...) it was seen with in training, so a
Latin word, a URL or a number in a Tamil text keeps its form rather than taking a Tamil
ending. A URL, an e-mail address or a file path (as the tokenizer keeps them whole,
`arborparse.text.rules.WHOLE`) that the dictionary does not hold is its own lemma, case
and all, unless the treebank lemmatizes such words otherwise (`own_lemmas`: kept where it
has none, or at least half of its are their own lemma). A treebank without lemmas (``_``
everywhere) gives a lemmatizer that writes ``_``.

A treebank may write its forms with combining marks that its lemmas leave out: Biblical
Hebrew's vowel points and cantillation (``יֹשֵׁ֣ב``, lemma ``ישׁב``, whose shin dot stays).
No script that cuts and adds at the ends can take marks out of the middle of a word, so
the marks that the training lemmas hold at most `DROPPED` times as often as the forms
(`dropped_marks`) are taken out of every form before its script is read off or applied
(`Lemmatizer.bare`; a word no script applies to then keeps its form without them). A word
seen in training is looked up as it was written; one seen only with other marks (another
cantillation) takes the lemma of those forms (`bare_dictionary`).
"""

from __future__ import annotations

import unicodedata
from collections import Counter, defaultdict
from collections.abc import Iterable
from difflib import SequenceMatcher
from functools import lru_cache

import numpy as np

from arborparse.io.conllu import LEMMA, Sentence
from arborparse.text.classifier import Classifier, candidate_arrays, offsets
from arborparse.text.features import word_features
from arborparse.text.rules import whole_pattern

VERSION = 7  # of the lemmatizer inside a model file (4: the classes of a feature side by side;
# 5: the shapes of words without case, the writing systems of each script; 6: scripts that
# capitalise, which a reader of 5 would apply as keeping the case; 7: the combining marks
# taken out of forms, which a reader of 6 would leave in)
OLDEST = 5
KEEP, LOWER, TITLE = "keep", "lower", "title"
DROPPED = 0.05  # a combining mark the lemmas hold at most this share as often as the forms
DROPPED_SEEN = 5  # ... seen at least so many times in the forms is taken out of them
# (`dropped_marks`; Coptic-Scriptorium's one dot below in 35,768 words is not)
OWN = ("url", "email", "path")  # the kinds of `WHOLE` that may be their own lemma
FOUND = 1 << 17  # (form, UPOS) pairs whose candidate scripts are kept between calls


def own_lemmas(pairs: Iterable[tuple[str, str]]) -> tuple[str, ...]:
    """The kinds of `OWN` whose words are their own lemmas in a treebank's (form, lemma)
    `pairs`: it has no such word, or at least half of them are."""
    pattern = whole_pattern(OWN)
    found, own = Counter(), Counter()
    for form, lemma in pairs:
        match = pattern.fullmatch(form)
        if match is not None:
            found[match.lastgroup] += 1
            own[match.lastgroup] += lemma == form
    return tuple(kind for kind in OWN if 2 * own[kind] >= found[kind])


def dropped_marks(pairs: Iterable[tuple[str, str]]) -> str:
    """The combining marks (Unicode category Mn) of a treebank's (form, lemma) `pairs` that
    its lemmas leave out: held by the forms `DROPPED_SEEN` times or more, and by the lemmas
    at most `DROPPED` times as often (in order, one string). Both are counted decomposed
    (NFD), so that forms and lemmas written in different normal forms drop nothing; a
    form's precomposed letters keep their marks (`Lemmatizer.bare` takes out stand-alone
    marks only)."""
    in_forms, in_lemmas = Counter(), Counter()
    for form, lemma in pairs:  # decomposed: an accent in a precomposed letter counts too
        in_forms.update(c for c in unicodedata.normalize("NFD", form)
                        if unicodedata.category(c) == "Mn")
        in_lemmas.update(c for c in unicodedata.normalize("NFD", lemma)
                         if unicodedata.category(c) == "Mn")
    return "".join(sorted(c for c, n in in_forms.items()
                          if n >= DROPPED_SEEN and in_lemmas[c] <= DROPPED * n))


def edit_script(form: str, lemma: str) -> tuple[str, str, str, str, str]:
    """(prefix cut, prefix added, suffix cut, suffix added, case) turning form into lemma;
    a lemma sharing nothing with the form is added whole."""
    f, l = form.lower(), lemma.lower()
    match = SequenceMatcher(None, f, l, autojunk=False).find_longest_match(0, len(f), 0, len(l))
    if match.size == 0:
        script = (f, lemma, "", "", KEEP)
    else:
        rewrite = (f[:match.a], l[:match.b], f[match.a + match.size:], l[match.b + match.size:])
        script = (*rewrite, LOWER if lemma == lemma.lower() else KEEP)
        if apply_script(form, script) != lemma:  # ``SMITH`` or ``smith`` -> ``Smith``
            script = (*rewrite, TITLE)
    if apply_script(form, script) != lemma:  # case the script cannot express
        script = (f, lemma, "", "", KEEP)
    return script


@lru_cache(maxsize=1 << 12)
def _writing_system(c: str) -> str:
    """The first word of a letter's Unicode name (``LATIN``, ``TAMIL``, ``CJK``,
    ``HIRAGANA``, ...): its writing system, near enough; "" for anything else."""
    return unicodedata.name(c, "").split(" ")[0] if c.isalpha() else ""


def writing_system(form: str) -> str:
    """The writing system of a form's last letter ("" without letters)."""
    for c in reversed(form):
        if c.isalpha():
            return _writing_system(c)
    return ""


def script_parts(name: str) -> list[str]:
    """The parts of a script (by its classifier name, `Lemmatizer._name`) that it shares
    with other scripts: its prefix rewrite, its suffix rewrite and its case."""
    cut_prefix, add_prefix, cut_suffix, add_suffix, case = name.split("\t")
    return [f"prefix\t{cut_prefix}\t{add_prefix}", f"suffix\t{cut_suffix}\t{add_suffix}",
            f"case\t{case}"]


def applies(form: str, script) -> bool:
    """True when the form has the prefix and suffix the script cuts, and the lemma it gives
    is not empty."""
    lower = form.lower()
    cut_prefix, add_prefix, cut_suffix, add_suffix, _ = script
    cut = len(cut_prefix) + len(cut_suffix)
    return (cut < len(lower) or (cut == len(lower) and bool(add_prefix or add_suffix))) \
        and lower.startswith(cut_prefix) and lower.endswith(cut_suffix)


def apply_script(form: str, script) -> str:
    cut_prefix, add_prefix, cut_suffix, add_suffix, case = script
    core = form[len(cut_prefix):len(form) - len(cut_suffix)]
    lemma = add_prefix + core + add_suffix
    if case == TITLE:
        return lemma[:1].upper() + lemma[1:].lower()
    return lemma.lower() if case == LOWER else lemma


class Lemmatizer:
    """Lemmas from a dictionary and edit scripts.

    Parameters
    ----------
    epochs : passes of the script classifier over the training words
    bits : log2 of its hashed weight vector
    """

    kind = "lemmatizer"
    dropped, _drop = "", {}  # the marks `bare` takes out (none until `fit` finds some)
    bare_dictionary: dict = {}  # "UPOS\tform without them" -> lemma (`fit`)

    def __init__(self, epochs: int = 10, bits: int = 20, seed: int = 0):
        self.epochs = epochs
        self.bits = bits
        self.seed = seed

    def fit(self, train: list[Sentence], dev: list[Sentence] | None = None) -> Lemmatizer:
        """Learn the dictionary and the scripts from `train` (whose UPOS and FEATS are the
        gold ones); keep the classifier's epoch best on `dev`."""
        pairs = [(f, u, ft, lem) for s in train
                 for f, u, ft, lem in zip(s.forms, s.upos, s.feats, s.lemmas)]
        self.enabled = any(lem != "_" for *_, lem in pairs)
        if not self.enabled:
            return self
        counts = defaultdict(Counter)
        for form, upos, _, lemma in pairs:
            counts[form, upos][lemma] += 1
        self.dictionary = {f"{u}\t{f}": c.most_common(1)[0][0] for (f, u), c in counts.items()}
        self.own = own_lemmas((f, lem) for f, _, _, lem in pairs)
        self.dropped = dropped_marks((f, lem) for f, _, _, lem in pairs if lem != "_")
        self._drop = str.maketrans("", "", self.dropped)
        bare = defaultdict(Counter)  # a form unseen but for its marks: the lemmas of the rest
        for (form, upos), c in counts.items() if self.dropped else ():
            bare[f"{upos}\t{self.bare(form)}"].update(c)
        self.bare_dictionary = {k: c.most_common(1)[0][0] for k, c in bare.items()}
        script_of = {(f, lem): edit_script(self.bare(f), lem)
                     for f, lem in {(f, lem) for f, _, _, lem in pairs}}
        scripts = sorted(set(script_of.values()))
        self.script_index = {s: i for i, s in enumerate(scripts)}
        self.scripts = scripts
        by_suffix = defaultdict(set)  # (UPOS, suffix cut) -> scripts
        systems = defaultdict(set)  # script -> the writing systems of its forms
        for form, upos, _, lemma in pairs:
            script = script_of[form, lemma]
            by_suffix[upos, script[2]].add(self.script_index[script])
            systems[self.script_index[script]].add(writing_system(form))
        self.scripts_by_suffix = {k: sorted(v) for k, v in by_suffix.items()}
        self.systems = [systems[i] for i in range(len(scripts))]
        self._index_prefixes()
        self.given_index = {}
        self.classifier = Classifier([self._name(s) for s in scripts], self.bits,
                                     parts=script_parts)
        X, bounds, given, cptr, cand = self._arrays(train, grow=True)
        ids = np.array([self.script_index[script_of[f, lem]] for f, _, _, lem in pairs],
                       dtype=np.int64)
        data = X, bounds, ids, given, cptr, cand
        choose = None
        if dev and any(lem != "_" for s in dev for lem in s.lemmas):
            def choose(_):
                predicted = self.lemmas(dev)
                gold = [lem for s in dev for lem in s.lemmas]
                flat = [lem for sentence in predicted for lem in sentence]
                return 100.0 * np.mean([g == p for g, p in zip(gold, flat)])
        self.history_ = self.classifier.fit(data, self.epochs, self.seed, choose)
        return self

    @property
    def best_epoch_(self) -> int:
        """The classifier's kept epoch (see `Tagger.best_epoch_`)."""
        return self.classifier.best_epoch_ if self.enabled else 1

    @staticmethod
    def _name(script) -> str:
        return "\t".join(script)

    def bare(self, form: str) -> str:
        """The form without the combining marks the lemmas leave out (`dropped_marks`); a
        form of such marks alone stays as it is."""
        return (form.translate(self._drop) or form) if self.dropped else form

    def _given(self, upos: str, feats: str, grow: bool) -> int:
        key = f"{upos}|{feats}"
        if key not in self.given_index and grow:
            self.given_index[key] = len(self.given_index)
        return self.given_index.get(key, -1)

    def _arrays(self, sentences: list[Sentence], grow: bool):
        """(X, bounds, given, cptr, cand) for the classifier; `grow`: new (UPOS, FEATS)
        pairs get an id (in training)."""
        X = word_features([s.forms for s in sentences], {})
        bounds = offsets([len(s) for s in sentences])
        words = [(f, u, ft) for s in sentences for f, u, ft in zip(s.forms, s.upos, s.feats)]
        given = np.array([self._given(u, ft, grow) for _, u, ft in words], dtype=np.int64)
        found = self._found
        if len(found) > FOUND:
            found.clear()
        for form, upos in {(f, u) for f, u, _ in words}.difference(found):
            found[form, upos] = self._candidates(self.bare(form), upos)
        # a word no script applies to keeps its form (`bare`): the candidate -1 stands for that
        cptr, cand = candidate_arrays([found[f, u] or [-1] for f, u, _ in words])
        return X, bounds, given, cptr, cand

    def _index_prefixes(self) -> None:
        """(UPOS, suffix cut) -> prefix cut -> scripts, for `_candidates`; its answers are
        kept per (form, UPOS) across calls (up to `FOUND` of them)."""
        self._found = {}
        # what a lemma may begin with besides a letter or a digit: what the training
        # lemmas begin with (no ``+이+라며`` where Korean's lemmas join morphemes with +)
        self._starts = {lemma[:1] for lemma in self.dictionary.values()}
        self._by_cut = {}
        cuts = defaultdict(set)  # UPOS -> the lengths of the suffixes its scripts cut
        for key, ids in self.scripts_by_suffix.items():
            by_prefix = self._by_cut[key] = defaultdict(list)
            for i in ids:
                by_prefix[self.scripts[i][0]].append(i)
            cuts[key[0]].add(len(key[1]))
        self._suffix_cuts = {upos: sorted(lengths) for upos, lengths in cuts.items()}

    def _candidates(self, form: str, upos: str) -> list[int]:
        """The scripts seen with `upos` that apply to `form` (`applies`): those of each
        group found by the form's suffix and prefix (the strings its scripts cut) whose
        cuts do not overlap and give a lemma that is not empty, nor begins with a mark no
        training lemma begins with."""
        lower = form.lower()
        n = len(lower)
        found = []
        system = writing_system(form)
        for k in self._suffix_cuts.get(upos, ()):  # not every suffix: a long word's are many
            if k > n:
                break
            by_prefix = self._by_cut.get((upos, lower[n - k:]))
            if by_prefix is None:
                continue
            if len(by_prefix) <= n - k + 1:  # fewer prefixes cut than the form has
                groups = ((len(prefix), ids) for prefix, ids in by_prefix.items()
                          if lower.startswith(prefix))
            else:
                groups = ((j, by_prefix.get(lower[:j], ())) for j in range(n - k + 1))
            for j, ids in groups:
                if j + k < n:
                    found.extend(ids)
                elif j + k == n:  # all of the form cut: the script must add something
                    found.extend(i for i in ids if self.scripts[i][1] or self.scripts[i][3])
        # a script that adds letters applies to the writing systems it was seen with (no
        # Tamil ending after a Latin word), and gives a lemma that begins as lemmas do
        return [i for i in found if (system in self.systems[i] or
                                     not (self.scripts[i][1] or self.scripts[i][3]))
                and self._begins_as_lemmas(apply_script(form, self.scripts[i]))]

    def _begins_as_lemmas(self, lemma: str) -> bool:
        return lemma[:1].isalnum() or lemma[:1] in self._starts

    def lemmas(self, sentences: list[Sentence]) -> list[list[str]]:
        """The lemma of every word (UPOS and FEATS as given in the sentences)."""
        if not self.enabled:
            return [["_"] * len(s) for s in sentences]
        X, bounds, given, cptr, cand = self._arrays(sentences, grow=False)
        chosen = self.classifier.predict(X, bounds, given, cptr, cand).tolist()
        own = whole_pattern(self.own)
        out, k = [], 0
        for s in sentences:
            lemmas = []
            for form, upos in zip(s.forms, s.upos):
                known = self.dictionary.get(f"{upos}\t{form}")
                if known is None and self.bare_dictionary:
                    known = self.bare_dictionary.get(f"{upos}\t{self.bare(form)}")
                script = chosen[k]
                lemmas.append(known if known is not None else form if own is not None and
                              own.fullmatch(form) else self.bare(form) if script < 0 else
                              apply_script(self.bare(form), self.scripts[script]))
                k += 1
            out.append(lemmas)
        return out

    def parts(self) -> tuple[dict, dict]:
        """(header, arrays) for a model file."""
        if not self.enabled:
            return {"enabled": False}, {}
        header = {"enabled": True, "dictionary": self.dictionary,
                  "scripts": [list(s) for s in self.scripts],
                  "scripts_by_suffix": {f"{u}\t{suffix}": v for (u, suffix), v
                                        in self.scripts_by_suffix.items()},
                  "given_index": self.given_index,
                  "systems": [sorted(found) for found in self.systems],
                  "own": list(self.own), "dropped": self.dropped,
                  "bare_dictionary": self.bare_dictionary}
        return header, {"weights": self.classifier.weights}

    @classmethod
    def from_parts(cls, header: dict, arrays: dict, path) -> Lemmatizer:
        from arborparse.io.model_files import ModelFileError

        lemmatizer = cls()
        try:
            lemmatizer.enabled = bool(header["enabled"])
            if lemmatizer.enabled:
                lemmatizer.dictionary = dict(header["dictionary"])
                lemmatizer.scripts = [tuple(s) for s in header["scripts"]]
                lemmatizer.script_index = {s: i for i, s in enumerate(lemmatizer.scripts)}
                lemmatizer.scripts_by_suffix = {tuple(k.split("\t", 1)): v for k, v
                                                in header["scripts_by_suffix"].items()}
                lemmatizer.systems = [set(found) for found in header["systems"]]
                if len(lemmatizer.systems) != len(lemmatizer.scripts):
                    raise ValueError("a writing system list per script")
                lemmatizer._index_prefixes()
                lemmatizer.given_index = dict(header["given_index"])
                # files written before the rule: none of them is its own lemma by rule
                lemmatizer.own = tuple(k for k in header.get("own", ()) if k in OWN)
                lemmatizer.dropped = header.get("dropped", "")  # none in older files
                if not isinstance(lemmatizer.dropped, str) or any(
                        unicodedata.category(c) != "Mn" for c in lemmatizer.dropped):
                    raise ValueError(f"dropped {lemmatizer.dropped!r}: not combining marks")
                lemmatizer.bare_dictionary = dict(header.get("bare_dictionary", {}))
                lemmatizer._drop = str.maketrans("", "", lemmatizer.dropped)
                lemmatizer.classifier = Classifier(
                    [cls._name(s) for s in lemmatizer.scripts], weights=arrays["weights"],
                    parts=script_parts)
        except (KeyError, TypeError, ValueError) as e:
            raise ModelFileError(f"{path}: the lemmatizer in the model file is invalid "
                                 f"({e})") from e
        return lemmatizer

    def lemmatize(self, sentences: Iterable[Sentence]) -> list[Sentence]:
        """The sentences with LEMMA predicted; nothing else changes."""
        sentences = list(sentences)
        return [s.with_columns({LEMMA: lemmas})
                for s, lemmas in zip(sentences, self.lemmas(sentences))]
