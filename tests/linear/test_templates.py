"""The feature templates on a 3-word sentence, checked by hand."""

import dataclasses
import io

import numpy as np
import pytest
from scipy.special import logsumexp

from arborparse.io import read_conllu
from arborparse.linear.templates import (arc_capacity, arc_features, direction_distance,
                                         label_features, label_index)
from arborparse.linear.tokens import encode

NONE = np.empty(0, dtype=np.uint64)

TEXT = ("1\tThe\tthe\tDET\tDT\tDefinite=Def\t2\tdet\t_\t_\n"
        "2\tdoggies\tdoggy\tNOUN\tNNS\tNumber=Plur|Gender=Neut\t3\tnsubj\t_\t_\n"
        "3\tbark\tbark\tVERB\tVBP\tMood=Ind|Tense=Pres|VerbForm=Fin\t0\troot\t_\t_\n\n")


def sentence(text=TEXT):
    return read_conllu(io.StringIO(text))[0]


def features(table, h, m):
    widest = int(np.diff(table.feats_ptr).max(initial=0))
    buf = np.empty(arc_capacity(len(table), widest), dtype=np.uint64)
    count = arc_features(table.attrs, table.feats_ptr, table.feats, h, m, buf)
    return buf[:count].copy()


@pytest.mark.parametrize("suffixes", [True, False])
def test_feature_counts_by_hand(suffixes):
    t = encode(sentence(), suffixes)
    # 2 views x 13 word/POS combinations, each plain and with direction+distance = 52;
    # in-between POS: 2 POS types x 1 word between x 2 = 4; surrounding POS: 2 x 8 x 2 = 32;
    # FEATS pairs: 3 (bark) x 1 (The) = 3; no form longer than 5 characters: no prefixes;
    # suffixes (a table with the SUFFIX column): each word's with its UPOS (2) and 3 pairs,
    # x 2 = 10
    s = 10 if suffixes else 0
    assert len(features(t, 3, 1)) == 52 + 4 + 32 + 3 + s
    # "doggies" is longer than 5: 7 prefix bigrams x 2 = 14; adjacent: no word between;
    # FEATS pairs 2 x 3 = 6
    assert len(features(t, 2, 3)) == 52 + 14 + 32 + 6 + s
    # the root has no FEATS; word 1 lies between the root and word 2
    assert len(features(t, 0, 2)) == 52 + 14 + 4 + 32 + s


def test_the_suffix_features_come_on_top_of_the_others():
    with_, without = encode(sentence()), encode(sentence(), suffixes=False)
    assert with_.attrs.shape[1] == without.attrs.shape[1] + 1
    assert (with_.attrs[:, :-1] == without.attrs).all()
    for h, m in ((3, 1), (2, 3), (0, 2)):
        assert set(features(without, h, m)) < set(features(with_, h, m))
    # the suffix is the form's last 3 characters in lower case: "DOGgies" reads as "doggies"
    other = encode(sentence(TEXT.replace("\tdoggies\t", "\tDOGgies\t")))
    assert other.attrs[2, -1] == with_.attrs[2, -1] and other.attrs[2, 0] != with_.attrs[2, 0]
    other = encode(sentence(TEXT.replace("\tdoggies\t", "\tpuppies\t")))
    assert other.attrs[2, -1] == with_.attrs[2, -1]  # "ies" either way


def test_direction_and_distance_buckets():
    assert [direction_distance(0, m) for m in (1, 2, 3, 4, 5, 6, 10, 11, 40)] == \
        [1, 2, 3, 4, 5, 6, 6, 7, 7]
    assert direction_distance(5, 4) == 9 and direction_distance(40, 1) == 15


def test_shared_and_distinct_features():
    t = encode(sentence())
    left, right = set(features(t, 2, 1)), set(features(t, 2, 3))
    # plain head unigrams (word+POS, word, POS in two views) are shared; their direction
    # conjunctions are not
    shared = left & right
    assert len(shared) >= 6
    assert set(features(t, 2, 1)) != set(features(t, 1, 2))
    assert len(set(features(t, 3, 1))) == len(features(t, 3, 1))  # no accidental duplicates


