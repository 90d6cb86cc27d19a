import functools
import io
import itertools
import re
import unicodedata

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

import arborparse
from arborparse.cli import cli
from arborparse.errors import ArborparseError
from arborparse.io import read_conllu
from arborparse.io.plain import words_sentence
from arborparse.pipeline import Pipeline
from arborparse.service.app import Limits, Service
from arborparse.text.multiword import Multiword, apply_rule, rules_of
from arborparse.text.tokenizer import (SENTENCE, TEMPLATES, TOKEN, Tokenizer, _in_capitals,
                                       char_features, paragraphs)

# "Dogs bark, don't they?" with its multiword token "don't", and "Yes." in a new paragraph
TREEBANK = """# newdoc
# newpar
# text = Dogs bark, don't they?
1\tDogs\t_\t_\t_\t_\t2\tnsubj\t_\t_
2\tbark\t_\t_\t_\t_\t0\troot\t_\tSpaceAfter=No
3\t,\t_\t_\t_\t_\t2\tpunct\t_\t_
4-5\tdon't\t_\t_\t_\t_\t_\t_\t_\t_
4\tdo\t_\t_\t_\t_\t2\tparataxis\t_\t_
5\tn't\t_\t_\t_\t_\t4\tadvmod\t_\t_
6\tthey\t_\t_\t_\t_\t4\tnsubj\t_\tSpaceAfter=No
7\t?\t_\t_\t_\t_\t2\tpunct\t_\t_

# text = The cat sleeps.
1\tThe\t_\t_\t_\t_\t2\tdet\t_\t_
2\tcat\t_\t_\t_\t_\t3\tnsubj\t_\t_
3\tsleeps\t_\t_\t_\t_\t0\troot\t_\tSpaceAfter=No
4\t.\t_\t_\t_\t_\t3\tpunct\t_\t_

# newpar
# text = Yes.
1\tYes\t_\t_\t_\t_\t0\troot\t_\tSpaceAfter=No
2\t.\t_\t_\t_\t_\t1\tpunct\t_\t_

"""


def treebank(copies=1):
    return read_conllu(io.StringIO(TREEBANK * copies))


def text_of(sentences) -> str:
    """The text the sentences spell: tokens, SpaceAfter=No, paragraphs as blank lines."""
    out = []
    for s in sentences:
        if "# newpar" in s.comments and out:
            out[-1] = out[-1].rstrip() + "\n\n"
        for r, _ in s.tokens():
            out.append(s.rows[r][1] + ("" if "SpaceAfter=No" in s.rows[r][9] else " "))
    return "".join(out).strip()


def test_the_training_text_and_its_labels():
    (first, labels), (second, _) = paragraphs(treebank())
    assert first == "Dogs bark, don't they? The cat sleeps."
    assert second == "Yes."
    ends = [first[i] for i in np.flatnonzero(labels == SENTENCE)]
    assert ends == ["?", "."]
    tokens = [first[i] for i in np.flatnonzero(labels >= TOKEN)]
    assert tokens == ["s", "k", ",", "t", "y", "?", "e", "t", "s", "."]
    assert (labels[[i for i, c in enumerate(first) if c == " "]] == -1).all()


def test_the_training_text_is_tokenized_back():
    tokenizer = Tokenizer(epochs=10, bits=16, progress=False).fit(treebank(5))
    assert tokenizer.multiword.dictionary == {"don't": ["do", "n't"]}
    assert tokenizer.multiword.rules == [("prefix", "do", ("do", "")),
                                         ("suffix", "n't", ("", "n't"))]
    text = text_of(treebank())
    out = tokenizer.tokenize(text)
    assert [s.forms for s in out] == [s.forms for s in treebank()]
    assert text_of(out) == text
    assert out[0].comments == ["# newdoc", "# newpar", "# sent_id = 1",
                               "# text = Dogs bark, don't they?"]
    assert [r[0] for r in out[0].rows][3:6] == ["4-5", "4", "5"]
    assert out[2].comments[0] == "# newpar"  # "Yes." opens the second paragraph
    assert (out[0].heads[1:] == -1).all()  # not parsed
    assert out[2].rows[-1][9] == "_"  # a paragraph's end is whitespace: no SpaceAfter=No


INVISIBLE = re.compile("[\u200b\x00]")  # a zero-width space, a control character


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab.,?! \n\tXy1é\u200b\x00")), max_size=80))
def test_any_text_comes_back_whitespace_and_invisible_characters_aside(text):
    tokenizer = Tokenizer(epochs=3, bits=14, progress=False).fit(treebank(2))
    out = tokenizer.tokenize(text)
    # no character lost or invented, none whitespace or invisible
    tokens = [s.rows[r][1] for s in out for r, _ in s.tokens()]
    assert "".join(tokens) == re.sub(r"\s", "", INVISIBLE.sub("", text))
    assert all(t and not any(c.isspace() for c in t) for t in tokens)
    # each token's span is its characters, with the invisible ones it holds or is followed by
    spans = [(a, b) for s in out for a, b in s.offsets]
    assert [INVISIBLE.sub("", text[a:b]) for a, b in spans] == tokens
    assert all(not INVISIBLE.match(text[a]) for a, _ in spans)
    # the rebuilt text is the input with runs of whitespace made one space (a zero-width
    # space is one), blank lines (between paragraphs) one blank line
    paragraphs_in = [" ".join(p.replace("\u200b", " ").replace("\x00", "").split())
                     for p in re.split(r"\n[^\S\n]*\n", text)]
    assert text_of(out) == "\n\n".join(p for p in paragraphs_in if p)


