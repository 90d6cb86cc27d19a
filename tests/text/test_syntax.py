import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from oracles import _distribution, all_trees, scores_of
from text.test_tokenizer import text_of, treebank

import arborparse
from arborparse import trees
from arborparse.io.conllu import FEATS, LEMMA, UPOS, XPOS, read_conllu
from arborparse.io.model_files import ModelFileError
from arborparse.io.plain import words_sentence
from arborparse.linear.model import Encoded
from arborparse.pipeline import Pipeline
from arborparse.text.syntax import (GAIN, MARGIN_ONLY, STRIDE, WINDOW, SyntaxEnds, crossing,
                                    window_parser, windows)
from arborparse.text.tokenizer import Tokenizer


def small_parser(decoder="mst", seed=4, **options):
    """A linear parser of random weights (what a saved view needs)."""
    from arborparse.linear.model import LinearModel
    from arborparse.linear.parser import LinearParser

    weights = np.random.default_rng(seed).standard_normal(1 << 12).astype(np.float32) * 0.3
    model = LinearModel(weights, [f"l{i}" for i in range(4)], **options)
    return LinearParser(model, decoder, single_root=False)


def chained(words):
    """Marginals of certain trees: each word on the one before, a word after "." on the
    root (so no arc passes a sentence end)."""
    n = len(words)
    mu = np.zeros((n + 1, n + 1))
    for m in range(1, n + 1):
        mu[0 if m == 1 or words[m - 2] == "." else m - 1, m] = 1.0
    return mu


def test_no_arc_passes_a_sentence_end_every_arc_passes_the_others():
    words = (["a", "b", "c", "."] * 20)[:75]  # several windows
    assert len(words) > WINDOW + 2 * STRIDE
    found = crossing(len(words), lambda spans: (chained(words[a:b]) for a, b in spans))
    expected = [0.0 if w == "." else 1.0 for w in words]
    expected[-1] = 0.0  # nothing after the last word
    assert found == pytest.approx(expected)
    assert crossing(1, lambda spans: []).tolist() == [0.0]
    assert crossing(0, lambda spans: []).tolist() == []


@settings(max_examples=15, deadline=None)
@given(st.integers(2, 5), st.integers(0, 10_000))
def test_the_expected_crossing_arcs_match_enumeration(n, seed):
    """One window: Σ over multi-root trees of P(tree) × the arcs over each gap."""
    S = np.random.default_rng(seed).normal(0, 2, (n + 1, n + 1))
    found = crossing(n, lambda spans: [trees.marginals(S, False, False) for _ in spans])
    every = all_trees(n, False, False)
    _, p, _ = _distribution(S, every, scores_of(S, every))
    m = np.arange(1, n + 1)
    for gap in range(1, n):  # after word `gap` (1-based)
        over = ((every[:, 1:] > 0) & ((np.minimum(every[:, 1:], m) <= gap)
                                      & (np.maximum(every[:, 1:], m) > gap))).sum(axis=1)
        assert found[gap - 1] == pytest.approx(p @ over, abs=1e-9)


def test_the_fit_weighs_crossing_arcs_where_the_margins_alone_miss():
    rng = np.random.default_rng(0)
    margins, crossings, ends = [], [], []
    for _ in range(40):
        end = rng.random(30) < 0.2
        end[-1] = True
        margins.append(rng.normal(0, 1, 30) + np.where(end, 0.3, -0.3))  # weak
        crossings.append(np.where(end, 0.3, 2.0) + rng.normal(0, 0.3, 30))  # strong
        ends.append(end)
    _, alone = SyntaxEnds.fit(margins, crossings, ends, MARGIN_ONLY)
    model, both = SyntaxEnds.fit(margins, crossings, ends)
    assert both > alone + 20 and model.weights[1] < 0  # fewer arcs over it: an end
    noise = [rng.normal(2, 1, 30) for _ in margins]  # a parser that says nothing
    assert SyntaxEnds.fit(margins, noise, ends)[1] < alone + GAIN
    model.parser = small_parser()
    again = SyntaxEnds.from_parts(*model.parts(), "m.npz")
    for m, c in zip(margins, crossings):
        assert (again.ends(m, c) == model.ends(m, c)).all() and model.ends(m, c)[-1]
    assert (again.parser.model.weights == model.parser.model.weights).all()
    with pytest.raises(ValueError):
        SyntaxEnds.from_parts({"weights": [1, 2], "threshold": 0, "scale": 1}, {}, "m.npz")


