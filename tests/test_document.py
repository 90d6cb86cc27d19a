"""Calling a pipeline: every input kind and option on a small model of each family;
documents whose offsets slice back to the text; CoNLL-U as the command line writes it;
the conllu package and spaCy."""

import io
import json
import re
import shutil

import numpy as np
import pytest
from click.testing import CliRunner
from treebanks import separable

import arborparse
from arborparse.cli import cli
from arborparse.document import Document
from arborparse.errors import ArborparseError
from arborparse.io import read_conllu
from arborparse.options import OptionError
from arborparse.pipeline import Pipeline

TEXT = ("The dog can't sleep.\r\nIt is late 😀 , and we don't care.\n\n\n"
        "A second  paragraph here.\nIts  second line.\n")


@pytest.fixture(scope="module")
def english(english_pipeline):
    return arborparse.load(english_pipeline)


@pytest.fixture(scope="module")
def families():
    """A small pipeline of each family (a tagger in front where the parser reads tags),
    trained on separable data."""
    data = separable(2)
    return {
        "linear": arborparse.train(data, family="linear", components="tagger,parser",
                                   progress=False, folds=2, trainer="perceptron", epochs=2,
                                   hash_bits=12, order=1),  # order 1: k-best trees
        "isbn": arborparse.train(data, family="isbn", components="tagger,parser",
                                 progress=False, folds=2, hidden=8, epochs=2, cutoff=1),
        "neural": arborparse.train(data, family="neural", components="parser",
                                   progress=False, hidden=8, layers=1, epochs=2,
                                   batch_size=4, word_dim=8),
    }


def test_offsets_slice_back_to_the_text(english):
    doc = english(TEXT)
    assert doc.text == TEXT and len(doc.sentences) >= 3
    for sentence in doc.sentences:
        for token in sentence.tokens:
            assert TEXT[token.start_char:token.end_char] == token.text
        for word in sentence.words:
            assert TEXT[word.start_char:word.end_char] == word.token.text
        span = TEXT[sentence.start_char:sentence.end_char]  # the sentence's own text
        assert span.startswith(sentence.tokens[0].text) and \
            span.endswith(sentence.tokens[-1].text)
        assert span.split() == sentence.text.split()
    assert any(len(t.words) > 1 for s in doc.sentences for t in s.tokens)  # can't, don't
    assert "😀" in [w.text for w in doc.words]
    assert doc[1] is doc.sentences[1] and doc[-1][0] is doc.sentences[-1].words[0]
    as_json = json.loads(json.dumps(doc.to_dict()))  # plain lists and dicts
    assert as_json["text"] == TEXT and len(as_json["sentences"]) == len(doc.sentences)
    for ours, theirs in zip(doc.words, (w for s in as_json["sentences"] for w in s["words"])):
        assert theirs == {"id": ours.id, "form": ours.text, "lemma": ours.lemma,
                          "upos": ours.upos, "xpos": ours.xpos, "feats": ours.feats,
                          "head": ours.head, "deprel": ours.deprel, "deps": ours.deps,
                          "misc": ours.misc, "start_char": ours.start_char,
                          "end_char": ours.end_char}


def test_invisible_characters_are_no_words_and_offsets_stay_right(english):
    text = "The\u200b dog\u00ad barks .\ufeff \u200b\u2060 It\u200d runs\x07 home."
    doc = english(text)
    assert [w.text for w in doc.words] == ["The", "dog", "barks", ".", "It", "runs", "home",
                                           "."]
    assert [s.text for s in doc.sentences] == ["The dog barks .", "It runs home."]
    invisible = re.compile("[\u200b\u00ad\ufeff\u2060\u200d\x07]")
    for token in (t for s in doc.sentences for t in s.tokens):
        assert invisible.sub("", text[token.start_char:token.end_char]) == token.text
        assert text[token.start_char] == token.text[0]
    assert "\u200b" not in doc.to_conllu() and "\ufeff" not in doc.to_conllu()


def test_to_conllu_is_what_the_command_line_writes(english, english_pipeline, tmp_path):
    path = tmp_path / "in.txt"
    path.write_bytes(TEXT.encode("utf-8"))
    for options, flags in (({}, []), ({"marginals": True, "decode": "mbr"},
                                      ["--marginals", "--decode", "mbr"])):
        r = CliRunner().invoke(cli, ["parse", "--model", str(english_pipeline),
                                     "--input-format", "text", str(path), *flags])
        assert r.exit_code == 0, r.output
        assert english(TEXT, **options).to_conllu() == r.output
    back = Document.from_conllu(r.output)
    assert back.to_conllu() == r.output
    assert [w.head_prob for w in back.words] == [w.head_prob for w in english(
        TEXT, marginals=True, decode="mbr").words]


