"""The parser's reach: arcs longer than any of the training trees' in their direction are
left out of parsing, and every tree and distribution is then over the trees within reach
(checked against enumeration); where nothing is out of reach nothing changes."""

import io

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from oracles import all_trees
from scipy.special import logsumexp
from treebanks import separable

from arborparse.io import read_conllu
from arborparse.io.model_files import ModelFileError
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


@pytest.mark.parametrize("decoder", ["mst", "eisner"])
@pytest.mark.parametrize("cut", [(1, 1), (1, 3), (3, 1), (2, 2)])
def test_trees_and_distribution_are_those_within_reach(fitted, decoder, cut):
    """Best tree, MBR tree, k best trees with their probabilities, head and labeled
    marginals: enumeration's over the trees within reach (the model's own scores)."""
    data, trained = fitted
    parser = LinearParser(trained.model, decoder, temperature=3.0, reach=cut)
    sentence = max(data, key=len)
    n = len(sentence)
    S = trained._scores(Encoded.of(sentence)) / 3.0
    kept = within(all_trees(n, decoder == "eisner", True), *cut)
    assert 0 < len(kept) < len(all_trees(n, decoder == "eisner", True))
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
    assert n > 150 and reach([sentence]) > (before, after)  # the gold tree is out of reach
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


def first_words(sentence, n):
    """The first n words of `sentence` as a sentence of their own (a chain)."""
    return read_conllu(io.StringIO("".join(
        "\t".join([str(i), *sentence.rows[r][1:6], str(i - 1), "dep", "_", "_"]) + "\n"
        for i, r in enumerate(sentence.word_rows[:n], 1)) + "\n"))[0]


@settings(deadline=None, max_examples=20)
@given(st.integers(1, 30), st.integers(1, 30))
def test_nothing_changes_where_nothing_is_out_of_reach(english, before, after):
    parser, sentence = english
    first = first_words(sentence, min(before, after) + 1)  # no arc of it is out of reach
    cut = LinearParser(parser.model, reach=(before, after))
    assert cut._out_of_reach(Encoded.of(first)) is None
    assert cut.parse_one(first, marginals=True).to_text() == \
        parser.parse_one(first, marginals=True).to_text()


def test_trainers_give_their_parser_the_reach_of_the_training_trees(tmp_path):
    data = separable(1)
    expected = reach(data)
    for trainer in (OnlineTrainer("perceptron", epochs=1, hash_bits=12, progress=False),
                    LogLinearTrainer(epochs=1, hash_bits=12, progress=False),
                    EGTrainer(epochs=1, hash_bits=12, progress=False)):
        assert trainer.fit(data, data).parser_.reach == expected


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
        with pytest.raises(ModelFileError, match=f"{path}: .*'reach'"):
            LinearParser.load(path)