def test_a_tokenizer_keeps_the_parsers_view_only_where_it_helps(tmp_path):
    tokenizer = Tokenizer(epochs=5, bits=16, progress=False).fit(treebank(5), treebank())
    tokenizer.splitter = tokenizer.splitter or _splitter(tokenizer)
    parser = small_parser()
    # crossing that knows nothing: the splitter alone is as good, nothing kept
    assert not tokenizer.fit_syntax(treebank(), lambda w: np.ones(len(w)), parser)
    assert tokenizer.syntax is None
    # a parser's view that says where sentences end: kept where the words alone miss
    tokenizer.splitter.classifier.weights[:] = 0  # the words say nothing now
    ends = lambda w: np.array([0.0 if x in {"?", "."} else 3.0 for x in w])
    assert tokenizer.fit_syntax(treebank(), ends, parser)
    assert tokenizer.syntax.parser is parser
    assert tokenizer.syntax_f1_["syntax"] > tokenizer.syntax_f1_["words"]
    text = text_of(treebank())
    split = [s.forms for s in tokenizer.tokenize(text, crossing=ends)]
    assert split == [s.forms for s in treebank()]
    # saved and read back with the pipeline, the view's parser too
    path = tmp_path / "m.npz"
    Pipeline(tokenizer=tokenizer).save(path)
    loaded = arborparse.load(path)
    header, arrays = loaded.tokenizer.syntax.parts()
    assert header == tokenizer.syntax.parts()[0]
    assert (arrays["parser.weights"] == parser.model.weights).all()
    assert loaded.crossing() is None  # no tagger to give the view's parser its tags
    assert [s.forms for s in loaded.tokenizer.tokenize(text, crossing=ends)] == split


def _splitter(tokenizer):
    from arborparse.text.sentences import SentenceSplitter
    from arborparse.text.tokenizer import token_paragraphs

    return SentenceSplitter(5, 16, progress=False).fit(*token_paragraphs(treebank(5)))


def test_a_trained_pipeline_splits_with_its_window_parser_when_kept(tmp_path, monkeypatch):
    """`arborparse.train`, behind a word-level splitter and a tagger, trains a parser of
    windows on the jackknifed training sentences and lets the tokenizer weigh its view
    (kept here whatever it gains: GAIN lowered); the model file keeps that parser, and raw
    text is split with it, read through the pipeline's tagger."""
    import arborparse.text.syntax as syntax
    import arborparse.text.tokenizer as tokenizer_module
    import arborparse.trainer as trainer

    front_end, trained = trainer.front_end, []

    def with_splitter(*args, **kwargs):  # the treebank is too small to keep one itself
        front = front_end(*args, **kwargs)
        if front.tokenizer is not None:
            front.tokenizer.splitter = front.tokenizer.splitter or _splitter(front.tokenizer)
        return front

    def spied(train, dev, seed=0, progress=False):
        trained.append((train, dev))
        return window_parser(train, dev, seed, progress)

    monkeypatch.setattr(trainer, "front_end", with_splitter)
    monkeypatch.setattr(syntax, "window_parser", spied)
    monkeypatch.setattr(tokenizer_module, "GAIN", -100.0)
    tagged = lambda k: [s.with_columns({UPOS: ["PUNCT" if f in ",.?" else "X"
                                               for f in s.forms]}) for s in treebank(k)]
    path = tmp_path / "m.npz"
    nlp = arborparse.train(tagged(5), tagged(1), components="tokenizer,tagger,parser",
                           progress=False, trainer="perceptron", epochs=2, hash_bits=12,
                           folds=2, path=path)
    (train, dev), = trained
    assert len(train) == 5 * len(treebank()) and len(dev) == len(treebank())
    assert all(s.upos == t.upos for s, t in zip(dev, nlp.tagger.tag(dev)))  # tagged
    view = nlp.tokenizer.syntax
    assert view is not None and not view.parser.single_root
    assert nlp.info["scores"]["sentences_syntax"] == round(nlp.tokenizer.syntax_f1_["syntax"],
                                                          2)
    loaded = arborparse.load(path)
    np.testing.assert_array_equal(loaded.tokenizer.syntax.parser.model.weights,
                                  view.parser.model.weights)
    read = []
    windows_of = loaded.tokenizer.syntax.parser.window_marginals
    monkeypatch.setattr(loaded.tokenizer.syntax.parser, "window_marginals",
                        lambda s, spans, **kw: read.append(s) or windows_of(s, spans, **kw))
    text = text_of(treebank())
    assert [s.forms for s in loaded.parse_text(text)] == \
        [s.forms for s in nlp.parse_text(text)]
    assert read and all("_" not in s.upos for s in read)  # the tagger's tags


