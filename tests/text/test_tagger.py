import io
from pathlib import Path

import numpy as np
import pytest
from treebanks import separable, separable_text

from arborparse.eval import evaluate
from arborparse.io import read_conllu
from arborparse.io.conllu import FEATS, LEMMA, UPOS, XPOS
from arborparse.text.features import (STEM, TEMPLATES, Stems, combined, feature_hash, mix,
                                      shape, stem_key, word_features)
from arborparse.pipeline import Pipeline
from arborparse.text.tagger import Tagger, stems_of

MODELS = Path(__file__).parent.parent / "data" / "models"


def with_features(copies=3):
    """The separable treebank with FEATS that follow from the word."""
    text = separable_text(copies)
    for word, tag, feats in (("dog", "NOUN", "Number=Sing"), ("dogs", "NOUN", "Number=Plur"),
                             ("runs", "VERB", "Tense=Pres"), ("saw", "VERB", "Tense=Past")):
        text = text.replace(f"\t{word}\t{word}\t{tag}\t{tag}\t_",
                            f"\t{word}\t{word}\t{tag}\t{tag}\t{feats}")
    sentences = read_conllu(io.StringIO(text))
    assert {f for s in sentences for f in s.feats} >= {"Number=Plur", "Tense=Past"}
    return sentences


def test_shapes():
    assert shape("McDonald's") == "XxXx'x" and shape("1984") == "d" and shape("e-mail") == "x-x"
    # letters without case, and the marks written with them, are letters too
    assert shape("வருகின்றனர்") == shape("中国") == shape("בבית") == "x"
    assert shape("1995ல்") == "dx"


def test_features_are_stable_and_one_row_per_word():
    sentences = [["The", "dog"], ["A", "dog", "barks", "."], ["Hi"], ["Yes", "!"]]
    X = word_features(sentences, {"the": "DET"})
    assert X.shape == (9, len(TEMPLATES))
    assert (X == word_features(sentences, {"the": "DET"})).all()
    # a sentence's features do not depend on the sentences around it
    for k, start in ((1, 2), (2, 6), (3, 7)):
        assert (word_features(sentences[k:k + 1], {"the": "DET"}) ==
                X[start:start + len(sentences[k])]).all()
    # the same word in the same context, the same row; another context, other features
    dog_first, dog_second = X[1], X[3]
    assert (dog_first[:2] == dog_second[:2]).all() and (dog_first != dog_second).any()
    assert word_features([], {}).shape == (0, len(TEMPLATES))


def test_mix_is_the_documented_hash():
    """The hash of a template number and values, per element: the template's CRC, then
    for each value an FNV-style multiply and two xor-shift rounds, in 32 bits."""
    def one(template, values):
        h = feature_hash(template, "")
        for v in values:
            h = (h ^ v) * 0x100000001B3 & 0xFFFFFFFF
            h ^= h >> 15
            h = h * 0x2C1B3C6D & 0xFFFFFFFF
            h ^= h >> 12
        return h

    rng = np.random.default_rng(0)
    values = [rng.integers(0, 1 << 32, size=9, dtype=np.uint64) for _ in range(4)]
    groups = [(values[0],), (values[1], values[0]), tuple(values), (values[2], values[2])]
    mixed = mix(17, groups)  # template 17 + j for groups[j]; an array in several groups
    assert mixed.dtype == np.uint32 and mixed.shape == (9, len(groups))
    for j, group in enumerate(groups):
        assert mixed[:, j].tolist() == [one(17 + j, [int(v[i]) for v in group])
                                        for i in range(9)]
    assert mix(3, [(values[0][:0],)]).shape == (0, 1) and mix(3, []).shape == (0, 0)


def test_a_separable_set_is_tagged_perfectly():
    data = with_features()
    tagger = Tagger(epochs=10, bits=16, progress=False).fit(data)
    bare = [s.with_columns({c: ["_"] * len(s) for c in (UPOS, XPOS, FEATS)}) for s in data]
    tagged = tagger.tag(bare)
    scores = evaluate(data, tagged)
    assert scores["UPOS"] == scores["XPOS"] == scores["UFeats"] == 100.0
    # only the tag columns change
    assert [s.forms for s in tagged] == [s.forms for s in data]
    assert all((t.heads == s.heads).all() for t, s in zip(tagged, data))