@pytest.mark.parametrize("family", ["linear", "isbn", "neural"])
def test_every_input_kind_and_option(families, family):
    nlp = families[family]
    words = [[f for f in s.forms] for s in separable(1)]
    doc = nlp(words)
    assert [[w.text for w in s.words] for s in doc.sentences] == words
    assert all(w.start_char is None and w.head is not None for w in doc.words)
    assert all(s.start_char is None and s.end_char is None for s in doc.sentences)
    again = nlp(separable(1))  # CoNLL-U sentences, with their own tags and lemmas
    assert [w.text for w in again.words] == [w.text for w in doc.words]
    assert all(w.head is not None for w in again.words)
    assert nlp(doc.sentences).to_conllu() == nlp(doc).to_conllu()
    docs = list(nlp.pipe([words, words[:2]], batch_size=1))
    assert [len(d.sentences) for d in docs] == [len(words), 2]
    assert docs[0].to_conllu() == doc.to_conllu()
    can = nlp.capabilities
    if can.marginals:
        doc = nlp(words, marginals=True, kbest=2, decode="mbr")
        for s in doc.sentences:
            assert all(0 <= w.head_prob <= 1 and 0 <= w.label_prob <= 1 for w in s.words)
            assert np.allclose(s.head_marginals[:, 1:].sum(axis=0), 1, atol=1e-6)
            assert len(s.kbest) == min(2, len(s.kbest)) and \
                s.kbest[0].probability >= s.kbest[-1].probability
        for ours, theirs in zip(doc.sentences, json.loads(json.dumps(doc.to_dict()))[
                "sentences"]):
            assert [w["heads"] for w in theirs["words"]] == \
                [[round(float(p), 6) for p in ours.head_marginals[:, m]]
                 for m in range(1, len(ours) + 1)]
            assert theirs["kbest"] == [{"probability": t.probability,
                                        "heads": t.heads[1:].tolist(),
                                        "deprels": t.deprels} for t in ours.kbest]
            assert "start_char" not in theirs["words"][0]  # pre-tokenized: no offsets
    else:
        with pytest.raises(OptionError, match=r"marginals=True does not apply to this isbn "
                                              r"model \(its options: retag, keep_tags, "
                                              r"beam, branching\)"):
            nlp(words, marginals=True)
        with pytest.raises(OptionError, match="kbest=2 does not apply"):
            nlp(words, kbest=2)
        assert nlp(words, beam=2).to_conllu()
    if not can.beam:
        with pytest.raises(OptionError, match=f"beam=3 does not apply to this {family} model"):
            nlp(words, beam=3)
    with pytest.raises(OptionError, match="decode='max-z' does not apply"):
        nlp(words, decode="max-z")
    sentences = [s.data for s in doc.sentences]  # parse takes __call__'s name for decode_as
    for name in ("decode", "decode_as"):  # a refusal in the name the caller gave
        with pytest.raises(OptionError, match=f"^{name}='max-z' does not apply"):
            nlp.parse(sentences, **{name: "max-z"})
    with pytest.raises(OptionError, match="decode_as by another name"):
        nlp.parse(sentences, decode="map", decode_as="map")
    assert nlp.parse(sentences, decode=None, decode_as=None)  # None: the default
    if "decode_as" in can.parse_options():
        assert [s.to_text() for s in nlp.parse(sentences, decode="map")] == \
            [s.to_text() for s in nlp.parse(sentences, decode_as="map")]
    if can.mbr:  # a misspelt option is answered in the call's own names
        with pytest.raises(OptionError, match=r"decod='mbr' does not apply to this \w+ "
                                              r"model: did you mean decode\? \(its options: "
                                              r"[^)]*\bdecode\b"):
            nlp(words, decod="mbr")
    with pytest.raises(ArborparseError, match="no tokenizer.*give a list of word lists"):
        nlp("Raw text needs a tokenizer.")
    for parser in (nlp, nlp.parser):  # a str is no stream of sentences, in any family
        with pytest.raises(TypeError, match=r"^parse takes an iterable of Sentence .*, not "
                                            r"str: for raw text call parse_text"):
            parser.parse("The dog")
        with pytest.raises(TypeError, match=r"^parse takes Sentence objects .*; item 2 is "
                                            r"list: "):
            parser.parse([separable(1)[0], ["The", "dog"]])