def test_changing_a_form_changes_only_its_features():
    base = encode(sentence())
    other = encode(sentence(TEXT.replace("\tbark\tbark\t", "\tbarks\tbark\t")))
    a, b = set(features(base, 1, 2)), set(features(other, 1, 2))
    assert a == b  # the arc 1 -> 2 never reads word 3's form
    a, b = set(features(base, 3, 2)), set(features(other, 3, 2))
    # templates reading the head form change: 7 of the (FORM, XPOS) view's 13, since
    # "doggies" is long, 6 of the 7 prefix bigrams ("bark" vs "barks"), and the 3 reading
    # the head's suffix ("ark" vs "rks"); each x 2
    assert len(a - b) == 2 * (7 + 6 + 3)


def test_numbers_are_normalized():
    one = encode(sentence(TEXT.replace("\tThe\t", "\t1984\t")))
    two = encode(sentence(TEXT.replace("\tThe\t", "\t3.14\t")))
    assert one.attrs[1, 0] == two.attrs[1, 0]


def test_a_model_file_says_whether_it_reads_suffixes(tmp_path):
    """New models read the suffix features and their files say so; a file without the
    key (saved before them) is parsed from tables without the SUFFIX column, so its
    scores are those it was trained with."""
    from treebanks import separable

    from arborparse.linear.model import LinearModel
    from arborparse.linear.options import LinearOptions
    from arborparse.linear.parser import LinearParser
    from arborparse.linear.train import trainer

    data = separable(1)
    parser = trainer(LinearOptions.of({"hash_bits": 16, "epochs": 2}), dev=False,
                     progress=False).fit(data, data).parser_
    assert parser.model.suffixes and parser.parts()[0]["suffixes"] is True
    parser.save(tmp_path / "m.npz")
    assert LinearParser.load(tmp_path / "m.npz").model.suffixes
    header, arrays = parser.parts()
    del header["suffixes"]
    old = LinearParser.from_parts(header, arrays, "old.npz")
    assert not old.model.suffixes
    x, y = old.model.encoded(data[0]), parser.model.encoded(data[0])
    assert x.table.attrs.shape[1] + 1 == y.table.attrs.shape[1]
    new = LinearModel.hashing(16, ["a"])
    new.weights[:] = np.random.default_rng(0).standard_normal(len(new.weights))
    before = dataclasses.replace(new, suffixes=False)
    for model, encoded in ((before, x), (new, y)):  # each scored from its own features
        by_list = sum(model.weights[f & np.uint64(len(model.weights) - 1)]
                      for f in features(encoded.table, 2, 1))
        assert model.cluster_scores(encoded)[0, 2, 1] == pytest.approx(by_list)
    assert before.cluster_scores(x)[0, 2, 1] != pytest.approx(new.cluster_scores(y)[0, 2, 1])
    for model, encoded, other in ((before, y, "with"), (new, x, "without")):
        with pytest.raises(ValueError, match=f"encoded for a model {other} the suffix"):
            model.cluster_scores(encoded)  # a table made for the other feature set
    assert len(old.parse(data)) == len(data)


@pytest.mark.parametrize("h,m", [(2, 1), (0, 3), (3, 2)])
def test_label_features(h, m):
    t = encode(sentence())
    buf = np.empty(64, dtype=np.uint64)
    count = label_features(t.attrs, t.feats_ptr, t.feats, h, m, buf)
    feats = lambda i: t.feats_ptr[i + 1] - t.feats_ptr[i]  # noqa: E731
    # per token: role+direction, 4 attributes, 3 POS contexts, its FEATS; then the POS pair
    # and the distance
    assert count == (8 + feats(h)) + (8 + feats(m)) + 2
    hashes = buf[:count].copy()
    # every label of a feature owns its own weight, consecutive ones
    size = 1 << 16
    for hsh in hashes[:3]:
        idx = [label_index(hsh, label, 5, NONE, NONE, size) for label in range(5)]
        assert idx == [(idx[0] + label) % size for label in range(5)]
    keys = np.sort(np.array([7, 9], dtype=np.uint64))
    label_keys = np.sort(hashes[:4])
    assert label_index(label_keys[2], 3, 5, keys, label_keys, 0) == 2 + 2 * 5 + 3
    assert label_index(np.uint64(1), 3, 5, keys, label_keys, 0) == -1