def test_dev_data_picks_an_epoch(capsys):
    data = separable()
    tagger = Tagger(epochs=3, bits=16).fit(data, data)
    assert [r["epoch"] for r in tagger.history_["upos_feats"]] == [1, 2, 3]
    assert all("accuracy" in r for r in tagger.history_["xpos"])
    assert "UPOS+FEATS, left to right: epoch 1/3" in capsys.readouterr().err
    # the kept taggers' dev scores, for the model's info
    assert set(tagger.scores_) == {"UPOS", "XPOS", "UFeats"}
    assert tagger.scores_ == tagger.accuracy(data)
    # the kept epoch of each tagger is its first best; jackknifing trains for the latest of
    # those it trains (the pairs left to right, and XPOS)
    kept = {c: max(tagger.history_[c], key=lambda r: (r["accuracy"], -r["epoch"]))["epoch"]
            for c in ("upos_feats", "upos_feats_backward", "xpos")}
    assert tagger.best_epoch_ == max(kept["upos_feats"], kept["xpos"])


def test_a_treebank_without_xpos_trains_no_xpos_tagger_nor_scores_one(capsys, tmp_path):
    """Every XPOS ``_``: nothing to learn (no epochs shown), no XPOS among the dev scores,
    and ``_`` given, also from the model file."""
    data = [s.with_columns({XPOS: ["_"] * len(s)}) for s in separable()]
    tagger = Tagger(epochs=3, bits=16).fit(data, data)
    assert tagger.history_["xpos"] == [] and "XPOS" not in capsys.readouterr().err
    assert set(tagger.scores_) == {"UPOS", "UFeats"}
    assert tagger.best_epoch_ == tagger.upos_feats.best_epoch_  # the jackknife's epochs
    path = tmp_path / "m.npz"
    Pipeline(tagger).save(path)
    for t in (tagger, Pipeline.load(path).tagger):
        assert {x for s in t.tag(data) for x in s.xpos} == {"_"}


def test_bad_arguments():
    from arborparse.errors import ArborparseError

    with pytest.raises(ArborparseError):
        Tagger(epochs=0)
    with pytest.raises(ArborparseError, match="no sentences"):
        Tagger(progress=False).fit([])


