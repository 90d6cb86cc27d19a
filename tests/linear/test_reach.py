"""The parser's reach: arcs longer than any of the training trees' in their direction are
left out of parsing, and every tree and distribution is then over the trees within reach
(checked against enumeration); where nothing is out of reach nothing changes."""

import io
import re

from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from oracles import all_trees
from scipy.special import logsumexp
from treebanks import separable

from arborparse.errors import ArborparseError
from arborparse.io import read_conllu
from arborparse.io.conllu import UPOS, XPOS, Sentence
from arborparse.io.model_files import ModelFileError
from arborparse.io.plain import words_sentence
from arborparse.linear.reach import TagReach, reach
from arborparse.linear.eg import EGTrainer
from arborparse.linear.loglinear import LogLinearTrainer
from arborparse.linear.model import Encoded
from arborparse.linear.online import OnlineTrainer
from arborparse.linear.parser import LinearParser


def conllu(*trees):
    """Sentences of words "w" (tag X) on the given trees (heads of words 1..n)."""
    text = "".join("".join(f"{m}\tw\tw\tX\tX\t_\t{h}\tdep\t_\t_\n" for m, h in
                           enumerate(heads, 1)) + "\n" for heads in trees)
    return read_conllu(io.StringIO(text))


def test_reach_is_the_longest_arc_each_way_the_root_not_counted():
    # words 1 and 2: their heads 3 words after them; word 6: its head 2 words before
    assert reach(conllu([4, 5, 4, 5, 0, 4])) == (2, 3)
    assert reach(conllu([0, 1, 1, 1], [3, 3, 0])) == (3, 2)
    assert reach(conllu([0])) == (1, 1)  # at least 1 each way


def within(trees, before, after):
    """The trees (T, n+1) whose every arc is within the reach (before, after)."""
    m = np.arange(1, trees.shape[1])
    heads = trees[:, 1:]
    offset = m - heads
    ok = (heads == 0) | ((offset <= before) & (-offset <= after))
    return trees[ok.all(axis=1)]


@pytest.fixture(scope="module")
def fitted():
    data = separable(1)
    trained = OnlineTrainer("perceptron", epochs=1, hash_bits=14, progress=False).fit(data)
    return data, LinearParser(trained.parser_.model)  # no reach: every arc scored


@pytest.mark.parametrize("single_root", [True, False], ids=["one root", "roots"])
@pytest.mark.parametrize("decoder", ["mst", "eisner"])
@pytest.mark.parametrize("cut", [(1, 1), (1, 3), (3, 1), (2, 2)])
def test_trees_and_distribution_are_those_within_reach(fitted, decoder, cut, single_root):
    """Best tree, MBR tree, k best trees with their probabilities, head and labeled
    marginals: enumeration's over the trees within reach (the model's own scores)."""
    data, trained = fitted
    parser = LinearParser(trained.model, decoder, single_root, temperature=3.0, reach=cut)
    sentence = max(data, key=len)
    n = len(sentence)
    every = all_trees(n, decoder == "eisner", single_root)
    kept = within(every, *cut)
    assert 0 < len(kept) < len(every)
    assert_over(parser, trained, sentence, kept)


def assert_over(parser, trained, sentence, kept):
    """The best tree, MBR tree, k best trees with their probabilities (of their labels:
    each arc's best, root with head 0 and only there where single-rooted), head and labeled marginals of
    `parser` (at temperature 3): enumeration's over the trees `kept`, with the scores of
    `trained` (the same model, nothing left out)."""
    n, m = len(sentence), np.arange(1, len(sentence) + 1)
    S = trained.model.labeled_scores(Encoded.of(sentence)) / 3.0
    best, folded = S.max(axis=2), logsumexp(S, axis=2)
    log_z = logsumexp(folded[kept[:, 1:], m].sum(axis=1))
    p = np.exp(folded[kept[:, 1:], m].sum(axis=1) - log_z)
    mu = np.zeros((n + 1, n + 1))
    for tree, weight in zip(kept, p):
        mu[tree[1:], m] += weight

    assert list(parser.parse_one(sentence).heads) == \
        list(kept[np.argmax(best[kept[:, 1:], m].sum(axis=1))])
    assert np.allclose(parser.head_marginals(sentence)[:, 1:], mu[:, 1:], atol=1e-9)
    labeled = parser.marginals(sentence)
    assert np.allclose(labeled.sum(axis=2)[:, 1:], mu[:, 1:], atol=1e-9)
    mbr = parser.parse_one(sentence, decode_as="mbr", marginals=True)
    assert list(mbr.heads) == list(kept[np.argmax(mu[kept[:, 1:], m].sum(axis=1))])
    assert np.allclose(mbr.analysis["heads"][:, 1:], mu[:, 1:], atol=1e-9)
    found = parser.kbest(sentence, len(kept) + 5)
    assert sorted(tuple(h) for _, h, _ in found) == sorted(tuple(t) for t in kept)
    rooted = np.array(trained.model.labels) == "root"  # root with head 0 and only there
    for prob, heads, _ in found:
        allowed = S[heads[1:], m]
        if parser.single_root:  # a multi-root model's arcs keep their best labels
            allowed = np.where((heads[1:, None] == 0) == rooted, allowed, -np.inf)
        assert np.isclose(prob, np.exp(allowed.max(axis=1).sum() - log_z))