def test_invisible_characters_are_dropped_unless_the_treebank_keeps_them():
    from arborparse.text.rules import visible

    tokenizer = Tokenizer(epochs=5, bits=16, progress=False).fit(treebank(5))
    assert tokenizer.keep == ""
    text = "Dogs\u200b bark\u00ad\u200d, \u2060 \ufeffthey\u0007\u200c?"
    (sentence,) = tokenizer.tokenize(text)
    assert sentence.forms == ["Dogs", "bark", ",", "they", "?"]  # "\u2060" alone: gone
    assert "# text = Dogs bark, they?" in sentence.comments
    assert [text[a:b] for a, b in sentence.offsets] == \
        ["Dogs", "bark\u00ad\u200d", ",", "they\u0007\u200c", "?"]
    # a zero-width space parts words as a space does; the others join them
    (sentence,) = tokenizer.tokenize("Dogs\u200bba\u2060rk, they\u0007y\u00ades.")
    assert sentence.forms == ["Dogs", "bark", ",", "theyyes", "."]
    assert "# text = Dogs bark, theyyes." in sentence.comments
    # a treebank whose tokens hold U+200C (as Persian's do) keeps it, and drops the rest
    kept = read_conllu(io.StringIO(TREEBANK.replace("Dogs", "Do\u200cgs")))
    tokenizer = Tokenizer(epochs=5, bits=16, progress=False).fit(kept * 5)
    assert tokenizer.keep == "\u200c"
    (sentence,) = tokenizer.tokenize("Do\u200cgs\u200b bark.")
    assert sentence.forms == ["Do\u200cgs", "bark", "."]
    assert "# text = Do\u200cgs bark." in sentence.comments
    # ... inside a word: alone, or between spaces, it is no word of its own
    assert tokenizer.tokenize("\u200c") == tokenizer.tokenize(" \u200c\u200c ") == []
    (sentence,) = tokenizer.tokenize("Do\u200cgs \u200c bark\u200c .")
    assert sentence.forms == ["Do\u200cgs", "bark", "."]
    assert visible("\u200c\u200cDo\u200c\u200cgs\u200c\u200c bark\u200c.", "\u200c")[0] == \
        "Do\u200c\u200cgs bark."  # runs of them too, and before punctuation
    assert visible("ab\u200b\u200ccd", "\u200c")[0] == "ab cd"  # a space is no letter
    again = Tokenizer.from_parts(*tokenizer.parts(), "m.npz")
    assert again.keep == "\u200c"


def test_a_joiner_and_tags_inside_an_emoji_stay():
    from arborparse.text.rules import visible

    family = "\U0001f468\u200d\U0001f469\u200d\U0001f467"  # one emoji, three people
    assert visible(f"We {family} and a\u200db\u200d.")[0] == f"We {family} and ab."
    thumbs = "\U0001f44d\U0001f3fd\u200d\u2640\ufe0f"  # a skin tone, then a sign
    assert visible(thumbs)[0] == thumbs
    scotland = "\U0001f3f4\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f"
    assert visible(f"A {scotland} flag, a\U000e0067 tag.")[0] == f"A {scotland} flag, a tag."


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(st.sampled_from("ab.,' \t\u00a0\u200b\x1cİẞǅ日本1"), max_size=12),
                max_size=5))
def test_texts_read_together_have_the_features_of_each_read_alone(texts):
    """The characters' features of several texts at once (`char_features`, as a batch of
    paragraphs is read) are each text's own: nothing is read across their ends."""
    positions, X = char_features(texts)
    alone = [char_features([t]) for t in texts]
    assert [p.tolist() for p in positions] == [p[0].tolist() for p, _ in alone]
    assert [p.tolist() for p in positions] == [[i for i, c in enumerate(t) if not c.isspace()]
                                              for t in texts]
    assert X.dtype == np.uint32 and X.tolist() == [row for _, x in alone for row in x.tolist()]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.text(st.sampled_from("ab.,?'Xy1é"), min_size=1, max_size=6), min_size=1,
                max_size=8),
       st.lists(st.sampled_from([" ", "\n", "\r", "\r\n", "  ", " \n", "\n ", "\t", "\n\t",
                                 "\u00a0 "]), min_size=8, max_size=8))
def test_a_run_of_whitespace_is_read_as_one_space(words, spaces):
    """CR LF line ends, indents and double spaces split a text as single spaces do (the
    treebanks' texts have nothing else), its tokens' offsets still the text's own."""
    text = "".join(w + s for w, s in zip(words, spaces)).strip()
    single = " ".join(text.split())
    assert char_features([text])[1].tolist() == char_features([single])[1].tolist()
    tokenizer = _small_tokenizer()
    out, alike = tokenizer.tokenize(text), tokenizer.tokenize(single)
    assert [s.forms for s in out] == [s.forms for s in alike]
    assert [text[a:b] for s in out for a, b in s.offsets] == \
        [s.rows[r][1] for s in out for r, _ in s.tokens()]