def test_feats_bundles_share_the_weights_of_their_features(tmp_path):
    import numpy as np

    from arborparse.text.classifier import DYNAMIC, _features, _slot
    from arborparse.text.tagger import features_of, pair, pair_parts

    assert features_of("Number=Sing|Tense=Pres") == ["Number=Sing", "Tense=Pres"]
    assert features_of("_") == []
    # UPOS and FEATS are decided together: the classes are pairs, their parts the UPOS and
    # the features
    assert pair_parts(pair("VERB", "Number=Sing|Tense=Pres")) == ["\tVERB", "Number=Sing",
                                                                  "Tense=Pres"]
    assert pair_parts(pair("DET", "_")) == ["\tDET"]
    # bundles of two features, each feature in two bundles
    text = separable_text(3)
    for word, tag, feats in (("dog", "NOUN", "Case=Nom|Number=Sing"),
                             ("dogs", "NOUN", "Case=Nom|Number=Plur"),
                             ("runs", "VERB", "Number=Sing|Tense=Pres"),
                             ("saw", "VERB", "Number=Sing|Tense=Past")):
        text = text.replace(f"\t{word}\t{word}\t{tag}\t{tag}\t_",
                            f"\t{word}\t{word}\t{tag}\t{tag}\t{feats}")
    data = read_conllu(io.StringIO(text))
    tagger = Tagger(epochs=4, bits=14, progress=False).fit(data)
    feats = tagger.upos_feats
    parts = {c: [int(p) for p in feats.pids[feats.pptr[k]:feats.pptr[k + 1]]]
             for k, c in enumerate(feats.classes)}
    nom, pres, past = (parts[pair(u, f)] for u, f in (
        ("NOUN", "Case=Nom|Number=Sing"), ("VERB", "Number=Sing|Tense=Pres"),
        ("VERB", "Number=Sing|Tense=Past")))
    assert nom[2] == pres[1] == past[1] and nom[0] != pres[0] == past[0]
    upos = {c.split("\t")[0] for c in feats.classes}
    assert len({p for ps in parts.values() for p in ps}) == 5 + len(upos)
    # every score is the bundle's own weights plus its features', as predict and margins see
    X, _, bounds = tagger._static(data)
    none, every = np.zeros(len(X) + 1, int), np.empty(0, int)
    given = np.full(len(X), -1)  # the pairs read no tag
    predicted = feats.predict(X, bounds, given, none, every)
    W, mask, classes = feats.weights, np.uint64(feats.weights.shape[0] - 1), len(feats.classes)
    row = np.empty(X.shape[1] + DYNAMIC, dtype=np.uint64)

    def score(c):
        return sum(float(W[_slot(f, k, mask)]) for f in row
                   for k in [c, *(classes + p for p in parts[feats.classes[c]])])

    def part_weights(p):
        return sum(abs(float(W[_slot(f, classes + p, mask)])) for f in row)

    def in_order(c):  # a class's own weights in the order of the features, then each part's
        total = 0.0
        for k in [c, *(classes + p for p in parts[feats.classes[c]])]:
            one = 0.0
            for f in row:
                one += float(W[_slot(f, k, mask)])
            total = one if k == c else total + one
        return total

    margins = feats.margins(X, bounds, given, none, every, 0, 1)
    found, sptr = feats.scores(X, bounds, given, none, every)
    for s in range(len(bounds) - 1):
        for i in range(bounds[s], bounds[s + 1]):
            _features(X, i, bounds[s], predicted, given, feats.pairs, row)
            scores = [score(c) for c in range(classes)]
            assert scores[predicted[i]] >= max(scores) - 1e-4
            assert margins[i] == pytest.approx(scores[0] - scores[1], abs=1e-4)
            # summed feature by feature over the candidates, each score is the same, to the
            # last bit, as summed class by class
            assert found[sptr[i]:sptr[i + 1]].tolist() == [in_order(c) for c in range(classes)]
    # training moved the shared features' weights
    assert all(part_weights(p) > 0 for p in pres)
    # a model file gives back the same parts and the same tags
    path = tmp_path / "tagger.npz"
    Pipeline(tagger).save(path)
    loaded = Pipeline.load(path).tagger
    assert (loaded.upos_feats.pptr == feats.pptr).all() \
        and (loaded.upos_feats.pids == feats.pids).all()
    assert loaded.predict(data) == tagger.predict(data)