def long_sentence(sentences, count):
    """`count` sentences' words one after another, each attached to the previous one's
    root word (one tree)."""
    rows, heads, shift, root = [], [-1], 0, 0
    for s in sentences[:count]:
        for i, cols in enumerate(s.rows[r] for r in s.word_rows):
            h = s.heads[i + 1]
            heads.append(h + shift if h else root)
            rows.append([str(len(rows) + 1), *cols[1:6], str(heads[-1]), cols[7], "_", "_"])
        root = root or shift + int(np.argmax(s.heads == 0))
        shift += len(s)
    return read_conllu(io.StringIO("".join("\t".join(r) + "\n" for r in rows) + "\n"))[0]


@pytest.fixture(scope="module")
def english(ud):
    """A perceptron parser of 300 English-EWT sentences (without its reach); a sentence of
    200-odd words."""
    sentences = read_conllu(ud / "UD_English-EWT" / "en_ewt-ud-dev.conllu")
    trained = OnlineTrainer("perceptron", epochs=1, hash_bits=18, progress=False).fit(
        sentences[:300])
    return LinearParser(trained.parser_.model), long_sentence(sentences[300:], 20)


def test_a_long_sentence_is_parsed_within_reach_in_any_number_of_threads(english):
    """The best tree is the best of the arcs within reach (the model's scores, the others
    -inf); MAP and MBR trees and marginals the same in one thread and in two."""
    from arborparse.trees.decode import best_tree

    parser, sentence = english
    before, after = 12, 7
    n = len(sentence)
    assert n > 150 and reach([sentence])[0] > before  # the gold tree is out of reach
    short = LinearParser(parser.model, temperature=0.5, reach=(before, after))
    offset = np.arange(n + 1)[None, :] - np.arange(n + 1)[:, None]
    out = (offset > before) | (offset < -after)
    out[0] = False
    full = parser.model.scores(Encoded.of(sentence)).total
    full[out] = -np.inf
    for options in ({}, {"decode_as": "mbr", "marginals": True}):
        one = short.parse_one(sentence, **options)
        assert one.to_text() == short.parse_one(sentence, threads=2, **options).to_text()
        assert not out[one.heads[1:], np.arange(1, n + 1)].any()
    assert list(short.parse_one(sentence).heads) == list(best_tree(full, False, True))
    mu = one.analysis["heads"]
    assert (mu[:, 1:][out[:, 1:]] == 0).all() and np.allclose(mu[:, 1:].sum(axis=0), 1)


def words(n):
    """A sentence of n words "w" (tag X) on a chain."""
    return conllu(list(range(n)))[0]


@settings(deadline=None, max_examples=200)
@given(st.integers(1, 40), st.integers(1, 40), st.integers(1, 40))
def test_the_arcs_out_of_reach_are_those_longer_than_it(n, before, after):
    """Head h >= 1 before word m by more than `before`, or after it by more than
    `after`; none where no arc is (then parsing is as without a reach)."""
    parser = LinearParser(None, reach=(before, after))
    out = np.zeros((n + 1, n + 1), dtype=bool)
    for h in range(1, n + 1):
        for m in range(1, n + 1):
            out[h, m] = m - h > before or h - m > after
    found = parser._out_of_reach(Encoded.of(words(n)))
    if out.any():
        assert (found == out).all()
    else:
        assert found is None


