"""The best trees of a chunk of sentences in one compiled call (`arborparse.linear.chunk`):
the same trees and labels as one sentence at a time (`LinearParser._parse_one`), in order,
whatever the chunk holds (a sentence scored in threads, one refused, one without a
finite tree)."""

import numpy as np
import pytest

import arborparse.memory
from arborparse.errors import ArborparseError
from arborparse.io import read_conllu
from arborparse.io.conllu import UPOS, XPOS
from arborparse.io.plain import words_sentence
from arborparse.linear.labeler import Labeler
from arborparse.linear.model import ARC_BYTES, THREADED_WORDS
from arborparse.linear.options import SECOND_ORDER
from arborparse.linear.online import OnlineTrainer
from arborparse.linear.parser import CHUNK_WORDS, SHORTEST, LinearParser
from arborparse.trees.scores import NonFiniteScores


@pytest.fixture(scope="module")
def english(ud):
    """A perceptron parser of 300 English-EWT dev sentences (with its reach and tag
    reach), a labeler of the same, and 150 other sentences (more than two chunks)."""
    sentences = read_conllu(ud / "UD_English-EWT" / "en_ewt-ud-dev.conllu")
    train, test = sentences[:300], sentences[300:450]
    parser = OnlineTrainer("perceptron", epochs=1, hash_bits=18, progress=False).fit(
        train).parser_
    assert parser.reach is not None and parser.tag_reach is not None
    assert len(test) > 2 * CHUNK_WORDS // SHORTEST
    return parser, Labeler.fit(train, parser.model.labels, bits=14), test


@pytest.fixture(scope="module")
def english_order_2(english, ud):
    """Perceptron parsers of order 2 (siblings; siblings and grandparents) of the same 300
    sentences, and the same 150 others."""
    sentences = read_conllu(ud / "UD_English-EWT" / "en_ewt-ud-dev.conllu")[:300]
    parsers = {second_order: OnlineTrainer("perceptron", epochs=1, hash_bits=18, order=2,
                                           second_order=second_order, progress=False).fit(
        sentences).parser_ for second_order in SECOND_ORDER}
    assert all(p.reach is not None and p.tag_reach is not None for p in parsers.values())
    return parsers, english[1], english[2]


def one_at_a_time(parser, sentences, decoder=None, threads=1):
    return [parser._parse_one(s, decoder, "map", False, None, threads).to_text()
            for s in sentences]


def long_sentence(sentences, words):
    """The words and tags of the sentences one after another, as one sentence of at least
    `words` words."""
    forms, upos, xpos = [], [], []
    for s in sentences:
        forms += s.forms
        upos += s.upos
        xpos += s.xpos
        if len(forms) >= words:
            break
    made = words_sentence(forms, 1)
    return made.with_columns({UPOS: upos, XPOS: xpos})


@pytest.mark.parametrize("decoder", ["mst", "eisner"])
@pytest.mark.parametrize("single_root", [True, False], ids=["one root", "roots"])
@pytest.mark.parametrize("labeled_by", ["model", "labeler"])
@pytest.mark.parametrize("left_out", ["reach and tag reach", "reach", "nothing"])
def test_chunks_give_the_trees_and_labels_of_one_sentence_at_a_time(english, decoder,
                                                                    single_root, labeled_by,
                                                                    left_out):
    trained, labeler, test = english
    parser = LinearParser(trained.model, decoder, single_root,
                          labeler=labeler.with_weight(0.7) if labeled_by == "labeler" else None,
                          reach=None if left_out == "nothing" else (3, 2),
                          tag_reach=trained.tag_reach if left_out.endswith("tag reach")
                          else None)
    found = [s.to_text() for s in parser.parse(test)]
    assert found == one_at_a_time(parser, test)
    other = "eisner" if decoder == "mst" else "mst"  # a decoder asked for
    assert [s.to_text() for s in parser.parse(test[:5], decoder=other)] == \
        one_at_a_time(parser, test[:5], other)