def test_a_texts_ends_read_as_a_sentences_ends_within_a_paragraph():
    """What a character's features read one character away, or in its own chunk, is the
    same for a one-sentence text as for that sentence inside a paragraph: its ends read a
    space beyond them (a treebank's text ends once a paragraph, or once in all: the full
    stop of a one-sentence French text stayed on its last word in 68 of 200 dev sentences,
    0 since)."""
    near = [TEMPLATES.index(name) for name in (
        "bias", "c", "c raw", "c-1", "c+1", "c-1 c", "c c+1", "c-1 c c+1", "class+1",
        "class-1", "chunk", "chunk end", "chunk start", "c to end", "shape")]
    alone = char_features(["Cats sleep."])[1][:, near]
    inside = char_features(["Dogs bark. Cats sleep. Yes."])[1][:, near]
    assert alone.tolist() == inside[len("Dogsbark."):len("Dogsbark.Catssleep.")].tolist()


def test_a_treebank_without_space_between_its_sentences_reads_a_text_as_it_is():
    """Japanese and Chinese write no space between sentences: a space around a text would
    be a context such a treebank never shows, so its texts are read as they are."""
    assert Tokenizer(epochs=1, bits=12, progress=False).fit(treebank()).apart
    joined = TREEBANK.replace("7\t?\t_\t_\t_\t_\t2\tpunct\t_\t_",
                              "7\t?\t_\t_\t_\t_\t2\tpunct\t_\tSpaceAfter=No")
    tokenizer = Tokenizer(epochs=1, bits=12, progress=False).fit(
        read_conllu(io.StringIO(joined)))
    assert paragraphs(read_conllu(io.StringIO(joined)))[0][0] == \
        "Dogs bark, don't they?The cat sleeps."
    assert not tokenizer.apart
    assert Tokenizer.from_parts(*tokenizer.parts(), "m.npz").apart is False
    header, arrays = tokenizer.parts()
    del header["apart"]  # a file written before it: read as most treebanks' texts
    assert Tokenizer.from_parts(header, arrays, "m.npz").apart is True
    assert char_features(["ab."], apart=False)[1].tolist() != \
        char_features(["ab."])[1].tolist()  # a text's ends are its own


def test_a_one_sentence_text_ends_as_the_sentences_of_a_paragraph_do():
    """A treebank without paragraph marks is one paragraph: its text ends once. A text of
    one sentence is read as a sentence within it (a space before and after), so its full
    stop is split off as inside the paragraph."""
    plain = TREEBANK.replace("# newdoc\n", "").replace("# newpar\n", "")
    tokenizer = Tokenizer(epochs=10, bits=16, progress=False).fit(
        read_conllu(io.StringIO(plain * 5)))
    for text, forms in (("The cat sleeps.", ["The", "cat", "sleeps", "."]),
                        ("Dogs bark, don't they?", ["Dogs", "bark", ",", "don't", "they", "?"]),
                        ("  The cat sleeps.\r\n", ["The", "cat", "sleeps", "."])):
        (sentence,) = tokenizer.tokenize(text)
        assert [sentence.rows[r][1] for r, _ in sentence.tokens()] == forms
        assert [text[a:b] for a, b in sentence.offsets] == forms


@functools.lru_cache(maxsize=1)
def _small_tokenizer():
    return Tokenizer(epochs=3, bits=14, progress=False).fit(treebank(2))


def test_the_paragraphs_read_before_a_failing_line_are_split_first():
    """A stream of lines that fails (invalid bytes, say) within a batch: the paragraphs
    read before the failure come out first, then the error."""
    tokenizer = Tokenizer(epochs=3, bits=14, progress=False).fit(treebank(2))

    def lines():
        yield from ["Dogs bark.\n", "\n", "The cat sleeps.\n", "\n"]
        raise ArborparseError("text.txt:5: not valid UTF-8 at byte 29")
    stream = tokenizer.iter_tokenize(lines())
    assert [next(stream).forms for _ in range(2)] == [["Dogs", "bark", "."],
                                                     ["The", "cat", "sleeps", "."]]
    with pytest.raises(ArborparseError, match="text.txt:5"):
        next(stream)


def test_streams_hold_a_batch_of_paragraphs_at_a_time(monkeypatch):
    tokenizer = Tokenizer(epochs=3, bits=14, progress=False).fit(treebank(2))
    text = ["Dogs bark.\n", "\n", "The cat sleeps.\n", "\n", "Cats run.\n"]
    # a batch ends at the paragraph that reaches its size: the next one is not yet read
    monkeypatch.setattr("arborparse.text.tokenizer.BATCH_CHARACTERS", 20)
    lines = iter(text)
    stream = tokenizer.iter_tokenize(lines)
    first = next(stream)
    assert first.forms == ["Dogs", "bark", "."]
    assert next(lines) == "Cats run.\n"  # the third paragraph not yet read
    # a batch or a paragraph at a time, the same sentences
    whole = [s.rows for s in tokenizer.iter_tokenize(iter(text))]
    for size in (1, 20, 1 << 13):
        monkeypatch.setattr("arborparse.text.tokenizer.BATCH_CHARACTERS", size)
        assert [s.rows for s in tokenizer.iter_tokenize(iter(text))] == whole
    assert [len(s) for s in tokenizer.split_many(["Dogs bark.", " \u200b ", "Cats run."])] \
        == [1, 0, 1]


def test_model_parts_round_trip_and_bad_arguments():
    tokenizer = Tokenizer(epochs=3, bits=14, progress=False).fit(treebank(2))
    again = Tokenizer.from_parts(*tokenizer.parts(), "m.npz")
    text = text_of(treebank())
    assert [s.rows for s in again.tokenize(text)] == [s.rows for s in tokenizer.tokenize(text)]
    with pytest.raises(ArborparseError):
        Tokenizer(epochs=0)
    with pytest.raises(ArborparseError, match="no sentences"):
        Tokenizer(progress=False).fit([])