@settings(deadline=None, max_examples=10)
@given(st.integers(1, 12), st.integers(1, 12))
def test_a_sentence_with_nothing_out_of_reach_parses_as_without_one(english, before, after):
    parser, sentence = english
    first = first_words(sentence, min(before, after) + 1)
    assert LinearParser(parser.model, reach=(before, after)).parse_one(
        first, marginals=True).to_text() == parser.parse_one(first, marginals=True).to_text()


def first_words(sentence, n, start=0):
    """Words start..start+n-1 of `sentence` as a sentence of their own (a chain)."""
    return read_conllu(io.StringIO("".join(
        "\t".join([str(i), *sentence.rows[r][1:6], str(i - 1), "dep", "_", "_"]) + "\n"
        for i, r in enumerate(sentence.word_rows[start:start + n], 1)) + "\n"))[0]


def test_windows_are_parsed_within_reach_as_cut_out(english):
    """`window_marginals` (the syntax view's windows, sharing arcs) with windows longer
    than the reach: each window's marginals as if it were cut out and parsed."""
    parser, sentence = english
    short = LinearParser(parser.model, temperature=0.5, reach=(6, 4))
    spans = [(0, 30), (10, 40), (20, 50), (30, 45)]
    for (a, b), mu in zip(spans, short.window_marginals(sentence, spans, single_root=False)):
        alone = short.head_marginals(first_words(sentence, b - a, a), single_root=False)
        assert np.allclose(mu, alone, atol=1e-9)


def test_calibration_leaves_out_the_dev_trees_out_of_reach(fitted):
    data, trained = fitted
    sentence = max(data, key=len)  # its words and labels on other trees
    n = len(sentence)
    assert n > 4
    near = [sentence.with_tree(np.arange(-1, n), sentence.deprels)]  # heads one word before
    # labels the model does not know: the heads' fit alone can tell the trees apart
    far = [sentence.with_tree(np.array([-1, 0] + [1] * (n - 1)), ["unseen"] * n)]
    parser = LinearParser(trained.model, reach=(3, 3))

    def heads_t(parser, dev):
        return parser.calibrate(dev)["temperature"]

    assert heads_t(parser, far) == 1.0  # no usable sentence
    assert heads_t(parser, far + near) == heads_t(parser, near) != 1.0
    assert heads_t(LinearParser(trained.model), far + near) != heads_t(parser, near)


def test_max_z_trees_are_the_best_within_reach():
    from arborparse.linear.loglinear import LogLinearTrainer as Trainer

    data = separable(1)
    model = Trainer(clusters=2, init_noise=0.01, epochs=2, hash_bits=12,
                    progress=False).fit(data).parser_.model
    sentence = max(data, key=len)
    n, m = len(sentence), np.arange(1, len(sentence) + 1)
    best = LinearParser(model).model.scores(Encoded.of(sentence), combine="max").total
    for cut in ((1, 1), (2, 1), (1, 2)):
        kept = within(all_trees(n, False, True), *cut)
        assert list(LinearParser(model, reach=cut).parse_one(
            sentence, decode_as="max-z").heads) == \
            list(kept[np.argmax(best[kept[:, 1:], m].sum(axis=1))])


def test_trainers_give_their_parser_the_reach_of_the_training_trees():
    data = separable(1)
    before, after = reach(data)
    dev = conllu([0] + [1] * (before + 2), [after + 3] * (after + 2) + [0])  # longer arcs
    assert reach(dev) == (before + 2, after + 2)
    for trainer in (OnlineTrainer("perceptron", epochs=1, hash_bits=12, progress=False),
                    LogLinearTrainer(epochs=1, hash_bits=12, progress=False),
                    EGTrainer(epochs=1, hash_bits=12, progress=False)):
        assert trainer.fit(data, dev).parser_.reach == (before, after)


def test_the_reach_counts_the_projective_trees_trained_toward():
    crossing = conllu([0, 1, 1, 3, 2])  # 1 -> 3 crosses 2 -> 5
    assert reach(crossing) == (3, 1)
    assert reach(crossing, projective=True) == (3, 2)  # its projective tree: a head after