def test_pairs_are_scored_left_to_right_and_right_to_left(tmp_path):
    import numpy as np

    from arborparse.io.plain import words_sentence
    from arborparse.text.tagger import best_of_sums, reordered, reversed_order

    order = reversed_order(np.array([0, 3, 5, 6]))
    assert order.tolist() == [2, 1, 0, 4, 3, 5] and (order[order] == np.arange(6)).all()
    cptr, cand = np.array([0, 2, 2, 5]), np.array([7, 8, 1, 2, 3])
    assert [a.tolist() for a in reordered(cptr, cand, np.array([2, 0, 1]))] == \
        [[0, 3, 5, 5], [1, 2, 3, 7, 8]]
    data = with_features()
    tagger = Tagger(epochs=2, bits=14, progress=False).fit(data)
    rng = np.random.default_rng(0)
    ahead, behind = tagger.upos_feats, tagger.upos_feats_backward
    assert ahead is not behind and ahead.classes == behind.classes
    X, X_backward, bounds = tagger._static(data)
    lowers = [w.lower() for s in data for w in s.forms]
    given, cptr, cand = tagger._inputs("upos_feats", lowers, None)
    order = reversed_order(bounds)
    # the right-to-left tagger reads each sentence reversed: its first word is the last
    n = len(TEMPLATES)
    assert (X_backward[:, :n] == word_features([s.forms[::-1] for s in data],
                                               tagger.ambiguity)).all()
    assert (X_backward[order][:, :3] == X[:, :3]).all()  # the words' own features
    assert (X_backward[order][:, n:] == X[:, n:]).all()  # and stems

    def pairs():
        return [tagger.upos_feats.classes.index(f"{u}\t{f}")
                for s in tagger.tag(data) for u, f in zip(s.upos, s.feats)]

    def alone(classifier, backward):
        if not backward:
            return classifier.predict(X, bounds, given, cptr, cand).tolist()
        return classifier.predict(X_backward, bounds, given,
                                  *reordered(cptr, cand, order))[order].tolist()

    for W in (ahead.weights, behind.weights):
        W[:] = rng.normal(size=W.shape)
    # each word's pair: the highest sum of its two scores, each direction with its own history
    a, sptr = ahead.scores(X, bounds, given, cptr, cand)
    b, bptr = behind.scores(X_backward, bounds, given, *reordered(cptr, cand, order))
    every = np.arange(len(ahead.classes))
    best = []
    for i in range(len(lowers)):
        mine = cand[cptr[i]:cptr[i + 1]] if cptr[i + 1] > cptr[i] else every
        total = a[sptr[i]:sptr[i + 1]] + b[bptr[order[i]]:bptr[order[i] + 1]]
        best.append(int(mine[np.argmax(total)]))
    assert pairs() == best == best_of_sums(a, sptr, b, bptr, order, cptr, cand).tolist()
    assert pairs() != alone(ahead, False) and pairs() != alone(behind, True)
    # with one direction's weights all zero, the other decides alone
    kept = behind.weights.copy()
    behind.weights[:] = 0
    assert pairs() == alone(ahead, False)
    behind.weights[:], ahead.weights[:] = kept, 0
    assert pairs() == alone(behind, True)
    # a model file keeps both
    path = tmp_path / "tagger.npz"
    Pipeline(tagger).save(path)
    loaded = Pipeline.load(path).tagger
    assert (loaded.upos_feats_backward.weights == behind.weights).all()
    assert loaded.predict(data) == tagger.predict(data)
    # left to right alone (the jackknife's taggers): one perceptron for the pairs
    alone_ = Tagger(epochs=2, bits=14, progress=False, backward=False).fit(data)
    assert not hasattr(alone_, "upos_feats_backward")
    assert set(alone_.history_) == {"upos_feats", "xpos"}
    tags = alone_.predict(data)
    assert [alone_.upos_feats.classes.index(f"{u}\t{f}") for us, fs in
            zip(tags["upos"], tags["feats"]) for u, f in zip(us, fs)] == \
        alone_.upos_feats.predict(X, bounds, given, cptr, cand).tolist()
    Pipeline(alone_).save(path, force=True)
    loaded = Pipeline.load(path).tagger
    assert not loaded.backward and loaded.predict(data) == tags
    # no sentence, and a sentence of one word
    assert tagger.tag([]) == []
    word = words_sentence([data[0].forms[0]], 1)
    assert [len(s) for s in tagger.tag([word, word])] == [1, 1]