@pytest.mark.parametrize("clusters", [1, 3])
def test_scores_equal_the_sum_over_the_feature_list(ud, clusters):
    """score_arcs counts the in-between POS features by tag on long arcs and walks them on
    short ones, and reads the weights of a head's arcs in batches: all give Σ w over
    `arc_features`'s list, arc by arc."""
    from arborparse.linear.templates import _GATHER, cluster_index, index, score_arcs

    path = ud / "UD_English-EWT" / "en_ewt-ud-dev.conllu"
    long_one = max(read_conllu(path)[:400], key=len)  # dozens of words: both branches
    # at least 60 features an arc (bigrams and surrounding POS): a head's arcs fill the
    # gather batch more than once
    assert (len(long_one) - 1) * 60 > _GATHER
    rng = np.random.default_rng(0)
    size = 1 << 12
    w = rng.standard_normal(size)
    for s in (sentence(), long_one):
        t = encode(s)
        buf = np.empty(arc_capacity(len(t), 16), dtype=np.uint64)
        S = score_arcs(t.attrs, t.feats_ptr, t.feats, w, NONE, clusters, buf)
        for h in range(len(t) + 1):
            for m in range(1, len(t) + 1):
                if h == m:
                    continue
                feats = features(t, h, m)
                for z in range(clusters):
                    idx = [index(f, NONE, size) if clusters == 1 else
                           cluster_index(f, 0, clusters, NONE, size) + z for f in feats]
                    assert S[z, h, m] == pytest.approx(w[idx].sum(), abs=1e-9)


def test_label_scores_equal_the_sum_over_the_feature_list(ud):
    """label_scores and score_labels read tables of the label features (listed, then their
    weights read) and give Σ w over `label_features`'s list, arc by arc and label by
    label; score_labels the best label and its score."""
    from arborparse.linear.templates import (PRODUCTS, _label_sum, label_exps, label_scores,
                                             label_tables, score_labels)

    path = ud / "UD_English-EWT" / "en_ewt-ud-dev.conllu"
    longer = max(read_conllu(path)[:50], key=len)
    rng = np.random.default_rng(0)
    size, labels = 1 << 12, 7
    w = rng.standard_normal(size)
    for s in (sentence(), longer):
        t = encode(s)
        buf = np.empty(arc_capacity(len(t), 16), dtype=np.uint64)
        S = label_scores(t.attrs, t.feats_ptr, t.feats, w, NONE, NONE, labels)
        best, score, _ = score_labels(t.attrs, t.feats_ptr, t.feats, w, NONE, NONE, labels)
        for h in range(len(t) + 1):
            for m in range(1, len(t) + 1):
                if h == m:
                    continue
                count = label_features(t.attrs, t.feats_ptr, t.feats, h, m, buf)
                expected = [w[[label_index(f, label, labels, NONE, NONE, size)
                               for f in buf[:count]]].sum() for label in range(labels)]
                assert S[h, m] == pytest.approx(expected, abs=1e-9)
                assert score[h, m] == pytest.approx(max(expected), abs=1e-9)
                assert best[h, m] == int(np.argmax(S[h, m]))
        # scaled, with the log-sum-exp over labels (the tree distribution's arc scores; the
        # longer sentence's from products of the tables' exponentials, which at scale 400
        # underflow for most arcs and are summed one exponential at a time instead)
        if len(s) >= PRODUCTS:
            tables, _ = label_tables(t.attrs, t.feats_ptr, t.feats, w, NONE, NONE, labels)
            for scale, most in ((0.5, False), (400.0, True)):
                exps = label_exps(tables, scale)
                under = [_label_sum.py_func(exps, tables[2], h, m) == -np.inf
                         for h in range(len(t) + 1) for m in range(1, len(t) + 1) if h != m]
                assert np.mean(under) > 0.5 if most else not any(under)
        for scale in (0.5, 400.0):
            _, score, total = score_labels(t.attrs, t.feats_ptr, t.feats, w, NONE, NONE,
                                           labels, scale, True)
            with np.errstate(invalid="ignore"):
                np.testing.assert_allclose(total, logsumexp(scale * S, axis=2), rtol=1e-12)
            np.testing.assert_allclose(score, scale * S.max(axis=2), rtol=1e-12)