def test_the_reach_is_saved_and_checked(fitted, tmp_path):
    _, parser = fitted
    path = tmp_path / "p.npz"
    LinearParser(parser.model, reach=(4, 9)).save(path)
    assert LinearParser.load(path).reach == (4, 9)
    LinearParser(parser.model).save(path, force=True)  # as files written before it
    assert LinearParser.load(path).reach is None
    from arborparse.io import model_files

    header, arrays = LinearParser(parser.model, reach=(4, 9)).parts()
    for bad in ([4], [0, 3], [2.5, 3], "far", [True, 2]):
        model_files.save(path, "linear", 2, {**header, "reach": bad}, arrays, force=True)
        with pytest.raises(ModelFileError, match=re.escape(f"{path}: ") + ".*'reach'"):
            LinearParser.load(path)
    for bad in ((0, 3), (1,), (1.0, 2), 3, np.array([2.5, 3])):
        with pytest.raises(ArborparseError, match="reach must be two whole numbers"):
            LinearParser(parser.model, reach=bad)
    for given in (tuple(np.array([3, 4])), np.array([3, 4]), [3, 4]):
        assert LinearParser(parser.model, reach=given).reach == (3, 4)


def test_a_sentence_whose_arcs_would_not_fit_in_memory_is_refused(monkeypatch, tmp_path):
    """Any parse takes O(n²) memory for its arcs (more with their marginals or MBR): a
    sentence of a text without sentence ends, too long for the memory free, is refused in
    one line naming it and saying what to do, before any array is made (the command line
    exits with 1 and writes nothing); where it fits, it is parsed as ever."""
    from click.testing import CliRunner

    import arborparse.linear.model
    import arborparse.memory
    from arborparse.cli import cli

    parser = OnlineTrainer("perceptron", epochs=1, hash_bits=12, progress=False).fit(
        separable(1)).parser_
    words = 3000
    text = "".join(f"{i}\tw\tw\tX\tX\t_\t{i - 1}\tdep\t_\t_\n" for i in range(1, words + 1))
    (tmp_path / "long.conllu").write_text(text + "\n")
    long = read_conllu(tmp_path / "long.conllu")[0]
    best, with_marginals = (c * (words + 1) ** 2 for c in arborparse.linear.model.ARC_BYTES)
    monkeypatch.setattr(arborparse.memory, "available_memory", lambda: best - 1)
    message = (f"{tmp_path / 'long.conllu'}:1: a sentence of {words} words is too long to "
               f"parse here: its arcs would take about {best / 2 ** 30:.1f} GiB")
    with pytest.raises(ArborparseError, match=message):
        parser.parse([long])
    made = words_sentence(["w"] * words, 7)  # made in memory (raw text): named by number
    made = made.with_columns({UPOS: ["X"] * words, XPOS: ["X"] * words})
    with pytest.raises(ArborparseError, match=r"^sentence 7 \(w w w w w \.\.\.\): a sentence"
                       r".*free; split it$"):
        parser.parse([made])
    from_text = Sentence(made.comments, made.rows, made.word_rows, made.heads,
                         offsets=np.zeros((words, 2), dtype=np.int64))  # as the tokenizer's
    with pytest.raises(ArborparseError, match=r"split it \(raw text without sentence ends is "
                                              r"one sentence: --input-format lines reads one "
                                              r"a line\)$"):
        parser.parse([from_text])
    parser.save(tmp_path / "m.npz")
    out = tmp_path / "out.conllu"
    r = CliRunner().invoke(cli, ["parse", "--model", str(tmp_path / "m.npz"),
                                 str(tmp_path / "long.conllu"), "-o", str(out)])
    assert r.exit_code == 1 and message in r.output and "--input-format" not in r.output
    assert len(r.output.splitlines()) == 1 and not out.exists()
    monkeypatch.setattr(arborparse.memory, "available_memory", lambda: best)
    assert len(parser.parse([long])[0]) == words  # the best tree fits
    with pytest.raises(ArborparseError, match=f"about {with_marginals / 2 ** 30:.1f} GiB"):
        parser.parse([long], decode_as="mbr")  # its MBR tree does not


# ------------------------------------------------------------------ the reach per pair of tags

def tagged(heads, tags):
    """A sentence of words "w" with the given UPOS tags (a list, or a str split at spaces)
    on the tree `heads`."""
    tags = tags.split() if isinstance(tags, str) else tags
    text = "".join(f"{m}\tw\tw\t{t}\tX\t_\t{h}\tdep\t_\t_\n"
                   for m, (h, t) in enumerate(zip(heads, tags), 1))
    return read_conllu(io.StringIO(text + "\n"))[0]