def test_the_paragraph_is_tagged_once_and_its_windows_parsed_from_it(monkeypatch):
    """Each word is tagged once, beside its neighbours in the paragraph; the parser reads
    windows of WINDOW words every STRIDE words of that tagged paragraph."""
    tagged = [s.with_columns({UPOS: ["PUNCT" if f in ",.?" else "X" for f in s.forms]})
              for s in treebank(3)]
    nlp = arborparse.train(tagged, None, components="tagger,parser", progress=False,
                           trainer="perceptron", epochs=1, hash_bits=12, folds=2)
    words = ([f for s in treebank(3) for f in s.forms] * 10)[:WINDOW + 4 * STRIDE]
    whole = nlp.tagger.tag([words_sentence(words, 1)])[0]
    tag, windows = nlp.tagger.tag, nlp.parser.window_marginals
    calls, read = [], []
    monkeypatch.setattr(nlp.tagger, "tag", lambda s: calls.append(list(s)) or tag(s))
    monkeypatch.setattr(nlp.parser, "window_marginals",
                        lambda s, spans, **kw: read.append((s, spans)) or windows(s, spans,
                                                                                  **kw))
    found = nlp.crossing(nlp.parser)(words)
    assert [[len(s) for s in call] for call in calls] == [[len(words)]]
    (paragraph, spans), = read
    assert (paragraph.forms, paragraph.upos) == (words, whole.upos)
    assert spans == [(a, a + WINDOW) for a in range(0, 5 * STRIDE, STRIDE)]
    assert len(found) == len(words)


@pytest.mark.parametrize("options", [{}, {"decoder": "eisner"}, {"clusters": 3},
                                     {"order": 2}])
def test_window_marginals_are_those_of_each_window_cut_out(ud, options):
    """The linear parser's `window_marginals` (the sentence encoded once, the scores of
    arcs inside two windows taken from the first) equal `head_marginals` of each window
    as a sentence of its own, for the windows `crossing` reads and for any spans (to
    rounding: an arc's in-between POS features are counted by tag or walked depending on
    the tags of its window)."""
    parser = small_parser(**options)
    rows = read_conllu(ud / "UD_English-EWT" / "en_ewt-ud-dev.conllu")[:12]
    words = [w for s in rows for w in s.forms][:WINDOW + 4 * STRIDE + 3]
    paragraph = words_sentence(words, 1).with_columns(
        {c: [v for s in rows for v in getattr(s, name)][:len(words)]
         for c, name in ((UPOS, "upos"), (XPOS, "xpos"), (FEATS, "feats"),
                         (LEMMA, "lemmas"))})
    spans = []
    crossing(len(words), lambda found: spans.extend(found) or [np.eye(b - a + 1)
                                                              for a, b in found])
    # (the last: a lone window, cut out and parsed as it is)
    for windows in (spans, [(0, 5), (2, 9), (3, 4), (7, 20), (8, 12), (20, 45), (10, 35)],
                    [(4, 40)]):
        found = list(parser.window_marginals(paragraph, windows, single_root=False))
        for (a, b), mu in zip(windows, found, strict=True):
            cut = words_sentence(words[a:b], 1).with_columns(
                {c: getattr(paragraph, name)[a:b] for c, name in
                 ((UPOS, "upos"), (XPOS, "xpos"), (FEATS, "feats"), (LEMMA, "lemmas"))})
            np.testing.assert_allclose(mu, parser.head_marginals(cut, single_root=False),
                                       rtol=1e-12, atol=1e-15)