@pytest.mark.parametrize("clusters", [1, 3])
def test_scores_in_threads_are_the_same(ud, clusters):
    """A sentence of THREADED_WORDS words or more scored in threads (each a block of head
    rows, with its own caches and scratch) gets the same arc and label scores, to the last
    bit, as in one; a shorter one is scored in one."""
    from arborparse.linear.model import THREADED_WORDS, Encoded, LinearModel

    path = ud / "UD_English-EWT" / "en_ewt-ud-dev.conllu"
    words = [row for s in read_conllu(path)[:20] for row in s.rows if row[0].isdigit()]
    text = "".join("\t".join([str(i), *row[1:6], str(i - 1), "dep", "_", "_"]) + "\n"
                   for i, row in enumerate(words[:THREADED_WORDS + 9], 1))
    long_one = read_conllu(io.StringIO(text + "\n"))[0]
    assert len(long_one) >= THREADED_WORDS
    rng = np.random.default_rng(1)
    model = LinearModel(rng.standard_normal(1 << 12), [f"l{i}" for i in range(5)],
                        clusters=clusters)
    for s in (sentence(), long_one):
        x = Encoded.of(s)
        one = model.scores(x, scale=0.7, with_sum=True)
        for threads in (2, 3):
            several = model.scores(x, scale=0.7, with_sum=True, threads=threads)
            for name in ("arc", "label", "label_score", "label_sum"):
                np.testing.assert_array_equal(getattr(several, name), getattr(one, name))
        np.testing.assert_array_equal(model.cluster_scores(x, threads=4),
                                      model.cluster_scores(x))


def test_parsing_in_threads_gives_the_same_trees_and_survives_a_fork(ud):
    """A long sentence parsed with threads: the same MAP tree, MBR tree, probabilities and
    k best trees as with one; a process forked after the pool was made parses in threads
    too (its pool is made again)."""
    import multiprocessing

    from arborparse.linear.model import THREADED_WORDS, LinearModel
    from arborparse.linear.parser import LinearParser

    path = ud / "UD_English-EWT" / "en_ewt-ud-dev.conllu"
    words = [row for s in read_conllu(path)[:20] for row in s.rows if row[0].isdigit()]
    text = "".join("\t".join([str(i), *row[1:6], str(i - 1), "dep", "_", "_"]) + "\n"
                   for i, row in enumerate(words[:THREADED_WORDS + 5], 1))
    long_one = read_conllu(io.StringIO(text + "\n"))[0]
    model = LinearModel(np.random.default_rng(2).standard_normal(1 << 12) * 0.1,
                        [f"l{i}" for i in range(4)])
    parser = LinearParser(model)
    for options in ({}, {"decode_as": "mbr", "marginals": True}, {"kbest": 3}):
        one, two = (parser.parse_one(long_one, **options, threads=t) for t in (1, 2))
        assert one.rows == two.rows
        for key in ("heads", "kbest"):
            a, b = ((s.analysis or {}).get(key) for s in (one, two))
            assert (a is None) == (b is None)
            if key == "heads" and a is not None:
                np.testing.assert_array_equal(a, b)
            elif a is not None:
                assert [(p, list(h)) for p, h, _ in a] == [(p, list(h)) for p, h, _ in b]
    child = multiprocessing.get_context("fork").Process(
        target=lambda: parser.parse_one(long_one, threads=2))
    child.start()
    child.join(120)
    assert child.exitcode == 0


@pytest.mark.parametrize("clusters", [1, 3])
def test_known_arcs_are_skipped_and_the_others_scored_the_same(ud, clusters):
    """`scores(known=...)` leaves the arcs it is told are known at -inf (label 0) and gives
    every other arc the scores it has without them, to the last bit."""
    from arborparse.linear.model import Encoded, LinearModel

    s = max(read_conllu(ud / "UD_English-EWT" / "en_ewt-ud-dev.conllu")[:50], key=len)
    rng = np.random.default_rng(3)
    model = LinearModel(rng.standard_normal(1 << 12), [f"l{i}" for i in range(5)],
                        clusters=clusters)
    x = Encoded.of(s)
    known = rng.random((len(s) + 1, len(s) + 1)) < 0.4
    every, some = (model.scores(x, scale=0.7, with_sum=True, known=k) for k in (None, known))
    for name, skipped in (("arc", -np.inf), ("label", 0), ("label_score", -np.inf),
                          ("label_sum", -np.inf)):
        found, expected = getattr(some, name), getattr(every, name)
        np.testing.assert_array_equal(found[~known], expected[~known])
        assert (found[known] == skipped).all()