def test_the_tag_reach_is_the_longest_arc_of_each_pair_of_tags_each_way():
    # N <- D (head after, 1 word), V -> N (head before, 2 and 3 words), root -> V
    found = TagReach.of([tagged([2, 4, 4, 0, 4, 4], "D N A V P N"),
                         tagged([0, 1, 1, 1], "V N N N")])
    assert found.tags == ("A", "D", "N", "P", "V")
    t = {tag: i for i, tag in enumerate(found.tags)}
    before = {(h, d): found.before[t[h], t[d]] for h in t for d in t if found.before[t[h], t[d]]}
    after = {(h, d): found.after[t[h], t[d]] for h in t for d in t if found.after[t[h], t[d]]}
    assert before == {("V", "P"): 1, ("V", "N"): 3}
    assert after == {("N", "D"): 1, ("V", "N"): 2, ("V", "A"): 1}
    crossing = tagged([0, 1, 1, 3, 2], "V N N N N")  # 1 -> 3 crosses 2 -> 5
    t = {tag: i for i, tag in enumerate(TagReach.of([crossing]).tags)}
    assert TagReach.of([crossing]).after[t["N"], t["N"]] == 0
    assert TagReach.of([crossing], projective=True).after[t["N"], t["N"]] == 2  # 3 <- 5


def cut_by_hand(tags, table: TagReach, before, after):
    """The arcs out of reach by the definition: farther than the reach, or (both tags
    known) than the pair's longest arc in that direction (at least 1); neighbours and the
    root's arcs never."""
    n = len(tags)
    index = {t: i for i, t in enumerate(table.tags)}
    out = np.zeros((n + 1, n + 1), dtype=bool)
    for h in range(1, n + 1):
        for m in range(1, n + 1):
            offset = m - h
            if abs(offset) <= 1:
                continue
            limit = before if offset > 0 else after
            if tags[h - 1] in index and tags[m - 1] in index:
                pair = (index[tags[h - 1]], index[tags[m - 1]])
                limit = min(limit, max(int((table.before if offset > 0 else table.after)[pair]),
                                       1))
            out[h, m] = abs(offset) > limit
    return out


def random_table(tags, draw):
    K = len(tags)
    cells = st.lists(st.integers(0, 6), min_size=K * K, max_size=K * K)
    return TagReach(tuple(tags), *(np.array(draw(cells), dtype=np.int32).reshape(K, K)
                                   for _ in range(2)))


@settings(deadline=None, max_examples=200)
@given(st.data(), st.integers(1, 25), st.integers(1, 30), st.integers(1, 30))
def test_the_arcs_out_of_the_tag_reach_are_those_of_the_definition(data, n, before, after):
    table = random_table(["A", "B", "C"], data.draw)
    tags = data.draw(st.lists(st.sampled_from("ABCZ"), min_size=n, max_size=n))  # Z: unseen
    parser = LinearParser(None, reach=(before, after), tag_reach=table)
    found = parser._out_of_reach(Encoded.of(tagged(range(n), tags)))
    out = cut_by_hand(tags, table, before, after)
    if out.any():
        assert (found == out).all()
    else:
        assert found is None
    wide = LinearParser(None, tag_reach=table)._out_of_reach(Encoded.of(tagged(range(n), tags)))
    out = cut_by_hand(tags, table, 10 ** 6, 10 ** 6)
    assert (wide == out).all() if out.any() else wide is None


@pytest.mark.parametrize("single_root", [True, False], ids=["one root", "roots"])
@pytest.mark.parametrize("decoder", ["mst", "eisner"])
@pytest.mark.parametrize("limits", ["none seen", "some"])
def test_trees_and_distribution_are_those_within_the_tag_reach(fitted, decoder, limits,
                                                               single_root):
    """As within the reach: best tree, MBR tree, k best, marginals are enumeration's over
    the trees whose arcs are all within the tag reach; with no pair seen, the trees of
    neighbours under any root remain."""
    data, trained = fitted
    sentence = max(data, key=len)
    n, tags = len(sentence), list(sentence.upos)
    kinds = tuple(sorted(set(tags)))
    K = len(kinds)
    if limits == "none seen":
        table = TagReach(kinds, np.zeros((K, K), np.int32), np.zeros((K, K), np.int32))
    else:
        table = TagReach(kinds, np.full((K, K), 2, np.int32), np.ones((K, K), np.int32))
        table.before[0, :] = n
    parser = LinearParser(trained.model, decoder, single_root, temperature=3.0,
                          tag_reach=table)
    out = cut_by_hand(tags, table, n, n)
    every = all_trees(n, decoder == "eisner", single_root)
    m = np.arange(1, n + 1)
    kept = every[~out[every[:, 1:], m].any(axis=1)]
    assert 0 < len(kept) < len(every)
    assert_over(parser, trained, sentence, kept)