def test_candidate_pairs_are_those_of_the_longest_suffix_with_enough_of_them(monkeypatch):
    import numpy as np

    from arborparse.text import tagger as module
    from arborparse.text.tagger import FEW, GUESSES, pair

    # "abcd" ends GUESSES words of GUESSES pairs; "bcd" one more (a VERB); "ef" two words
    # only, "f" three
    words = [(f"w{i}abcd", "NOUN", f"Case=C{i}") for i in range(GUESSES)]
    words += [("zzxbcd", "VERB", "Mood=Ind"), ("gef", "ADJ", "Degree=Pos"), ("hef", "X", "_"),
              ("kaf", "ADV", "_")]
    text = "".join(f"1\t{w}\t{w}\t{u}\t_\t{f}\t0\troot\t_\t_\n\n" for w, u, f in words)
    tagger = Tagger(epochs=2, bits=14, progress=False).fit(read_conllu(io.StringIO(text)))
    names = tagger.upos_feats.classes
    # so few pairs: every pair is a candidate of every word
    assert len(names) <= FEW and tagger._pairs("qqabcd") == tagger._pairs("gef") == []
    monkeypatch.setattr(module, "FEW", 0)  # as with many pairs

    def candidates(word):
        return {names[c] for c in tagger._pairs(word)}

    def ending(suffix):
        return {pair(u, f) for w, u, f in words if w.endswith(suffix)}

    assert len(ending("abcd")) == GUESSES and ending("abcd") < ending("bcd")
    assert candidates("qqabcd") == ending("abcd")  # the longest suffix with enough
    assert candidates("qqqbcd") == ending("bcd")  # a shorter one, any UPOS
    assert len({p.split()[0] for p in candidates("qqqbcd")}) == 2
    assert candidates("uuef") == ending("f") != ending("ef")  # none has enough: the last
    # letter's
    assert tagger._pairs("\u00e6\u00e6") == []  # a last letter never seen: every pair
    # a training word's own pairs are among its candidates
    assert all(pair(u, f) in candidates(w) for w, u, f in words)
    # a word's UPOS and FEATS come from one pair: never a bundle its UPOS was not seen with
    data = with_features()
    tagger = Tagger(epochs=2, bits=14, progress=False).fit(data)
    bare = [s.with_columns({c: ["_"] * len(s) for c in (UPOS, XPOS, FEATS)}) for s in data]
    tagger.upos_feats.weights[:] = np.random.default_rng(0).normal(
        size=tagger.upos_feats.weights.shape)
    tagged = tagger.tag(bare)
    seen = {pair(u, f) for s in data for u, f in zip(s.upos, s.feats)}
    assert {pair(u, f) for s in tagged for u, f in zip(s.upos, s.feats)} <= seen
    assert len({u for s in tagged for u in s.upos}) > 1


def stem_hashes(rest, upos, shared="?", prefixes=None):
    """The `STEM` columns of a word whose stem leaves `rest`, its words' UPOS `upos`, the
    features they all have `shared` and the rest's first two and three characters
    `prefixes` (by default ``?`` for no stem, else ``-``: a rest of up to two characters)."""
    first = len(TEMPLATES)
    prefixes = prefixes or ("?" if rest == "?" else "-",) * 2
    return tuple(feature_hash(first + j, v) for j, v in enumerate(
        (rest, upos, f"{upos} {rest}", shared, *prefixes)))