def test_a_cut_of_the_token_table_is_the_table_of_the_cut_sentence():
    from arborparse.io.conllu import FEATS, LEMMA, UPOS, XPOS
    from arborparse.io.plain import words_sentence

    s = sentence()
    s = s.with_columns({FEATS: ["A=1|B=x", "_", "C=3"]})  # a word without FEATS in between
    whole = encode(s)
    for a, b in ((0, 3), (1, 3), (1, 2), (0, 1), (2, 3)):
        part = words_sentence(s.forms[a:b], 1).with_columns(
            {c: values[a:b] for c, values in ((LEMMA, s.lemmas), (UPOS, s.upos),
                                              (XPOS, s.xpos), (FEATS, s.feats))})
        cut, expected = whole.cut(a, b), encode(part)
        for name in ("attrs", "feats_ptr", "feats"):
            np.testing.assert_array_equal(getattr(cut, name), getattr(expected, name))


def test_the_label_tables_of_a_window_are_those_of_the_window_cut_out(ud):
    """`LinearModel.window_label_tables` (rows of the whole sentence's tables, the root's
    and the edge words' looked up) gives each window the label tables and exponentials
    `LinearModel.label_tables` gives the window cut out: the same label scores and
    log-sum-exps, arc by arc."""
    from arborparse.linear.model import Encoded, LinearModel
    from arborparse.linear.templates import PRODUCTS, label_rows

    s = max(read_conllu(ud / "UD_English-EWT" / "en_ewt-ud-dev.conllu")[:50], key=len)
    model = LinearModel(np.random.default_rng(5).standard_normal(1 << 12),
                        [f"l{i}" for i in range(6)])
    whole = encode(s)
    scale = 0.7
    paragraph = model.label_tables(Encoded.of_table(whole), scale)
    n = len(s)
    for a, b in ((0, 30), (10, 40), (n - 30, n), (5, 6), (3, 12), (0, n)):
        x = Encoded.of_table(whole.cut(a, b))
        found = []
        for tables, exps in (model.window_label_tables(paragraph, x, a, scale),
                             model.label_tables(x, scale)):
            assert (exps[0].shape[0] > 0) == (b - a >= PRODUCTS)
            N = b - a + 1
            out = (np.zeros((N, N), dtype=np.int64), np.full((N, N), -np.inf),
                   np.full((N, N), -np.inf))
            label_rows(tables, scale, 0, N, *out, np.zeros((0, 0), dtype=bool), exps)
            found.append(out)
        (best, score, total), (best2, score2, total2) = found
        np.testing.assert_array_equal(best, best2)
        np.testing.assert_array_equal(score, score2)
        np.testing.assert_allclose(total, total2, rtol=1e-13)


@pytest.mark.parametrize("shared_mb", [32, 0])
def test_windows_sharing_the_in_between_tables_score_as_cut_out(ud, monkeypatch, shared_mb):
    """Windows of a sentence scored with its in-between tables (`between_tables`, cut
    with `cut_between`: each window's words counted by tag, the tables by tag filled by
    the windows before) get the arc scores of each window cut out and scored alone, to
    rounding (the words between summed in another order); a sentence whose tables would
    be larger than `SHARED_MB` shares none."""
    from arborparse.linear import templates
    from arborparse.linear.model import Encoded, LinearModel

    monkeypatch.setattr(templates, "SHARED_MB", shared_mb)
    s = max(read_conllu(ud / "UD_English-EWT" / "en_ewt-ud-dev.conllu")[:50], key=len)
    whole = encode(s)
    between = templates.between_tables(whole.attrs, 3)
    assert (between is None) == (shared_mb == 0)
    model = LinearModel(np.random.default_rng(6).standard_normal(1 << 12), ["a", "b"],
                        clusters=3)
    for a, b in ((0, 30), (10, 40), (len(s) - 30, len(s)), (5, 6), (3, 12)):
        x = Encoded.of_table(whole.cut(a, b))
        np.testing.assert_allclose(
            model.cluster_scores(x, between=templates.cut_between(between, a, b - a + 1)),
            model.cluster_scores(x), rtol=1e-12, atol=1e-12)