def test_windows_are_parsed_with_any_number_of_roots():
    tagged = [s.with_columns({UPOS: ["PUNCT" if f in ",.?" else "X" for f in s.forms]})
              for s in treebank(3)]
    nlp = arborparse.train(tagged, None, components="tagger,parser", progress=False,
                           trainer="perceptron", epochs=1, hash_bits=12, folds=2,
                           order=1)  # first-order marginals, as trees.marginals gives
    sentence = nlp.tagger.tag([tagged[0]])[0]
    many = nlp.parser.head_marginals(sentence, single_root=False)
    one = nlp.parser.head_marginals(sentence)
    n = len(sentence)
    assert many.sum(axis=0)[1:] == pytest.approx(np.ones(n))
    assert one[0].sum() == pytest.approx(1.0)  # the model's own: exactly one root word
    S = nlp.parser._distribution(Encoded.of(sentence)).folded
    assert many == pytest.approx(trees.marginals(S, False, False))


def test_a_damaged_syntax_entry_is_named(tmp_path):
    tokenizer = Tokenizer(epochs=2, bits=16, progress=False).fit(treebank(5), treebank())
    tokenizer.splitter = tokenizer.splitter or _splitter(tokenizer)
    tokenizer.syntax = SyntaxEnds([1.0, -1.0, 0.0, 0.0], parser=small_parser())
    header, arrays = Pipeline(tokenizer=tokenizer).parts()
    header["components"]["tokenizer"]["header"]["syntax"]["weights"] = [1.0]
    from arborparse.io import model_files
    from arborparse.pipeline import KIND, VERSION

    model_files.save(tmp_path / "bad.npz", KIND, VERSION, header, arrays)
    with pytest.raises(ModelFileError, match="tokenizer in the model file is invalid"):
        arborparse.load(tmp_path / "bad.npz")
    header["components"]["tokenizer"]["header"]["syntax"]["weights"] = [1.0, -1.0, 0.0, 0.0]
    del arrays["tokenizer.syntax.parser.weights"]  # its parser damaged
    model_files.save(tmp_path / "bad.npz", KIND, VERSION, header, arrays, force=True)
    with pytest.raises(ModelFileError, match="bad.npz: the tokenizer's view of sentence "
                                             "ends is invalid \\(the model file has no"):
        arborparse.load(tmp_path / "bad.npz")
    with pytest.raises(ValueError, match="saved with its parser"):
        SyntaxEnds([1.0, -1.0, 0.0, 0.0]).parts()


def chain_paragraph(sentences: int, seed: int = 0):
    """One paragraph of sentences "a b ... c ." of 3 to 9 words with known trees: each word
    on the next, the last but one on the root, the full stop on it."""
    rng = np.random.default_rng(seed)
    out = []
    for k in range(sentences):
        n = int(rng.integers(3, 10))
        forms = [f"w{int(rng.integers(0, 5))}" for _ in range(n - 2)] + ["c", "."]
        heads = [0] + [m + 1 for m in range(1, n - 1)] + [0, n - 1]
        s = words_sentence(forms, k + 1, newpar=k == 0).with_columns(
            {UPOS: ["PUNCT" if f == "." else "X" for f in forms], XPOS: ["x"] * n,
             FEATS: ["_"] * n, LEMMA: forms})
        out.append(s.with_tree(heads, ["dep"] * (n - 2) + ["root", "punct"]))
    return out


