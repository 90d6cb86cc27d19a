"""arborparse inside spaCy (the extra ``pip install "arborparse[spacy]"``), two ways:

- `load(path)`: a `spacy.Language` whose tokenizer is the whole arborparse pipeline (as
  spacy-udpipe does): ``nlp(text)`` gives a `Doc` with sentences, ``pos_``, ``tag_``,
  ``morph``, ``lemma_``, ``head``, ``dep_`` and, in ``Token._.head_prob``, the probability
  of each word's head. The model needs a tokenizer. ``nlp.to_disk(folder)`` saves the
  model into the folder, ``spacy.load(folder)`` reads it back (the tokenizer is registered
  as ``arborparse.Tokenizer.v1``), and ``nlp.to_bytes()`` holds it.
- the factory ``"arborparse_parser"``: a component that tags and parses a `Doc` that spaCy
  tokenized itself, ``spacy.blank("en").add_pipe("arborparse_parser", config={"model":
  path})`` (registered as an entry point, so nothing needs importing first); each of the
  Doc's sentences (the whole Doc when no component set sentence starts) is one sentence.

Words are spaCy's tokens: a multiword token (English *can't*, Spanish *del*) becomes its
words; whitespace other than one space after a word is a token of its own (spaCy's
``is_space``, ``pos_`` ``SPACE``, hanging from the token before it or, before the first
word, from that word), so that ``doc.text`` is the text given, unless a multiword token's
words do not spell it (Spanish *del*: *de* *el*): then a warning says that the Doc's text
holds the words instead.
``spacy.displacy.render(doc, style="dep")`` draws either Doc.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any, Callable, Dict, Optional

from arborparse.errors import TRAIN_EVERY_COMPONENT, ArborparseError, warn
from arborparse.pipeline import Pipeline, load as load_model

import numpy as np

try:
    from spacy.attrs import DEP, HEAD
    from spacy.language import Language
    from spacy.tokens import Doc, Token
    from spacy.util import registry
except ImportError as err:  # pragma: no cover - the extra is missing
    raise ImportError("arborparse.spacy needs spaCy: pip install 'arborparse[spacy]'") from err

MODEL_FILE = "arborparse.npz"  # the model, in the folder of ``Language.to_disk``

if not Token.has_extension("head_prob"):
    Token.set_extension("head_prob", default=None)


def _pipeline(model) -> Pipeline:
    found = load_model(model) if not isinstance(model, Pipeline) else model
    return found if isinstance(found, Pipeline) else Pipeline(parser=found)


def _value(value: str) -> str:
    return "" if value == "_" else value


def _annotate(doc: Doc, sentences, indices: list[list[int]]) -> None:
    """Set the tags, lemmas and trees of `sentences` (arborparse's) on the tokens of `doc`
    at `indices` (one list of token positions per sentence); a token outside them
    (whitespace) is spaCy's ``SPACE`` and hangs from its left neighbour, or, before the
    first word, from that word (without words, the first token is the root)."""
    words = {i for where in indices for i in where}
    first = min(words, default=0)
    heads = [i if i in words or i == first else first if i < first else i - 1
             for i in range(len(doc))]
    deps = ["dep" if head != i else "" for i, head in enumerate(heads)]
    for i in set(range(len(doc))) - words:
        doc[i].pos_ = "SPACE"
    for s, where in zip(sentences, indices):
        for word, i in zip(s.words, where):
            token = doc[i]
            if word.upos != "_":
                token.pos_ = word.upos
            token.tag_ = _value(word.xpos)
            token.set_morph(_value(word.feats) or None)
            token.lemma_ = _value(word.lemma)
            token._.head_prob = word.head_prob
            heads[i] = where[word.head - 1] if word.head else i
            deps[i] = word.deprel
    relative = np.array([head - i for i, head in enumerate(heads)], dtype=np.int64)
    labels = np.array([doc.vocab.strings.add(d) for d in deps], dtype=np.uint64)
    doc.from_array([HEAD, DEP], np.stack([relative.astype(np.uint64), labels], axis=1))


class _Tokenizer:
    """The arborparse pipeline as spaCy's tokenizer: text in, a parsed `Doc` out. Its model
    is read when first needed, or from the folder ``Language.from_disk`` gives it."""

    def __init__(self, model, vocab, marginals: bool, options: dict):
        self.model, self.vocab, self.marginals, self.given = model, vocab, marginals, options
        self._pipeline, self.options = None, {}

    @property
    def pipeline(self) -> Pipeline:
        if self._pipeline is None:
            self._use(self.model)
        return self._pipeline

    def _use(self, model) -> None:
        pipeline = _pipeline(model)
        if pipeline.tokenizer is None:
            raise ArborparseError("arborparse.spacy.load needs a model with a tokenizer; "
                                  "for a model without one, add the 'arborparse_parser' "
                                  "component behind spaCy's own tokenizer")
        offered = self.marginals and pipeline.capabilities.marginals
        options = {"marginals": offered or None, **self.given}
        pipeline([], **options)  # refuses an option the model cannot honour, now
        self._pipeline, self.options = pipeline, options

    def __call__(self, text: str) -> Doc:
        document = self.pipeline(text, **self.options)
        words, spaces, indices, rewritten = [], [], [], []
        at = 0  # where the text taken into words ends

        def take(gap: str) -> None:  # what lies between tokens: a space after the word
            # before it, the rest a token of its own (spaCy's whitespace tokens)
            if gap[:1] == " " and words and not spaces[-1]:
                spaces[-1], gap = True, gap[1:]
            if gap:
                words.append(gap)
                spaces.append(False)

        for s in document.sentences:
            indices.append([])
            for token in s.tokens:
                take(text[at:token.start_char])
                at = token.end_char
                forms = [w.text for w in token.words]
                apart = "".join(forms) != token.text  # words that do not spell it: a
                # space apart in the Doc's text
                if apart:
                    rewritten.append(f"{token.text} ({' '.join(forms)})")
                else:  # its characters as the text has them (invisible ones too)
                    piece = text[token.start_char:token.end_char]
                    ends = np.cumsum([len(f) for f in forms[:-1]]).tolist()
                    forms = [piece[a:b] for a, b in zip([0, *ends], [*ends, len(piece)])]
                for k, form in enumerate(forms):
                    indices[-1].append(len(words))
                    words.append(form)
                    spaces.append(apart and k < len(forms) - 1)
        take(text[at:])
        if rewritten:
            warn(f"the Doc's text differs from the text given: spaCy has no "
                 f"multiword tokens, and {len(rewritten)} of the text's are words "
                 f"that do not spell them ({', '.join(rewritten[:3])}"
                 f"{', ...' if len(rewritten) > 3 else ''}); token.idx counts in "
                 "the Doc's text")
        doc = Doc(self.vocab, words=words, spaces=spaces)
        _annotate(doc, document.sentences, indices)
        return doc

    def to_bytes(self, **kwargs) -> bytes:
        """The model file's bytes (``Language.to_bytes``)."""
        with tempfile.TemporaryDirectory() as folder:
            self.pipeline.save(Path(folder) / MODEL_FILE)
            return (Path(folder) / MODEL_FILE).read_bytes()

    def from_bytes(self, data: bytes, **kwargs):
        """Read back what `to_bytes` gave (``Language.from_bytes``)."""
        with tempfile.TemporaryDirectory() as folder:
            (Path(folder) / MODEL_FILE).write_bytes(data)
            self._use(Path(folder) / MODEL_FILE)
        return self

    def to_disk(self, path, **kwargs) -> None:
        """Save the arborparse model into spaCy's folder (``Language.to_disk``)."""
        Path(path).mkdir(parents=True, exist_ok=True)
        self.pipeline.save(Path(path) / MODEL_FILE)

    def from_disk(self, path, **kwargs):
        """Read back what `to_disk` saved (``Language.from_disk``, ``spacy.load``)."""
        self._use(Path(path) / MODEL_FILE)
        return self


TOKENIZER = "arborparse.Tokenizer.v1"  # in spaCy's registry and its pipelines' config.cfg


@registry.tokenizers(TOKENIZER)
def make_tokenizer(model: str, marginals: bool = True,
                   options: Optional[Dict[str, Any]] = None) -> Callable[[Language], _Tokenizer]:
    """The tokenizer of `load`'s pipelines, as their config names it (so that ``spacy.load``
    of a folder they were saved to builds it again; registered as an entry point)."""
    return lambda nlp: _Tokenizer(model, nlp.vocab, marginals, dict(options or {}))


def load(path, lang: str = "xx", marginals: bool = True, **options) -> Language:
    """A spaCy pipeline whose tokenizer is the arborparse model at `path` (see the module
    docstring); `lang`: spaCy's language code of the blank pipeline (``"xx"``: any);
    `options` as `Pipeline.__call__` takes them, refused here if the model cannot honour
    them."""
    import spacy

    try:
        spacy.util.get_lang_class(lang)
    except ImportError as e:  # spaCy's E048: the language, or what it imports, is missing
        if getattr(e.__cause__, "name", None) != f"spacy.lang.{lang}":
            raise
        raise ArborparseError(f"spaCy has no language {lang!r}: leave lang out (its default, "
                              "'xx', takes any language)") from None
    config = {"@tokenizers": TOKENIZER, "model": str(path), "marginals": marginals,
              "options": options}
    nlp = spacy.blank(lang, config={"nlp": {"tokenizer": config}})
    nlp.tokenizer.pipeline  # read now: a wrong path, model or option is refused here
    return nlp


class Parser:
    """The ``arborparse_parser`` component: tags and parses a Doc spaCy tokenized."""

    def __init__(self, model, marginals: bool):
        if not model:
            raise ArborparseError("arborparse_parser: give the model file, config={'model': "
                                  "PATH}")
        self.pipeline = _pipeline(model)
        if not self.pipeline.reads_words:
            raise ArborparseError(f"arborparse_parser: {model} has no tagger, and its parser "
                                  "reads tags, which spaCy's tokens lack: give a model with "
                                  f"one ({TRAIN_EVERY_COMPONENT})")
        offered = marginals and self.pipeline.capabilities.marginals
        self.options = {"marginals": True} if offered else {}

    def __call__(self, doc: Doc) -> Doc:
        spans = list(doc.sents) if doc.has_annotation("SENT_START") else [doc[:]]
        indices = [[t.i for t in span if not t.is_space] for span in spans]
        indices = [where for where in indices if where]
        words = [[doc[i].text for i in where] for where in indices]
        _annotate(doc, self.pipeline(words, **self.options).sentences if words else [],
                  indices)
        return doc


@Language.factory("arborparse_parser", default_config={"model": "", "marginals": True})
def make_parser(nlp: Language, name: str, model: str, marginals: bool) -> Parser:
    """The factory behind ``add_pipe("arborparse_parser", config={"model": PATH})``."""
    return Parser(model, marginals)