def test_trainers_give_their_parser_the_tag_reach_of_the_training_trees():
    data = separable(1)
    for trainer in (OnlineTrainer("perceptron", epochs=1, hash_bits=12, progress=False),
                    LogLinearTrainer(epochs=1, hash_bits=12, progress=False),
                    EGTrainer(epochs=1, hash_bits=12, progress=False)):
        assert trainer.fit(data, data).parser_.tag_reach == TagReach.of(data)


def test_the_tag_reach_is_saved_and_checked(fitted, tmp_path):
    data, parser = fitted
    path = tmp_path / "p.npz"
    table = TagReach.of(data)
    LinearParser(parser.model, tag_reach=table).save(path)
    assert LinearParser.load(path).tag_reach == table
    LinearParser(parser.model).save(path, force=True)  # as files written before it
    assert LinearParser.load(path).tag_reach is None
    from arborparse.io import model_files

    header, arrays = LinearParser(parser.model, tag_reach=table).parts()
    K = len(table.tags)
    for bad in ([1, 2], {"tags": list(table.tags)}, {**table.header(), "before": [[1]]},
                {**table.header(), "tags": [[t] for t in table.tags]},
                {**table.header(), "tags": "".join(table.tags)},
                {**table.header(), "tags": ["A"] * K},
                {**table.header(), "after": (-table.after).tolist()},
                {**table.header(), "before": (table.before + 0.5).tolist()},
                {**table.header(), "before": [[True] * K] * K},
                {**table.header(), "before": [[2 ** 40] * K] * K}):
        model_files.save(path, "linear", 2, {**header, "tag_reach": bad}, arrays, force=True)
        with pytest.raises(ModelFileError, match=re.escape(f"{path}: ") + ".*'tag_reach'"):
            LinearParser.load(path)
    with pytest.raises(ArborparseError, match="tag reach must be a TagReach"):
        LinearParser(parser.model, tag_reach={"tags": []})


def test_training_drops_a_tag_reach_that_costs_dev_accuracy(fitted):
    """A tag reach that leaves the dev trees' arcs out (tags unlike those of training) is
    dropped; one that leaves none of them out is kept."""
    from arborparse.eval import evaluate
    from arborparse.linear.reach import keep_tag_reach

    data, trained = fitted
    kinds = tuple(sorted({t for s in data for t in s.upos}))
    K = len(kinds)
    none_seen = TagReach(kinds, np.zeros((K, K), np.int32), np.zeros((K, K), np.int32))
    without = evaluate(data, trained.parse(data))
    for table, kept in ((none_seen, False), (TagReach.of(data), True)):
        parser = LinearParser(trained.model, tag_reach=table)
        record = evaluate(data, parser.parse(data))
        said = keep_tag_reach(parser, data, dict(record))
        assert said["tag_reach"] is kept and parser.tag_reach is (table if kept else None)
        if kept:
            assert said == {"tag_reach": True}
        else:  # the record takes the scores of the parser kept, and says why
            assert record["LAS"] < without["LAS"] == said["LAS"] and said["tag_reach_dropped"]


def test_a_tag_reach_dropped_is_not_given_to_the_later_epochs(fitted):
    """Where a best epoch's tag reach costs dev LAS and is dropped, the trainer's later
    epochs are scored without it too, as the parser they must beat is."""
    from arborparse.linear.common import loop

    data, trained = fitted
    kinds = tuple(sorted({t for s in data for t in s.upos}))
    K = len(kinds)
    none_seen = TagReach(kinds, np.zeros((K, K), np.int32), np.zeros((K, K), np.int32))

    class Trainer:
        epochs, progress, tag_reach_ = 2, False, none_seen

    trainer = Trainer()
    log = loop(trainer, data)
    parser = LinearParser(trained.model, tag_reach=none_seen)
    assert log.end(1, {}, "", parser)
    assert parser.tag_reach is None and trainer.tag_reach_ is None