def test_raw_text_to_a_parser_of_tagged_words_asks_for_what_it_reads(families):
    """A parser without a tokenizer or a tagger, whose words need tags: raw text is refused
    asking for tagged sentences (words alone would be refused in turn), which it reads."""
    nlp = Pipeline(parser=families["linear"].parser)
    with pytest.raises(ArborparseError, match=r"no tokenizer.*give a list of Sentence whose "
                                              r"words have tags .*no tagger either"):
        nlp("Raw text needs a tokenizer.")
    with pytest.raises(ArborparseError, match="no tags"):
        nlp([["Raw", "text"]])
    assert nlp(separable(1)).sentences


def test_wrong_inputs_are_refused(english):
    for wrong in (3, [1, 2], {"text": "x"}, [["a", 1]]):
        with pytest.raises(TypeError, match="a pipeline takes a str"):
            english(wrong)
    with pytest.raises(TypeError, match=r"got a list of str \(one sentence's words\? give "
                                        r"a list of word lists"):
        english(["The", "dog"])
    with pytest.raises(TypeError, match=r"got a list of list, and sentence 2 holds 5 \(int\) "
                                        r"where a word \(a str\) should be$"):
        english([["The", "dog"], ["It", 5]])
    for words in ([["a", ""]], [["a\rb", "c"]], [["a\nb"]], [["a\tb"]]):
        with pytest.raises(ArborparseError, match="words must be non-empty, without tabs or "
                                                  "line ends"):
            english(words)  # CoNLL-U could not hold them
    with pytest.raises(ArborparseError, match=r"^the text holds a lone surrogate \(U\+D800, "
                                              r"character 3\), which is not a character$"):
        english("a \ud800 b")
    with pytest.raises(ArborparseError, match=r"^sentence 2 holds a lone surrogate \(U\+DC80"):
        english([["a"], ["b", "\udc80"]])
    for parse in (english.parse_text, lambda text: list(english.iter_parse_text([text]))):
        with pytest.raises(ArborparseError, match=r"^the paragraph 'a \\ud800 b' holds a lone "
                                                  r"surrogate \(U\+D800, character 3\)"):
            parse("a \ud800 b")  # found where the tokenizer reads its characters
        with pytest.raises(ArborparseError, match=r"^the paragraph 'a  \\ud800 b' holds a "
                                                  r"lone surrogate \(U\+D800, character 4\)"):
            parse("a  \ud800 b")  # where a run of whitespace is read as one space
    with pytest.raises(ArborparseError, match=r"^the CoNLL-U text holds a lone surrogate"):
        Document.from_conllu("1\ta\ud800\t_\t_\t_\t_\t_\t_\t_\t_\n\n")
    with pytest.raises(TypeError, match=r"^parse_text takes a str, not bytes: decode it"):
        english.parse_text(b"The dog barks.")
    with pytest.raises(TypeError, match=r"^from_conllu takes a str, not bytes: decode it"):
        Document.from_conllu(b"1\ta\t_\t_\t_\t_\t_\t_\t_\t_\n\n")
    with pytest.raises(TypeError, match=r"^iter_parse_text takes an iterable of lines .*, "
                                        r"not str, whose lines would be its characters"):
        english.iter_parse_text("The dog barks.")
    with pytest.raises(TypeError, match=r"^a model file is named by a path \(a str or "
                                        r"pathlib.Path\), not NoneType$"):
        arborparse.load(None)
    conllu = english("The dog barks.").to_conllu()
    with pytest.raises(ArborparseError, match=r"^<text>:1: looks like CoNLL-U \(a \"# "):
        english(conllu)  # as the command line and the service refuse it
    assert english(Document.from_conllu(conllu).sentences).to_conllu() == conllu
    with pytest.raises(TypeError, match="pipe takes an iterable of inputs, not one str"):
        list(english.pipe("abc"))
    for size in (0, -1, 2.5, True):
        with pytest.raises(ArborparseError, match=rf"^batch_size={size!r}: give an integer"):
            list(english.pipe(["A dog."], batch_size=size))
    assert len(english("").sentences) == 0 and len(english([]).sentences) == 0


def test_the_conllu_package_reads_and_writes_what_we_do(english):
    conllu = pytest.importorskip("conllu")
    doc = english(TEXT, marginals=True)
    parsed = conllu.parse(doc.to_conllu())
    assert len(parsed) == len(doc.sentences)
    for theirs, ours in zip(parsed, doc.sentences):
        words = [t for t in theirs if isinstance(t["id"], int)]
        assert [t["form"] for t in words] == [w.text for w in ours.words]
        assert [t["head"] for t in words] == [w.head for w in ours.words]
        back = Document.from_conllu(theirs.serialize()).sentences[0]
        assert [w.deprel for w in back.words] == [w.deprel for w in ours.words]
        assert [w.head_prob for w in back.words] == [w.head_prob for w in ours.words]