def test_an_unseen_token_ending_in_a_clitic_is_split():
    tokenizer = Tokenizer(epochs=5, bits=16, progress=False).fit(treebank(5))
    (sentence,) = tokenizer.tokenize("Cats won't.")
    assert sentence.forms == ["Cats", "wo", "n't", "."]
    assert [r[0] for r in sentence.rows] == ["1", "2-3", "2", "3", "4"]
    assert tokenizer.tokenize("Ant.")[0].forms == ["Ant", "."]  # "n't" needs its apostrophe


def test_a_text_in_capitals_is_cut_as_in_small_letters():
    """Treebanks hold few words in capitals: one training sentence in ten is also read in
    capitals (one more paragraph), so that a text in capitals is cut as it would be in
    small letters (without it: TH E, DOG S BAR K, N' T); a script without capitals reads
    nothing more."""
    data = paragraphs(treebank(4))
    ((text, labels),) = _in_capitals(data, apart=True)
    assert text == "DOGS BARK, DON'T THEY?"  # the tenth sentence, as it is read
    assert labels.tolist() == data[6][1][:len(text)].tolist()
    assert _in_capitals([("\u4e00\u4e8c\u3002", np.array([0, 1, 2]))] * 10, False) == []
    tokenizer = Tokenizer(epochs=5, bits=16, progress=False).fit(treebank(10))
    assert [s.forms for s in tokenizer.tokenize("THE CAT SLEEPS. DOGS BARK, DON'T THEY?")
            ] == [["THE", "CAT", "SLEEPS", "."], ["DOGS", "BARK", ",", "DO", "N'T", "THEY", "?"]]


def test_canonical_equivalents_are_read_alike():
    """Unicode's Greek question mark (U+037E) is a semicolon, as Greek treebanks write it:
    a text typed with either is read alike by the character classifier, and cut alike, its
    forms as typed."""
    greek = read_conllu(io.StringIO(TREEBANK.replace("?", ";") * 10))
    tokenizer = Tokenizer(epochs=5, bits=16, progress=False).fit(greek)
    text = "Dogs bark, don't they; The cat sleeps."
    typed = text.replace(";", "\u037e")
    assert [s.forms for s in tokenizer.tokenize(text)] == [
        ["Dogs", "bark", ",", "do", "n't", "they", ";"], ["The", "cat", "sleeps", "."]]
    assert [s.forms for s in tokenizer.tokenize(typed)] == [
        ["Dogs", "bark", ",", "do", "n't", "they", "\u037e"], ["The", "cat", "sleeps", "."]]
    positions, X = char_features([text])
    assert (char_features([typed])[1] == X).all()  # read alike, to the last feature
    assert tokenizer.canonical and not (char_features([typed], canonical=False)[1] == X).all()
    # a model file written before it reads characters as they are typed, as it did
    header, arrays = tokenizer.parts()
    del header["canonical"]
    assert not Tokenizer.from_parts(header, arrays, "old.npz").canonical


def test_pre_tokenized_sentences_get_their_multiword_tokens_split(tmp_path):
    """Tokens given one sentence per line are split into words as raw text's are; a
    sentence without a multiword token stays the object it was."""
    tokenizer = Tokenizer(epochs=5, bits=16, progress=False).fit(treebank(5))
    given = [words_sentence(["Dogs", "don't", "bark", "."], 1, True, "in.txt", 3),
             words_sentence(["The", "cat", "sleeps", "."], 2, path="in.txt", line=4)]
    first, second = tokenizer.split_tokens(iter(given))
    assert first.forms == ["Dogs", "do", "n't", "bark", "."]
    assert [r[0] for r in first.rows] == ["1", "2-3", "2", "3", "4", "5"]
    assert first.rows[1][1] == "don't" and first.comments == given[0].comments
    assert (first.path, first.line, first.heads.tolist()) == ("in.txt", 3, [-1] * 6)
    assert second is given[1]
    # the same for a pipeline's tokenized input, and the service's; a word list holds words
    nlp = Pipeline(tokenizer=tokenizer)
    assert nlp([["Dogs", "don't", "bark", "."]]).sentences[0].data.forms == given[0].forms
    path = tmp_path / "tokenizer.npz"
    nlp.save(path)
    r = CliRunner().invoke(cli, ["parse", "--model", str(path), "--input-format", "tokenized"],
                           input="Dogs don't bark .\n")
    assert r.exit_code == 0 and read_conllu(io.StringIO(r.stdout))[0].rows == first.rows
    (served,) = Service(nlp, Limits()).sentences("Dogs don't bark .\n", "tokenized")
    assert served.rows == first.rows