def test_a_word_reads_its_stem_as_a_new_word_of_its_lemma_would():
    """A word's stem is its longest prefix (of two characters or more) that is the stem of
    a training word other than itself: the rest, the UPOS of that stem's other words, the
    two together, and the features those words all have; a word with none reads ``?``."""
    stems = Stems({"ev": {"ev": "NOUN\tCase=Nom|Number=Sing",
                          "evler": "NOUN\tCase=Nom|Number=Plur"},
                   "evle": {"evlendi": "VERB\tTense=Past"}, "gel": {"geldi": "VERB\tTense=Past"},
                   "koş": {"koştu": "VERB\tTense=Past", "koşu": "NOUN|VERB\t"},
                   "e": {"ebe": "NOUN\t"}, "iz": {"iz": "NOUN\t"}})

    assert stems.row("evde") == stem_hashes("de", "NOUN", "Case=Nom")  # shared by "ev" and "evler"
    # the longest stem; the rest's first two characters, and no first three of three
    assert stems.row("evlerde") == stem_hashes("rde", "VERB", "Tense=Past", ("rd", "-"))
    assert stems.row("ev") == stem_hashes("", "NOUN", "Case=Nom|Number=Plur")  # its own lemma
    assert stems.row("evlendi") == stem_hashes("lendi", "NOUN", "Case=Nom",  # "evle" has no
                                               ("le", "len"))  # other word
    assert stems.row("gelmedi") == stem_hashes("medi", "VERB", "Tense=Past", ("me", "med"))
    assert stems.row("geldi") == stem_hashes("?", "?")  # a training word alone with its stem
    assert stems.row("koşar") == stem_hashes("ar", "NOUN|VERB")  # the UPOS of all its words, no
    # feature in all of them
    assert stems.row("ebeler") == stem_hashes("?", "?")  # a one-letter stem is none
    assert stems.row("evde") == stem_hashes("de", "NOUN", "Case=Nom")  # the same again (kept)
    # a word far longer than any stem is read from the longest stem down
    assert stems.longest == 4 and stems.row("ev" + "x" * 100_000) == stem_hashes(
        "x" * 100_000, "NOUN", "Case=Nom", ("xx", "xxx"))
    # a column per template, word by word, from the forms as `stem_key` writes them: Turkish
    # İ lowercased is a plain i, as lemmas write it
    assert stem_key("İzini") == "izini" and stem_key("EVDE") == "evde"
    X = stems.columns([["Evde", "geldi"], ["İzini"]])
    assert X.shape == (3, len(STEM)) and X.dtype == np.uint32
    assert X.tolist() == [list(stem_hashes("de", "NOUN", "Case=Nom")), list(stem_hashes("?", "?")),
                          list(stem_hashes("ini", "NOUN", "?", ("in", "-")))]
    # the stems of a tagger file of version 8 give the first four columns alone
    old = Stems(stems.entries, width=4)
    assert old.columns([["Evde", "geldi"], ["İzini"]]).tolist() == X[:, :4].tolist()
    assert stems.columns([]).shape == (0, len(STEM))
    assert combined([("NOUN", "Case=Nom|Number=Sing"), ("PROPN", "Case=Acc|Number=Sing"),
                     ("NOUN|X", "_")]) == ("NOUN|PROPN|X", "")
    assert combined([("NOUN", "Case=Nom|Number=Sing"), ("VERB", "Number=Sing")]) == \
        ("NOUN|VERB", "Number=Sing")