def test_spacy_both_ways(english, english_pipeline, tmp_path):
    spacy = pytest.importorskip("spacy")
    import arborparse.spacy

    ours = english("The dog can't sleep. It is late.", marginals=True)
    nlp = arborparse.spacy.load(english_pipeline, lang="en")
    doc = nlp("The dog can't sleep. It is late.")
    assert [t.text for t in doc] == [w.text for w in ours.words]
    assert len(list(doc.sents)) == len(ours.sentences)
    offset, heads = 0, []
    for sentence in ours.sentences:
        heads += [offset + (w.head - 1 if w.head else w.id - 1) for w in sentence.words]
        offset += len(sentence.words)
    assert [t.head.i for t in doc] == heads
    assert [t.dep_ for t in doc] == [w.deprel for w in ours.words]
    assert [t.pos_ for t in doc] == [w.upos for w in ours.words]
    assert [t._.head_prob for t in doc] == [w.head_prob for w in ours.words]
    assert "<svg" in spacy.displacy.render(doc, style="dep")

    blank = spacy.blank("en")
    blank.add_pipe("arborparse_parser", config={"model": str(english_pipeline)})
    doc = blank("The dog barks loudly")
    ours = english([[t.text for t in doc]], marginals=True)
    assert [t.head.i for t in doc] == [w.head - 1 if w.head else w.id - 1 for w in ours.words]
    assert [t.dep_ for t in doc] == [w.deprel for w in ours.words]
    assert "<svg" in spacy.displacy.render(doc, style="dep")
    doc = blank("  The dog barks")  # leading whitespace: a token of its own, not a sentence
    assert doc[0].is_space and doc[0].head.i == 1 and doc[0].dep_ == "dep"
    assert doc[0].pos_ == "SPACE" and [t.pos_ for t in doc[1:]] == [
        w.upos for w in english([["The", "dog", "barks"]]).words]
    assert len(list(doc.sents)) == 1
    doc = blank("   ")  # whitespace alone
    assert [(t.pos_, t.head.i, t.dep_) for t in doc] == [("SPACE", 0, "")]
    # whitespace tokens a Doc was made with: before the first word they hang from it, and
    # without words the first is the root
    from spacy.tokens import Doc

    parse = blank.get_pipe("arborparse_parser")
    doc = parse(Doc(blank.vocab, words=["\n", "  ", "The", "dog", "\n"],
                    spaces=[False, False, True, False, False]))
    assert [t.head.i for t in doc][:2] == [2, 2] and doc[4].head.i == 3
    assert [t.pos_ for t in doc if t.is_space] == ["SPACE"] * 3
    doc = parse(Doc(blank.vocab, words=["\n", "  ", "\t"], spaces=[False] * 3))
    assert [(t.head.i, t.dep_) for t in doc] == [(0, ""), (0, "dep"), (1, "dep")]
    with pytest.raises(ArborparseError, match="give the model file"):
        spacy.blank("en").add_pipe("arborparse_parser")
    # a model whose parser reads tags it has no tagger for is refused where it is added
    Pipeline(parser=arborparse.load(english_pipeline).parser).save(tmp_path / "parser.npz")
    with pytest.raises(ArborparseError, match="parser.npz has no tagger, and its parser reads "
                       "tags, which spaCy's tokens lack"):
        spacy.blank("en").add_pipe("arborparse_parser",
                                   config={"model": str(tmp_path / "parser.npz")})


FRENCH = """# text = Il parle du chat.
1\tIl\til\tPRON\t_\t_\t2\tnsubj\t_\t_
2\tparle\tparler\tVERB\t_\t_\t0\troot\t_\t_
3-4\tdu\t_\t_\t_\t_\t_\t_\t_\t_
3\tde\tde\tADP\t_\t_\t5\tcase\t_\t_
4\tle\tle\tDET\t_\t_\t5\tdet\t_\t_
5\tchat\tchat\tNOUN\t_\t_\t2\tobl\t_\tSpaceAfter=No
6\t.\t.\tPUNCT\t_\t_\t2\tpunct\t_\t_

"""