def test_rules_rewrite_what_the_words_do_not_spell():
    # Tamil: the clitic's vowel stands alone in the second word; Spanish: three words;
    # Hebrew: prefixes, the article unwritten
    training = [[("அமைக்கவும்", ("அமைக்கவ்", "உம்")), ("x", ("x",))],
                [("dámelo", ("da", "me", "lo")), ("y", ("y",))],
                [("בבית", ("ב", "ה", "בית")), ("z", ("z",))],
                [("DON'T", ("DO", "N'T"))]] * 5
    multiword = Multiword(epochs=5, bits=16).fit(training)
    assert multiword.rules == [  # lower case: case variants are one rule
        ("prefix", "do", ("do", "")), ("prefix", "dáme", ("da", "me", "")),
        ("prefix", "ב", ("ב", "ה", "")), ("prefix", "அமைக்கவு", ("அமைக்கவ்", "உ")),
        ("suffix", "n't", ("", "n't")), ("suffix", "ámelo", ("a", "me", "lo")),
        ("suffix", "בית", ("", "ה", "בית")), ("suffix", "ும்", ("்", "உம்"))]
    assert multiword.split([["செய்யவும்", "pámelo", "Won't", "um", "בספר"]]) == \
        [[("செய்யவ்", "உம்"), ("pa", "me", "lo"), ("Wo", "n't"), ("um",), ("ב", "ה", "ספר")]]
    suffix = ("suffix", "n't", ("", "n't"))
    assert apply_rule("can't", suffix) == ("ca", "n't")
    assert apply_rule("CAN'T", suffix) == ("CA", "N'T")  # cut from the token
    spanish = ("suffix", "ámelo", ("a", "me", "lo"))
    assert apply_rule("PÁMELO", spanish) == ("PA", "ME", "LO")
    assert apply_rule("Pámelo", spanish) == ("Pa", "me", "lo")
    assert apply_rule("בספר", ("prefix", "ב", ("ב", "ה", ""))) == ("ב", "ה", "ספר")
    assert rules_of("au", ("à", "le")) == []  # from the dictionary alone
    assert rules_of("dámelo", ("da", "me", "lo")) == [spanish, ("prefix", "dáme",
                                                                ("da", "me", ""))]


def test_a_token_seen_and_never_split_in_training_stays_whole():
    """Coptic: the possessive ``ⲡⲁ`` + noun is a rule that fits the name ``ⲡⲁⲙⲃⲱ``, seen
    once and whole among many possessives; it stays whole (the classifier alone split it),
    in a model file too, while an unseen token the rule fits is split."""
    nouns = ["".join(p) for p in itertools.permutations("ⲁⲃⲅⲇⲉⲍⲏⲑⲓⲕ", 3)][:60]
    training = [[("ⲡⲁ" + noun, ("ⲡⲁ", noun)), ("ⲡⲉ", ("ⲡⲉ",))] for noun in nouns] + \
        [[("ⲁⲡⲁ", ("ⲁⲡⲁ",)), ("ⲡⲁⲙⲃⲱ", ("ⲡⲁⲙⲃⲱ",)), ("ⲡⲉ", ("ⲡⲉ",))]]
    multiword = Multiword(epochs=1, bits=16).fit(training)
    sentence = [["ⲁⲡⲁ", "ⲡⲁⲙⲃⲱ", "ⲡⲉ", "ⲡⲁϣⲏⲣⲉ"]]
    expected = [[("ⲁⲡⲁ",), ("ⲡⲁⲙⲃⲱ",), ("ⲡⲉ",), ("ⲡⲁ", "ϣⲏⲣⲉ")]]
    assert multiword.split(sentence) == expected
    assert Multiword.from_parts(*multiword.parts()).split(sentence) == expected
    header, arrays = multiword.parts()  # a file written before: split as it was
    del header["unsplit"]
    assert Multiword.from_parts(header, arrays).split([["ⲡⲁⲙⲃⲱ"]]) == [[("ⲡⲁ", "ⲙⲃⲱ")]]


def _glued(stems, particles):
    """Tokens of particles glued to a stem, one sentence each: (token, its words)."""
    return [[("".join(p) + stem, (*p, stem))] for stem in stems for p in particles]


def test_glued_words_unseen_together_are_cut_by_characters():
    """Particles glued to stems, as Coptic writes them: a token of two particles never
    seen together is no rule's (each rule is one seen beginning), but where words begin
    can be learned from the characters; the segmenter is kept because dev says so, a form
    seen whole stays whole, and a model file holds it all."""
    stems = ["".join(p) for p in itertools.permutations("bcdeghiklm", 4)][:300]
    train = _glued(stems[:200], [("a",), ("f",), ("n",), ("a", "f"), ("n", "a")]) + \
        [[("anbo", ("anbo",))]] * 3 + [[(stem, (stem,))] for stem in stems[:100]]
    dev = _glued(stems[200:250], [("f", "a"), ("f",)])
    multiword = Multiword(epochs=5, bits=16).fit(train, dev)
    assert multiword.segmenter is not None and multiword.classifier is None
    right = multiword.dev_right_
    assert right == {"rules": 50.0, "segmenter": 100.0}  # the rule of f alone: f + astem
    sentence = [["fa" + stems[260], "anbo", stems[262], "Na" + stems[0]]]
    expected = [[("f", "a", stems[260]), ("anbo",), (stems[262],), ("N", "a", stems[0])]]
    assert multiword.split(sentence) == expected
    again = Multiword.from_parts(*multiword.parts())
    assert again.split(sentence) == expected and again.dev_right_ == right
    assert Multiword(epochs=5, bits=16).fit(train).segmenter is None  # without dev: rules
    assert Multiword(epochs=5, bits=16).fit(train, [[]]).segmenter is None  # nor empty dev
    header, arrays = multiword.parts()
    for bad in (np.zeros(0, dtype=np.float32), np.zeros((4, 4), dtype=np.float32),
                np.zeros(12, dtype=np.float32)):  # `_slot` masks by a power of two
        with pytest.raises(ValueError, match="power of two"):
            Multiword.from_parts(header, {**arrays, "segmenter": bad})