def test_order_2_trees_and_marginals_are_those_within_the_tag_reach():
    """At order 2 (projective, sibling and grandparent parts): the best tree and the head
    marginals are enumeration's over the trees within the tag reach."""
    from oracles import brute_second_order

    from arborparse.linear.options import LinearOptions
    from arborparse.linear.train import trainer

    data = separable(1)
    parser = trainer(LinearOptions.of({"hash_bits": 16, "trainer": "perceptron", "epochs": 2,
                                       "order": 2, "second_order": "siblings+grandparents"}),
                     dev=False, progress=False).fit(data, data).parser_
    parser.temperature = parser.label_temperature = 5.0
    sentence = max(data, key=len)
    n, tags = len(sentence), list(sentence.upos)
    kinds = tuple(sorted(set(tags)))
    K = len(kinds)
    parser.tag_reach = TagReach(kinds, np.ones((K, K), np.int32), np.full((K, K), 2, np.int32))
    parser.reach = None
    x = Encoded.of(sentence)
    out = cut_by_hand(tags, parser.tag_reach, n, n)
    assert out.any()
    S = parser._within_reach(parser.model.labeled_scores(x, scale=0.2), parser._out_of_reach(x))
    sib, grand = parser.model.part_scores(x, scale=0.2)
    trees, _, _, mu, _, _ = brute_second_order(logsumexp(S, axis=2), sib, grand, True, True)
    m = np.arange(1, n + 1)
    kept = ~out[trees[:, 1:], m].any(axis=1)
    assert 0 < kept.sum() < len(trees)
    assert np.allclose(parser.head_marginals(sentence)[:, 1:], mu[:, 1:], atol=1e-9)
    assert (mu[1:, 1:][out[1:, 1:]] == 0).all()
    _, best, _, _, _, _ = brute_second_order(S.max(axis=2) * parser.temperature,  # unscaled
                                             *parser.model.part_scores(x), True, True)
    assert list(parser.parse_one(sentence).heads) == list(trees[np.argmax(best)])


def test_the_tag_reach_is_an_option_and_the_window_parser_has_none(tmp_path):
    from arborparse.linear.options import LinearOptions
    from arborparse.linear.train import trainer

    data = separable(1)
    for given, found in (({}, TagReach.of(data)), ({"tag_reach": False}, None)):
        options = LinearOptions.of({"hash_bits": 12, "epochs": 1, "trainer": "mira",
                                    "order": 1, **given})
        assert trainer(options, dev=True, progress=False).fit(data, data).parser_.tag_reach \
            == found
    from arborparse.text.syntax import window_parser

    # the tokenizer's view weighs arcs across sentence ends: its parser keeps every arc
    assert window_parser(separable(2), separable(1)).tag_reach is None


def test_a_resumed_training_keeps_the_tag_reach_only_where_its_checkpoint_did(fitted):
    from arborparse.linear.reach import kept_tag_reach

    data, trained = fitted
    for header, kept in (({"tag_reach": True}, True), ({"tag_reach": False}, False),
                         ({}, False)):  # {}: a checkpoint written before the tag reach
        table = TagReach.of(data)
        trainer = SimpleNamespace(parser_=LinearParser(trained.model, tag_reach=table),
                                  tag_reach_=table)
        kept_tag_reach(trainer, header)
        # the later epochs scored as the interrupted run scored them (they were not: a
        # Coptic-Scriptorium training resumed after epoch 5 parted from the straight one)
        assert (trainer.parser_.tag_reach is not None) == kept == \
            (trainer.tag_reach_ is not None)


def test_info_tells_the_tag_reach_or_refuses_a_file_that_will_not_load(fitted, tmp_path):
    from click.testing import CliRunner

    from arborparse.cli import cli
    from arborparse.io import model_files

    data, trained = fitted
    path = tmp_path / "p.npz"
    table = TagReach.of(data)
    LinearParser(trained.model, tag_reach=table).save(path)
    r = CliRunner().invoke(cli, ["info", str(path)])
    pairs = int(np.count_nonzero(np.maximum(table.before, table.after)))
    assert f"tag_reach           {len(table.tags)} tags, {pairs} pairs" in r.output
    header, arrays = LinearParser(trained.model, tag_reach=table).parts()
    for bad in ({**table.header(), "before": [[True]]}, {**table.header(), "tags": "ABC"}):
        model_files.save(path, "linear", 2, {**header, "tag_reach": bad}, arrays, force=True)
        r = CliRunner().invoke(cli, ["info", str(path)])
        assert r.exit_code == 1 and "header is invalid ('tag_reach': " in r.output, r.output
        assert "tag_reach           " not in r.output  # refused as parse refuses it