@pytest.mark.parametrize("sentences", [1, 5, 12, 40])
def test_windows_keep_the_arcs_inside_and_put_the_others_on_the_root(sentences):
    paragraph = chain_paragraph(sentences)
    words = [(s, m) for s in paragraph for m in range(1, len(s) + 1)]
    n = len(words)
    found = windows([paragraph])
    starts = []
    for window in found:  # where each window sits in the paragraph
        forms = window.forms
        starts.append(next(a for a in range(n) if [s.forms[i - 1] for s, i in
                                                  words[a:a + len(forms)]] == forms))
    assert starts[0] == 0 and starts[-1] + len(found[-1]) == n  # the whole paragraph
    assert all(0 < b - a <= STRIDE for a, b in zip(starts, starts[1:]))
    assert all(len(w) == min(WINDOW, n) for w in found)
    for a, window in zip(starts, found):
        assert window.format == "conllx"
        for m in range(1, len(window) + 1):
            s, i = words[a + m - 1]
            assert window.upos[m - 1] == s.upos[i - 1]
            head = s.heads[i]  # in its sentence; where is it in the window?
            at = next((k for k in range(1, len(window) + 1) if head > 0 and
                       words[a + k - 1] == (s, head)), 0)
            assert window.heads[m] == at
            assert window.deprels[m - 1] == (s.deprels[i - 1] if at else "root")


def test_windows_hold_the_words_of_multiword_tokens(ud):
    """Windows of words, as `crossing` reads them: a multiword token's words, never its
    range line or an empty node."""
    dev = read_conllu(ud / "UD_English-EWT" / "en_ewt-ud-dev.conllu")
    group = [s for s in dev if any("-" in r[0] or "." in r[0] for r in s.rows)][:8]
    assert any("-" in r[0] for s in group for r in s.rows)
    found = windows([group])
    words = [f for s in group for f in s.forms]
    assert found[0].forms == words[:WINDOW] and found[-1].forms == words[-WINDOW:]
    assert all(w.has_tree for w in found)


def test_the_window_parser_sees_few_arcs_over_a_sentence_end():
    """Trained on windows of paragraphs whose sentences end with ".", its expected
    crossing arcs are near 0 after a full stop and near 1 (the chain) inside a
    sentence."""
    train = chain_paragraph(80, seed=1)
    dev = chain_paragraph(20, seed=2)
    parser = window_parser(train, dev)
    assert not parser.single_root and parser.model.order == 1
    paragraph = chain_paragraph(10, seed=3)
    tagged = words_sentence([f for s in paragraph for f in s.forms], 1).with_columns(
        {c: [v for s in paragraph for v in s.column(c)] for c in (UPOS, XPOS, FEATS, LEMMA)})
    over = crossing(len(tagged), lambda spans: parser.window_marginals(tagged, spans,
                                                                       single_root=False))
    ends = np.array([f == "." for f in tagged.forms])
    assert over[ends][:-1].max() < 0.2 and over[~ends].min() > 0.8


def test_an_interrupted_window_parser_leaves_the_telling_to_its_caller(monkeypatch):
    """Its trainer's "the best epoch so far was K" would name the window parser's epoch as
    if it were the model's: an interrupt leaves it as a KeyboardInterrupt, which the
    trainer (`arborparse.trainer`) tells with what the model file holds."""
    from arborparse.linear.online import OnlineTrainer

    one_pass, calls = OnlineTrainer.one_pass, []

    def stopped(self, *args):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return one_pass(self, *args)

    monkeypatch.setattr(OnlineTrainer, "one_pass", stopped)
    with pytest.raises(KeyboardInterrupt):
        window_parser(chain_paragraph(20, seed=1), chain_paragraph(5, seed=2))
    assert len(calls) == 2