def test_the_rules_stay_where_characters_do_no_better_on_dev():
    """A dev set the rules split as well as the segmenter (here: every token seen) keeps
    the rules, and a treebank whose multiword tokens are not spelled by their words
    (French ``au`` = ``à`` + ``le``) trains no segmenter at all."""
    stems = ["".join(p) for p in itertools.permutations("bcdeghiklm", 4)][:60]
    train = _glued(stems, [("a",), ("f",)])
    multiword = Multiword(epochs=5, bits=16).fit(train, train)
    assert multiword.segmenter is None and multiword.classifier is not None
    assert multiword.dev_right_["rules"] == multiword.dev_right_["segmenter"] == 100.0
    french = [[("au", ("à", "le")), ("parc", ("parc",))]] * 5
    multiword = Multiword(epochs=5, bits=16).fit(french, french)
    assert multiword.segmenter is None and multiword.dev_right_ == {}
    assert multiword.split([["au", "lac"]]) == [[("à", "le"), ("lac",)]]


def test_turkish_dotted_capital_i_keeps_its_place():
    """``İ`` lowers to two characters in Python; the rules count it as one."""
    rule = rules_of("EVDEKİ", ("EVDE", "Kİ"))[0]
    assert rule == ("suffix", "ki", ("", "ki"))
    assert apply_rule("OKULDAKİ", rule) == ("OKULDA", "Kİ")
    assert rules_of("İab", ("İac", "b"))[0] == ("suffix", "b", ("c", "b"))
    multiword = Multiword(epochs=5, bits=16).fit([[("EVDEKİ", ("EVDE", "Kİ"))]] * 5)
    assert multiword.split([["OKULDAKİ"]]) == [[("OKULDA", "Kİ")]]


def test_dev_data_tunes_the_sentence_ends_only_when_it_helps():
    tokenizer = Tokenizer(epochs=5, bits=16, progress=False).fit(treebank(5), treebank())
    assert tokenizer.sentence_bias_ == 0  # perfect already: the smallest shift wins
    assert [s.forms for s in tokenizer.tokenize(text_of(treebank()))] == \
        [s.forms for s in treebank()]


def test_per_line_each_line_is_one_sentence():
    tokenizer = Tokenizer(epochs=5, bits=16, progress=False).fit(treebank(5))
    text = "Dogs bark. The cat sleeps.\n\n\n  Yes. Yes.\nNo\n"
    assert len(tokenizer.tokenize(text)) > 3  # split into sentences by default
    out = tokenizer.tokenize(text, per_line=True)
    assert [s.forms for s in out] == [["Dogs", "bark", ".", "The", "cat", "sleeps", "."],
                                      ["Yes", ".", "Yes", "."], ["No"]]
    assert [[c for c in s.comments if c.startswith(("# newpar", "# text"))] for s in out] == \
        [["# newpar", "# text = Dogs bark. The cat sleeps."], ["# newpar", "# text = Yes. Yes."],
         ["# text = No"]]
    for sentence in out:
        tokens = [sentence.rows[r][1] for r, _ in sentence.tokens()]
        assert [text[a:b] for a, b in sentence.offsets] == tokens
    # lines given by the caller end at a carriage return alone too (io.StringIO does not
    # cut there), as the files' lines do
    lines = ["Dogs bark. The cat sleeps.\rYes. Yes.\n", "No\r\rYes\n"]
    streamed = list(tokenizer.iter_tokenize(lines, per_line=True))
    assert [s.forms for s in streamed] == [s.forms for s in tokenizer.tokenize(
        "".join(lines), per_line=True)] == [["Dogs", "bark", ".", "The", "cat", "sleeps", "."],
                                            ["Yes", ".", "Yes", "."], ["No"], ["Yes"]]
    for lines in (["Dogs bark\r\rNo\n"], ["Dogs bark\n\nNo\r"], ["Dogs bark\n\nNo\n"],
                  ["Dogs bark\r\n", "\r\nNo"]):  # a blank line, however the lines are cut
        paragraphs = list(tokenizer.iter_tokenize(lines))
        assert ["# newpar" in s.comments for s in paragraphs] == [True, True]


WHOLE = ["https://example.com/a?b=c", "x.y@z.org", "/usr/local/bin", "3,000.50", "12:30",
         "https://x.org/don't", "12/05/2020", "1/2", "۱۳۹۹/۰۵/۱۲", "۱۲۳٫۴۵", "۱۲۳٬۴۵۶",
         "🇰🇷", "👍🏽", "👨\u200d👩\u200d👧", "1\ufe0f\u20e3"]