@pytest.mark.parametrize("decoder", ["mst", "eisner"])
@pytest.mark.parametrize("single_root", [True, False], ids=["one root", "roots"])
@pytest.mark.parametrize("second_order", SECOND_ORDER)
def test_order_2_chunks_give_the_trees_and_labels_of_one_sentence_at_a_time(
        english_order_2, decoder, single_root, second_order, monkeypatch):
    """At order 2 too, with the sentences past `GRAND_WORDS` words parsed without the
    grandparents and those past `SIBLING_WORDS` from their arcs alone (here 25 and 40)."""
    import arborparse.linear.model
    import arborparse.linear.parser

    parsers, labeler, test = english_order_2
    trained = parsers[second_order]
    for module in (arborparse.linear.model, arborparse.linear.parser):
        monkeypatch.setattr(module, "GRAND_WORDS", 25)
        monkeypatch.setattr(module, "SIBLING_WORDS", 40)
    sentences = test[:40] + [long_sentence(test[40:], 45)]
    assert {len(s) > 40 for s in sentences} == {True, False}
    assert {len(s) > 25 for s in sentences if len(s) <= 40} == {True, False}
    for labels in (None, labeler.with_weight(0.7)):
        parser = LinearParser(trained.model, decoder, single_root, labeler=labels,
                              reach=trained.reach, tag_reach=trained.tag_reach)
        assert [s.to_text() for s in parser.parse(sentences)] == \
            one_at_a_time(parser, sentences)


def test_a_sentence_scored_in_threads_keeps_its_place(english, monkeypatch):
    """With threads, a sentence of `THREADED_WORDS` words or more is parsed alone (its arcs
    scored in threads), in its place among the chunk's."""
    trained, labeler, test = english
    parser = LinearParser(trained.model, labeler=labeler, reach=trained.reach,
                          tag_reach=trained.tag_reach)
    long = long_sentence(test, THREADED_WORDS + 10)
    sentences = test[:10] + [long] + test[10:20]
    expected = one_at_a_time(parser, sentences, threads=2)
    alone = []
    one = parser._parse_one
    monkeypatch.setattr(parser, "_parse_one", lambda s, *a: alone.append((len(s), a[-1]))
                        or one(s, *a))
    assert [s.to_text() for s in parser.parse(sentences, threads=2)] == expected
    assert alone == [(len(long), 2)]
    assert [s.to_text() for s in parser.parse(sentences)] == expected  # the same trees
    assert alone == [(len(long), 2)]  # one thread: in its chunk


def test_a_sentence_the_chunk_finds_no_tree_for_is_parsed_alone(english, monkeypatch):
    """Where the compiled call reports a sentence without a finite tree, the sentences
    before it come out, then that one from `_parse_one` (which raises, where its scores
    have no finite tree), then the rest, in order."""
    import arborparse.linear.parser as module

    parser, _, test = english
    real = module.best_trees

    def stops_at_the_third(*args):
        real(*args)
        return 2 if args[1].shape[0] > 3 else -1  # of a chunk of three sentences or more
    monkeypatch.setattr(module, "best_trees", stops_at_the_third)
    alone = []
    one = parser._parse_one
    monkeypatch.setattr(parser, "_parse_one", lambda s, *a: alone.append(s) or one(s, *a))
    assert [s.to_text() for s in parser.parse(test[:8])] == one_at_a_time(parser, test[:8])
    assert [s.to_text() for s in alone[:2]] == [test[2].to_text(), test[5].to_text()]


@pytest.mark.parametrize("failure", ["malformed", "untagged"])
def test_the_sentences_read_before_an_input_error_are_given_first(english, failure):
    """The input fails within a chunk (a malformed sentence, one without tags): the
    sentences read before it are parsed and given, then the error, as one sentence at a
    time would."""
    parser, _, test = english

    def stream():
        yield from test[:3]
        if failure == "malformed":
            raise ArborparseError("bad.conllu:40: expected 10 tab-separated columns")
        yield words_sentence(["no", "tags"], 4)
        yield from test[3:]
    parsed = parser.iter_parse(stream())
    assert [next(parsed).to_text() for _ in range(3)] == one_at_a_time(parser, test[:3])
    with pytest.raises(ArborparseError, match="bad.conllu:40" if failure == "malformed"
                       else "UPOS"):
        next(parsed)


