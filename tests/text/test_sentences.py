"""The word-level sentence splitter, alone and inside the tokenizer."""

import numpy as np
from text.test_tokenizer import text_of, treebank

from arborparse.io import Sentence
from arborparse.text.sentences import SentenceSplitter, sentence_f1
from arborparse.text.tokenizer import SENTENCE, Tokenizer, char_features, token_paragraphs

WORDS = ["hlaifs", "waurd", "guma", "barn", "fisks", "stains", "dags", "mats", "hus", "skip"]


def unpunctuated(sentences, seed):
    """One paragraph of sentences "A B qiþ C D" of random words and no punctuation, with
    one to three words before "qiþ": a sentence ends two words after it, which neither a
    word nor its neighbours show (the first of three words before "qiþ" looks the same)."""
    rng = np.random.default_rng(seed)
    out = []
    for k in range(sentences):
        before = int(rng.integers(1, 4))
        forms = [*rng.choice(WORDS, before), "qiþ", *rng.choice(WORDS, 2)]
        q = before + 1  # the root
        rows = [[str(i), f, *"_" * 4, "0" if i == q else str(q), "root" if i == q else "dep",
                 "_", "_"] for i, f in enumerate(forms, 1)]
        comments = ["# newdoc", "# newpar"] if k == 0 else []
        heads = np.array([-1] + [0 if i == q else q for i in range(1, len(forms) + 1)])
        out.append(Sentence(comments + [f"# text = {' '.join(forms)}"], rows,
                            list(range(len(rows))), heads))
    return out


def test_sentence_f1_counts_sentences_with_both_ends_right():
    gold = np.array([0, 1, 0, 0, 1, 1], dtype=bool)  # (0, 1) (2, 4) (5, 5)
    assert sentence_f1(gold, gold) == 100.0
    merged = np.array([0, 0, 0, 0, 1, 1], dtype=bool)  # (0, 4) (5, 5): one of two right
    assert sentence_f1(merged, gold) == 200.0 * 1 / (2 + 3)


def test_the_splitter_finds_ends_the_characters_cannot_show():
    train, dev = unpunctuated(300, 0), unpunctuated(60, 1)
    splitter = SentenceSplitter(epochs=5, bits=16, progress=False)
    splitter.fit(*token_paragraphs(train), token_paragraphs(dev))
    (forms,), (ends,) = token_paragraphs(dev)
    assert (splitter.ends(forms) == ends).all()
    tokenizer = Tokenizer(epochs=5, bits=16, progress=False).fit(train, dev)
    assert tokenizer.sentence_f1_["words"] == 100.0 > tokenizer.sentence_f1_["characters"]
    assert tokenizer.splitter is not None
    found = tokenizer.tokenize(text_of(dev))
    assert [s.forms for s in found] == [s.forms for s in dev]
    again = Tokenizer.from_parts(*tokenizer.parts(), "m.npz")
    assert [s.rows for s in again.tokenize(text_of(dev))] == [s.rows for s in found]
    one = tokenizer.tokenize(text_of(dev[:3]), per_line=True)  # a line is never split
    assert len(one) == 1


def test_the_characters_are_kept_where_they_do_as_well():
    tokenizer = Tokenizer(epochs=5, bits=16, progress=False).fit(treebank(5), treebank())
    assert tokenizer.sentence_f1_["characters"] == 100.0
    assert tokenizer.splitter is None  # not better: the simpler model stays
    header, _ = tokenizer.parts()
    assert "sentences" not in header
    assert Tokenizer.from_parts(*tokenizer.parts(), "m.npz").splitter is None


def test_a_splitter_that_learned_nothing_shifts_nothing():
    """A treebank whose characters give no sentence ends (Japanese-GSD: one sentence a
    paragraph) leaves every weight 0: no bias to shift, and no NaN weight or warning."""
    import warnings

    from arborparse.text.classifier import Classifier
    from arborparse.text.sentences import shift_bias

    classifier = Classifier(["inside", "end"], bits=10)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert shift_bias(classifier, 7, 1, lambda: 0.0) == 0
    assert not classifier.weights.any()


def test_the_weight_shift_bias_moves_is_the_one_the_splitter_reads():
    """`Classifier.weight_index` finds the weight the compiled classifier reads: a large
    weight put there for the bias feature and END makes every token a sentence end."""
    from arborparse.text.classifier import Classifier
    from arborparse.text.sentences import END, LABELS

    splitter = SentenceSplitter(progress=False)
    splitter.classifier = Classifier(list(LABELS), bits=12)
    tokens = ["a", "b", "c", "d"]
    assert splitter.ends(tokens).tolist() == [False, False, False, True]  # ties: "on"
    X, *_ = splitter._arrays([tokens])
    splitter.classifier.weights[splitter.classifier.weight_index(X[0, 0], END)] = 100.0
    assert splitter.ends(tokens).all()


def test_with_the_splitter_the_characters_give_the_tokens_alone():
    """A sentence end the characters would put inside a word does not split the word when
    the word-level splitter decides the sentences."""
    train, dev = unpunctuated(300, 0), unpunctuated(60, 1)
    tokenizer = Tokenizer(epochs=5, bits=16, progress=False).fit(train, dev)
    assert tokenizer.splitter is not None
    bias = tokenizer.classifier.weight_index(char_features(["x"])[1][0, 0], SENTENCE)
    tokenizer.classifier.weights[bias] += 1e6  # the characters see sentence ends everywhere
    found = tokenizer.tokenize(text_of(dev))
    assert [f for s in found for f in s.forms] == [f for s in dev for f in s.forms]
    tokenizer.splitter = None  # the characters alone: every character its own sentence
    assert len(tokenizer.tokenize(text_of(dev[:1]))) == len(text_of(dev[:1]).replace(" ", ""))