def test_urls_addresses_paths_and_numbers_are_one_token():
    tokenizer = Tokenizer(epochs=5, bits=16, progress=False).fit(treebank(5))
    # none in the treebank
    assert tokenizer.whole == ("url", "email", "path", "number", "slashed", "emoji")
    text = ("Dogs bark at https://example.com/a?b=c, x.y@z.org and /usr/local/bin. At 12:30 "
            "on 12/05/2020 (۱۳۹۹/۰۵/۱۲) they cost 1/2 of ۱۲۳٫۴۵ or ۱۲۳٬۴۵۶, 3,000.50 (team🇰🇷 "
            "yes👍🏽 👨\u200d👩\u200d👧 1\ufe0f\u20e3 see https://x.org/don't).")
    out = tokenizer.tokenize(text)
    tokens = [(s.rows[r][1], [s.forms[m - 1] for m in words], tuple(span))
              for s in out for (r, words), span in zip(s.tokens(), s.offsets)]
    for string in WHOLE:
        at = text.index(string)
        assert (string, [string], (at, at + len(string))) in tokens  # one word, its place
    assert [form for form, _, _ in tokens][-3:] == ["https://x.org/don't", ")", "."]
    # a URL or an address glued to words of another script ends where that script begins
    # (Korean's particles, Chinese's words): a letter that is not ASCII is no part of it
    text = "시스템(http://www.khmais.net)에 x.y@z.org에게 访问http://example.com获取"
    with pytest.warns(UserWarning, match="never occur in the model's training text"):
        out = tokenizer.tokenize(text)
    tokens = [(s.rows[r][1], tuple(span)) for s in out for (r, _), span in
              zip(s.tokens(), s.offsets)]
    for string in ("http://www.khmais.net", "x.y@z.org", "http://example.com"):
        at = text.index(string)
        assert (string, (at, at + len(string))) in tokens
    # where the treebank cuts such strings, the classifier decides
    cut = TREEBANK.replace("1\tYes\t_\t_\t_\t_\t0\troot\t_\tSpaceAfter=No",
                           "1\t12\t_\t_\t_\t_\t0\troot\t_\tSpaceAfter=No\n"
                           "2\t:\t_\t_\t_\t_\t1\tpunct\t_\tSpaceAfter=No\n"
                           "3\t30\t_\t_\t_\t_\t1\tnummod\t_\tSpaceAfter=No")
    cut = cut.replace("2\t.\t_\t_\t_\t_\t1\tpunct", "4\t.\t_\t_\t_\t_\t1\tpunct")
    tokenizer = Tokenizer(epochs=5, bits=16, progress=False).fit(read_conllu(
        io.StringIO(cut)) * 5)
    assert tokenizer.whole == ("url", "email", "path", "slashed", "emoji")
    assert Tokenizer.from_parts(*tokenizer.parts(), "m.npz").whole == tokenizer.whole
    assert tokenizer.tokenize("12:30.")[0].forms == ["12", ":", "30", "."]


SYLLABLES = """# text = Tôi ở Hà Nội.
1\tTôi\t_\t_\t_\t_\t2\tnsubj\t_\t_
2\tở\t_\t_\t_\t_\t0\troot\t_\t_
3\tHà Nội\t_\t_\t_\t_\t2\tobj\t_\tSpaceAfter=No
4\t.\t_\t_\t_\t_\t2\tpunct\t_\t_

# text = Anh ở Sài Gòn.
1\tAnh\t_\t_\t_\t_\t2\tnsubj\t_\t_
2\tở\t_\t_\t_\t_\t0\troot\t_\t_
3\tSài Gòn\t_\t_\t_\t_\t2\tobj\t_\tSpaceAfter=No
4\t.\t_\t_\t_\t_\t2\tpunct\t_\t_

"""


def test_a_treebank_whose_tokens_hold_spaces_lets_spaces_join_tokens(tmp_path):
    """Vietnamese writes a word's syllables apart: where enough training tokens hold a
    space, the classifier may keep a token going over one."""
    train = read_conllu(io.StringIO(SYLLABLES * 10))
    tokenizer = Tokenizer(epochs=10, bits=16, progress=False).fit(train)
    assert tokenizer.spaces
    out = tokenizer.tokenize("Tôi ở Hà Nội. Anh ở Sài Gòn.")
    assert [s.forms for s in out] == [["Tôi", "ở", "Hà Nội", "."], ["Anh", "ở", "Sài Gòn", "."]]
    assert [s.rows[2][1] for s in out] == ["Hà Nội", "Sài Gòn"]
    path = tmp_path / "m.npz"
    Pipeline(tokenizer=tokenizer).save(path)
    assert arborparse.load(path).tokenizer.spaces
    plain = Tokenizer(epochs=5, bits=16, progress=False).fit(treebank(5))
    assert not plain.spaces  # elsewhere whitespace ends a token, as before
    assert plain.tokenize("Dogs bark.")[0].forms == ["Dogs", "bark", "."]


def test_no_token_starts_with_a_combining_mark():
    from arborparse.text.tokenizer import INSIDE, SENTENCE, TOKEN, _keep_marks

    text = "Cafe\u0301 na\u0308ive."  # C a f e ◌́ | n a ◌̈ i v e .
    where = np.array([i for i, c in enumerate(text) if not c.isspace()])
    labels = np.full(len(where), INSIDE)
    labels[[3, 6, 10, 11]] = [TOKEN, TOKEN, TOKEN, SENTENCE]  # ends before both marks
    _keep_marks(labels, text, where)
    I, T, S = INSIDE, TOKEN, SENTENCE
    assert labels.tolist() == [I, I, I, I, T, I, I, T, I, I, T, S]  # moved onto the marks
    tokenizer = Tokenizer(epochs=3, bits=14, progress=False).fit(treebank(2))
    for sentence in tokenizer.tokenize("Dogs bark\u0301 . Cafe\u0301\u0301 e\u0301."):
        assert not any(unicodedata.category(f[0]).startswith("M") for f in sentence.forms)