def test_spacy_keeps_the_text_unless_words_do_not_spell_their_token(english_pipeline,
                                                                    tmp_path):
    """The Doc's text is the text given, its whitespace too (spaCy's whitespace tokens);
    where a multiword token's words do not spell it (French du: de le), they stand a
    space apart and a warning says so."""
    pytest.importorskip("spacy")
    import arborparse.spacy
    from arborparse.text.tokenizer import Tokenizer

    text = "  The dog can't sleep.\r\nIt is  late. \n"
    doc = arborparse.spacy.load(english_pipeline, lang="en")(text)
    assert doc.text == text and len(list(doc.sents)) == 2
    assert all(text[t.idx:t.idx + len(t.text)] == t.text for t in doc)
    assert [t.text for t in doc if t.is_space] == ["  ", "\r\n", " ", "\n"]
    assert all(t.dep_ == "dep" and t.head.i == max(t.i - 1, 1) for t in doc if t.is_space)
    assert all(t.pos_ == "SPACE" for t in doc if t.is_space)
    tokenizer = Tokenizer(epochs=5, bits=16, progress=False).fit(read_conllu(
        io.StringIO(FRENCH * 5)))
    Pipeline(tokenizer=tokenizer).save(tmp_path / "fr.npz")
    nlp = arborparse.spacy.load(tmp_path / "fr.npz", lang="fr")
    with pytest.warns(UserWarning, match=r"1 of the text's are words that do not spell "
                                         r"them \(du \(de le\)\)"):
        doc = nlp("Il parle du chat.")
    assert doc.text == "Il parle de le chat." and len(doc) == 6


def test_spacy_pipelines_save_and_load_back(english_pipeline, tmp_path):
    spacy = pytest.importorskip("spacy")
    import arborparse.spacy

    copy = tmp_path / "en.npz"
    shutil.copy(english_pipeline, copy)
    nlp = arborparse.spacy.load(copy, lang="en")
    nlp.to_disk(tmp_path / "sp")
    data = nlp.to_bytes()
    text = "The dog can't sleep. It is late."
    parsed = [(t.text, t.head.i, t.dep_, t._.head_prob) for t in nlp(text)]
    again = arborparse.spacy.load(english_pipeline, lang="en").from_disk(tmp_path / "sp")
    assert [(t.text, t.head.i, t.dep_, t._.head_prob) for t in again(text)] == parsed
    copy.unlink()  # the folder holds the model: spaCy alone reads it back, from disk or bytes
    for again in (spacy.load(tmp_path / "sp"),
                  arborparse.spacy.load(english_pipeline, lang="en").from_bytes(data)):
        assert [(t.text, t.head.i, t.dep_, t._.head_prob) for t in again(text)] == parsed
    with pytest.raises(OptionError, match="kbest=0 must be an integer >= 1"):
        arborparse.spacy.load(english_pipeline, kbest=0)  # at once, not at the first text
    with pytest.raises(ArborparseError, match="no such model file"):
        arborparse.spacy.load(tmp_path / "missing.npz")
    with pytest.raises(ArborparseError, match=r"^spaCy has no language 'mt': leave lang out"):
        arborparse.spacy.load(english_pipeline, lang="mt")


def test_the_subpackages_are_there_after_import_arborparse_alone():
    """`arborparse.document.Document`, `arborparse.render.svg` and the like, as the docs
    write them, work after a bare `import arborparse` (a fresh interpreter: this one has
    imported them already); a name that is no subpackage is an AttributeError."""
    import subprocess
    import sys

    code = ("import arborparse\n"
            "assert arborparse.document.Document.from_conllu\n"
            "assert arborparse.render.svg and arborparse.eval.evaluate\n"
            "try:\n    arborparse.nothing\nexcept AttributeError as e:\n    print(e)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout == "module 'arborparse' has no attribute 'nothing'\n"


def test_to_dict_keeps_multiword_tokens_and_sentence_offsets(english):
    """A multiword token's surface form, which none of its words holds, and where each
    sentence starts and ends in the text."""
    conllu = ("# text = du vin\n1-2\tdu\t_\t_\t_\t_\t_\t_\t_\t_\n"
              "1\tde\tde\tADP\t_\t_\t3\tcase\t_\t_\n2\tle\tle\tDET\t_\t_\t3\tdet\t_\t_\n"
              "3\tvin\tvin\tNOUN\t_\t_\t0\troot\t_\t_\n\n")
    sentence = Document.from_conllu(conllu).to_dict()["sentences"][0]
    assert sentence["multiword_tokens"] == [{"id": "1-2", "text": "du", "words": [1, 2]}]
    assert "start_char" not in sentence  # no text, no offsets
    said = english(TEXT).to_dict()["sentences"]
    for s in said:
        assert (s["start_char"], s["end_char"]) == (s["words"][0]["start_char"],
                                                    s["words"][-1]["end_char"])
    (cant,) = said[0]["multiword_tokens"]
    assert cant["text"] == "can't" == TEXT[cant["start_char"]:cant["end_char"]]
    assert [w["form"] for w in said[0]["words"] if w["id"] in cant["words"]] == ["ca", "n't"]
