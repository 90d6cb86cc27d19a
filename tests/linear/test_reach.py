"""The parser's reach: arcs longer than any of the training trees' in their direction are
left out of parsing, and every tree and distribution is then over the trees within reach
(checked against enumeration); where nothing is out of reach nothing changes."""

import io
import re

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
from arborparse.linear.common import reach
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
    S = trained._scores(Encoded.of(sentence)) / 3.0
    every = all_trees(n, decoder == "eisner", single_root)
    kept = within(every, *cut)
    assert 0 < len(kept) < len(every)
    m = np.arange(1, n + 1)
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
    for prob, heads, _ in found:
        assert np.isclose(prob, np.exp(best[heads[1:], m].sum() - log_z))


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
    far = [sentence.with_tree(np.array([-1, 0] + [1] * (n - 1)), sentence.deprels)]
    parser = LinearParser(trained.model, reach=(3, 3))
    assert parser.calibrate(far) == 1.0  # no usable sentence
    assert parser.calibrate(far + near) == parser.calibrate(near) != 1.0
    assert LinearParser(trained.model).calibrate(far + near) != parser.calibrate(near)


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