def test_stems_are_read_off_the_lemmas_and_kept_in_the_model_file(tmp_path):
    """The tagger's stems are the training lemmas with their forms' UPOS and the features
    of all their bundles; a file keeps them (a malformed one is refused), and one written
    before them (version 7) tags without."""
    import arborparse
    from arborparse.io import model_files
    from arborparse.io.model_files import ModelFileError
    from arborparse.pipeline import info

    data = with_features()
    tagger = Tagger(epochs=2, bits=14, progress=False).fit(data)
    expected = {}
    for s in data:
        for form, lemma, u, f in zip(s.forms, s.lemmas, s.upos, s.feats):
            expected.setdefault(lemma.lower(), {})[form.lower()] = f"{u}\t{f}".replace("_", "")
    assert all(s.forms == s.lemmas for s in data)  # no form shares a shorter beginning
    assert tagger.stems.entries == expected
    assert tagger.stems.entries["dogs"] == {"dogs": "NOUN\tNumber=Plur"}
    assert tagger._static(data)[0].shape[1] == len(TEMPLATES) + len(STEM)
    header, arrays = Pipeline(tagger).parts()
    model_files.save(tmp_path / "p.npz", "pipeline", 1, header, arrays)
    loaded = arborparse.load(tmp_path / "p.npz").tagger
    assert loaded.stems.entries == tagger.stems.entries
    assert loaded.predict(data) == tagger.predict(data)
    for stems in ({"dog": ["dog"]}, {"dog": {"dog": "NOUN"}}, [], {"dog": {"dog": 3}}):
        header["components"]["tagger"]["header"]["stems"] = stems
        model_files.save(tmp_path / "p.npz", "pipeline", 1, header, arrays, force=True)
        with pytest.raises(ModelFileError, match="tagger in the model file is invalid"):
            arborparse.load(tmp_path / "p.npz")
    # a treebank without lemmas gives no stems
    bare_lemmas = [s.with_columns({LEMMA: ["_"] * len(s)}) for s in data]
    assert Tagger(epochs=1, bits=12, progress=False).fit(bare_lemmas).stems is None
    # a file written before stems (version 7, by commit 7e08f9e) tags as it did, and saved
    # again, still without stems, it tags the same
    bare = [s.with_columns({c: ["_"] * len(s) for c in (UPOS, XPOS, FEATS)})
            for s in separable(1)]
    old = arborparse.load(MODELS / "tagger-v7.npz").tagger
    tagged = "".join(s.to_text() for s in old.tag(bare))
    assert old.stems is None and tagged == (MODELS / "tagger-v7.tagged.conllu").read_text()
    Pipeline(old).save(tmp_path / "again.npz")
    again = arborparse.load(tmp_path / "again.npz").tagger
    assert "".join(s.to_text() for s in again.tag(bare)) == tagged
    # one written before the rest's first characters (version 8, by commit be9a96b, trained
    # on made-up words of twelve nouns and ten verbs with chains of suffixes) reads its
    # stems' four columns alone and tags its held-out sentences as it did, saved again too
    tagged = (MODELS / "tagger-v8.tagged.conllu").read_text()
    bare = [s.with_columns({c: ["_"] * len(s) for c in (UPOS, XPOS, FEATS)})
            for s in read_conllu(io.StringIO(tagged))]
    loaded = arborparse.load(MODELS / "tagger-v8.npz")
    # its info says the format the file holds, as `arborparse info` does
    assert loaded.info["versions"] == info(MODELS / "tagger-v8.npz")["versions"] == {"tagger": 8}
    old = loaded.tagger
    assert old.stems.width == 4 and old._static(bare)[0].shape[1] == len(TEMPLATES) + 4
    assert "".join(s.to_text() for s in old.tag(bare)) == tagged
    Pipeline(old).save(tmp_path / "again.npz", force=True)
    again = arborparse.load(tmp_path / "again.npz").tagger
    assert again.stems.width == 4 and "".join(s.to_text() for s in again.tag(bare)) == tagged
    again.stems = Stems(again.stems.entries)  # read with all six columns it would tag
    assert "".join(s.to_text() for s in again.tag(bare)) != tagged  # otherwise
    header, arrays = Pipeline(tagger).parts()
    for width in (5, "6", True):
        header["components"]["tagger"]["header"]["stem_columns"] = width
        model_files.save(tmp_path / "p.npz", "pipeline", 1, header, arrays, force=True)
        with pytest.raises(ModelFileError, match=f"its stems give {width!r} columns, not 4 "
                           r"\(a version 8 file\) or 6"):
            arborparse.load(tmp_path / "p.npz")
    header["components"]["tagger"]["header"].update(stems=None, stem_columns=6)
    model_files.save(tmp_path / "p.npz", "pipeline", 1, header, arrays, force=True)
    with pytest.raises(ModelFileError, match="it gives 6 stem columns but has no stems"):
        arborparse.load(tmp_path / "p.npz")


def test_a_form_gives_its_lemma_and_the_beginning_they_share_as_stems():
    assert stems_of("evlerde", "ev") == ["ev"]  # the lemma, a prefix of the form
    assert stems_of("macht", "machen") == ["machen", "mach"]
    assert stems_of("gemacht", "machen") == ["machen"]  # nothing shared at the beginning
    assert stems_of("went", "go") == ["go"] and stems_of("ate", "eat") == ["eat"]
    assert stems_of("mangez", "manger") == ["manger", "mange"]
    assert stems_of("abx", "aby") == ["aby"]  # a beginning under three characters is none
    text = "".join(f"1\t{f}\tmachen\tVERB\t_\t{feats}\t0\troot\t_\t_\n\n" for f, feats in (
        ("macht", "Person=3"), ("machte", "Tense=Past"), ("machen", "_")))
    tagger = Tagger(epochs=1, bits=12, progress=False).fit(read_conllu(io.StringIO(text)))
    assert tagger.stems.entries == {
        "machen": {"macht": "VERB\tPerson=3", "machte": "VERB\tTense=Past", "machen": "VERB\t"},
        "mach": {"macht": "VERB\tPerson=3", "machte": "VERB\tTense=Past"}}
    # a new form of the verb: the stem "mach", the rest "st", no feature in all its words
    assert tagger.stems.row("machst") == stem_hashes("st", "VERB")