def _lowercase_treebank(letters: str, sentences: int, seed: int) -> str:
    """Sentences of made-up lowercase words, each with an abbreviation of three-letter
    runs between dots (one token, ``abc.def.``) and ending in a full stop of its own."""
    rng = np.random.default_rng(seed)

    def word(n):
        return "".join(rng.choice(list(letters), n))
    out = []
    for k in range(sentences):
        forms = [word(5), word(4), f"{word(3)}.{word(3)}.", word(6), word(5)]
        rows = [f"{i}\t{form}\t_\t_\t_\t_\t{0 if i == 1 else 1}\t{'root' if i == 1 else 'dep'}"
                f"\t_\t{'SpaceAfter=No' if i == len(forms) else '_'}"
                for i, form in enumerate(forms, 1)]
        rows.append(f"{len(forms) + 1}\t.\t_\t_\t_\t_\t1\tpunct\t_\t_")
        out.append(f"# text = {' '.join(forms)}.\n" + "\n".join(rows) + "\n\n")
    return "".join(out)


def test_an_abbreviation_never_seen_is_known_by_its_shape():
    """A script without case (as Tamil's ``ஐ.நா.``): an abbreviation whose letters the
    training text never held ends a token, not a sentence, because it looks like those it
    did hold."""
    train = read_conllu(io.StringIO(_lowercase_treebank("abcdefghijklm", 200, 0)))
    tokenizer = Tokenizer(epochs=5, bits=18, progress=False).fit(train)
    unseen = read_conllu(io.StringIO(_lowercase_treebank("nopqrstuvwxyz", 20, 1)))
    found = tokenizer.tokenize(text_of(unseen))
    assert [s.forms for s in found] == [s.forms for s in unseen]


def test_a_shape_counts_a_letter_with_its_marks_as_one():
    from arborparse.text.tokenizer import _shape
    assert _shape("டி.வி.") == _shape("ஐ.நா.") == _shape("a.b.") != _shape("டி.எம்.")
    assert _shape("é.") == _shape("e\u0301.") == _shape("x.")  # composed or not
    assert _shape("U.N.") != _shape("u.n.") and _shape("1995.") != _shape("1.")


def test_a_text_in_characters_training_never_had_is_warned_of(ud):
    """Another script, or marks the treebank leaves out (Coptic's supralinear strokes), are
    read as unknown characters: a text's first batch whose letters and marks are 2 % or more
    such (five at least; or five times the share new to the model in its training text's
    last tenth, for scripts of thousands of characters) is warned of, naming the commonest;
    the model's own language is not, nor is anything read by a model file written before
    the alphabet."""
    import warnings

    from arborparse.text.tokenizer import _alphabet, paragraphs

    sentences = read_conllu(ud / "UD_English-EWT" / "en_ewt-ud-dev.conllu")
    tokenizer = Tokenizer(epochs=1, bits=16, progress=False).fit(sentences[:200])
    nlp = Pipeline(tokenizer=tokenizer)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        nlp.parse_text("\n\n".join(t for t, _ in paragraphs(sentences[200:260])))
    with pytest.warns(UserWarning, match=r"^100\.0% of the text's letters never occur in "
                                         r"the model's training text, such as 'а' \(U\+0430 "
                                         r"CYRILLIC SMALL LETTER A\) ×3"):
        nlp.parse_text("Собака лает.")
    # shown at the caller's line, however deep the generator that found it
    for call in (lambda: nlp.parse_text("Собака лает."), lambda: nlp("Собака лает."),
                 lambda: list(nlp.pipe(["Собака лает."])),
                 lambda: list(nlp.iter_parse_text(["Собака лает.\n"]))):
        with pytest.warns(UserWarning, match="never occur") as caught:
            call()
        assert [w.filename for w in caught] == [__file__]
    header, arrays = tokenizer.parts()
    del header["alphabet"], header["unseen_rate"]
    older = Tokenizer.from_parts(header, arrays, "older.npz")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Pipeline(tokenizer=older).parse_text("Собака лает.")
    assert _alphabet(["ab", "ab", "ab", "ab", "ab", "ab", "ab", "ab", "ab", "c-d"]) == \
        ("abcd", 1.0)  # the last tenth wholly new (punctuation not counted)


def test_a_text_in_another_unicode_form_is_told_to_normalize():
    """The treebank's letters decomposed (Unicode NFD: Hangul as its jamo, as macOS writes
    it) are letters the model never read: the warning says which form to normalize to."""
    import unicodedata

    korean = "".join(f"# text = 나는 학교에 갔다{i}.\n1\t나는\t_\t_\t_\t_\t3\tnsubj\t_\t_\n"
                     f"2\t학교에\t_\t_\t_\t_\t3\tobl\t_\t_\n"
                     f"3\t갔다{i}\t_\t_\t_\t_\t0\troot\t_\tSpaceAfter=No\n"
                     f"4\t.\t_\t_\t_\t_\t3\tpunct\t_\t_\n\n" for i in range(20))
    tokenizer = Tokenizer(epochs=2, bits=14, progress=False).fit(read_conllu(
        io.StringIO(korean)))
    text = unicodedata.normalize("NFD", "나는 학교에 갔다.")
    with pytest.warns(UserWarning, match=r"never occur .*U\+1102 HANGUL .*the treebank "
                                         r"writes the same letters in Unicode's NFC form: "
                                         r"normalize the text to it first \(unicodedata"
                                         r"\.normalize\('NFC', text\) in Python, uconv -x "
                                         r"any-nfc on the command line\)$"):
        tokenizer.tokenize(text)
    with pytest.warns(UserWarning, match=r"written as its treebank writes it\?$"):
        tokenizer.tokenize("Собака лает.")