def test_a_chunk_holds_at_most_so_many_words(english, monkeypatch):
    """A stream is read a chunk at a time: as many sentences as make `CHUNK_WORDS` words,
    each counted as at least `SHORTEST`."""
    import arborparse.linear.parser as module

    parser, _, test = english
    read = []

    def stream():
        for s in test:
            read.append(s)
            yield s

    def counted(sentences):
        return sum(max(len(s), SHORTEST) for s in sentences)
    for words in (CHUNK_WORDS, 30, 300):
        monkeypatch.setattr(module, "CHUNK_WORDS", words)
        read.clear()
        first = next(parser.iter_parse(stream()))
        assert first.to_text() == one_at_a_time(parser, test[:1])[0]
        assert counted(read[:-1]) < words <= counted(read)


def test_at_order_2_a_long_sentence_counts_for_its_chart(english_order_2):
    """At order 2 a sentence past `SHORTEST` words counts as its words times (words /
    `SHORTEST`)² (siblings) or ³ (grandparents): 100 words with grandparents make a chunk of
    their own."""
    parsers, _, test = english_order_2
    long = long_sentence(test, 100)
    n = len(long)
    siblings, grandparents = (parsers[o] for o in SECOND_ORDER)
    assert siblings._chunk_words(long) == pytest.approx(n * (n / SHORTEST) ** 2)
    assert grandparents._chunk_words(long) == pytest.approx(n * (n / SHORTEST) ** 3)
    assert grandparents._chunk_words(long) > CHUNK_WORDS
    short = min(test, key=len)
    assert grandparents._chunk_words(short) == SHORTEST


def test_the_sentences_before_a_refused_one_are_given_first(english, monkeypatch):
    """A sentence too long for the memory free, within a chunk: the sentences before it
    come out, then its one-line refusal (as one sentence at a time)."""
    parser, _, test = english
    long = long_sentence(test, 120)
    monkeypatch.setattr(arborparse.memory, "CHECKED_FROM", 0)
    monkeypatch.setattr(arborparse.memory, "available_memory",
                        lambda: ARC_BYTES[False] * len(long) ** 2)  # below its (n+1)²
    stream = parser.iter_parse(test[:10] + [long] + test[10:20])
    got = [next(stream).to_text() for _ in range(10)]
    assert got == one_at_a_time(parser, test[:10])
    with pytest.raises(ArborparseError, match="too long to parse here"):
        next(stream)


def test_scores_without_a_finite_tree_are_refused_as_one_at_a_time(english):
    trained, _, test = english
    broken = LinearParser(trained.model.like(np.full_like(trained.model.weights, np.nan)),
                          reach=trained.reach, tag_reach=trained.tag_reach)
    with pytest.raises(NonFiniteScores):
        broken.parse(test[:3])
    with pytest.raises(NonFiniteScores):
        one_at_a_time(broken, test[:1])


@pytest.mark.parametrize("second_order", SECOND_ORDER)
@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_order_2_scores_with_a_nan_or_inf_are_refused_as_one_at_a_time(english_order_2,
                                                                       second_order, bad):
    """A few weights NaN or +inf (a damaged model): each sentence whose arc or part scores
    hold one is refused as one sentence at a time refuses it, the others parsed alike."""
    parsers, _, test = english_order_2
    trained = parsers[second_order]
    weights = trained.model.weights.copy()
    weights[np.random.default_rng(0).random(len(weights)) < 0.002] = bad
    broken = LinearParser(trained.model.like(weights), reach=trained.reach,
                          tag_reach=trained.tag_reach)
    outcomes = set()
    for sentence in test[:40]:
        try:
            alone = one_at_a_time(broken, [sentence])
        except NonFiniteScores:
            with pytest.raises(NonFiniteScores):
                broken.parse([sentence])
            outcomes.add("refused")
        else:
            assert [s.to_text() for s in broken.parse([sentence])] == alone
            outcomes.add("parsed")
    assert outcomes == {"refused", "parsed"}
