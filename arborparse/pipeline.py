"""`load(path)`: any model file, the right parser; `Pipeline`: a tagger, a lemmatizer and a
parser in one model file.

The model kind written in the file's header picks the family (`arborparse.registry`);
each family's parser, and a pipeline, have the same face (`load`, `save`, `parse`,
`iter_parse`, `capabilities`, `kind`; see `arborparse.options`). A pipeline also says what
it is (`info`; `arborparse.train` records it).

A pipeline with a tokenizer also takes raw text (`parse_text`, `iter_parse_text`). It tags
the sentences that need it before parsing: by default those with a word
without UPOS (UPOS, XPOS and FEATS are then predicted for the whole sentence, and LEMMA
where a word has none); with ``retag=True`` every sentence; with ``keep_tags=True`` none
(the input's tags are trusted). Every other column is kept. Where the tokenizer kept a
parser's view of sentence ends (`arborparse.text.syntax`), raw text is split with this
pipeline's tagger and that parser reading each paragraph (`crossing`).
"""

from __future__ import annotations

import numbers
import reprlib
from collections.abc import Iterable
from importlib import import_module
from itertools import islice
from typing import NamedTuple

from arborparse import registry
from arborparse.errors import TRAIN_EVERY_COMPONENT, ArborparseError, TreebankFormatError
from arborparse.io import model_files
from arborparse.io.chunks import chunks
from arborparse.io.conllu import LEMMA, Sentence, iter_conllu, lines_of, writable
from arborparse.io.model_files import ModelFileError, kind_of
from arborparse.io.plain import (characters, iter_tokenized, prose_lines, text_lines,
                                 words_sentence)
from arborparse.io.validate import only_sentences
from arborparse.options import Capabilities, OptionError, check_options, tagging
from arborparse.training import CHECKPOINT

KIND = "pipeline"
VERSION = 1


def iter_parse_source(parser, source, fmt: str, encoding: str = "utf-8", **options):
    """The parsed sentences, lazily, of `source` (a path, ``"-"`` or an open file; its bytes
    in `encoding`) read as `fmt` says (``parse --input-format``): ``text`` through the
    model's tokenizer (a parser alone is a pipeline without one), ``lines`` (one sentence
    per line) through it too, ``tokenized``, or CoNLL (``auto``, ``conllu``, ``conllx``).
    The options are checked before a sentence is read."""
    if fmt in ("text", "lines"):
        pipeline = parser if isinstance(parser, Pipeline) else Pipeline(parser=parser)
        return pipeline.iter_parse_text(text_lines(source, encoding), per_line=fmt == "lines",
                                        **options)
    sentences = split_tokens(parser, iter_tokenized(source, encoding)) \
        if fmt == "tokenized" else iter_conllu(source, fmt, encoding)
    return parser.iter_parse(sentences, **options)


def split_tokens(model, sentences: Iterable[Sentence]) -> Iterable[Sentence]:
    """Pre-tokenized sentences (tokenized input: tokens, where a word list holds words)
    with their multiword tokens split into words by `model`'s tokenizer
    (`Tokenizer.split_tokens`), as raw text's are; as they are where it has none."""
    tokenizer = model.tokenizer if isinstance(model, Pipeline) else None
    return sentences if tokenizer is None else tokenizer.split_tokens(sentences)


TEXT = {"tokenizer": ("arborparse.text.tokenizer", "Tokenizer"),
        "tagger": ("arborparse.text.tagger", "Tagger"),
        "lemmatizer": ("arborparse.text.lemmatizer", "Lemmatizer")}
COMPONENTS = ("tokenizer", "tagger", "lemmatizer", "parser")
CHUNK = 256  # sentences tagged at once in a stream
# what a model file says of itself (`Pipeline.info`, ``arborparse info``)
INFO = ("arborparse_version", "created", "family", "members", "components", "versions",
        "options",
        "defaults_by_size", "data", "language", "scores", "chosen_on_dev",
        "training_seconds", "warnings", "decoder", "reach", "tag_reach", "temperatures")
TEMPERED = ("linear", "neural")  # the families whose marginals have temperatures
MEMBER_SCORES = ("dev UAS", "dev LAS")  # what an ensemble's members' entries add of their own


def _home(name: str, family: str) -> tuple[str, str] | None:
    """(module, class) of the component `name` (a parser: of `family`); None if unknown."""
    if name in TEXT:
        return TEXT[name]
    return tuple(registry.FAMILIES[family].parser.split(":")) \
        if family in registry.FAMILIES else None


def _class(home):
    module, name = home
    return getattr(import_module(module), name)


def _family_of(kind: str, path) -> str:
    if kind == CHECKPOINT:
        raise ModelFileError(f"{path}: a training's checkpoint, not a model: the model is "
                             "the file beside it (without .checkpoint), and arborparse train "
                             "--resume continues the training from it")
    try:
        return registry.canonical(kind)
    except ArborparseError:
        raise ModelFileError(f"{path}: a model of kind {kind!r}, which this arborparse does "
                             f"not read (it reads {', '.join([KIND, *registry.FAMILIES])})"
                             ) from None


def load(path):
    """The parser (or pipeline) stored in the model file at `path`, whatever its family.

    Raises `ModelFileError` for a file that is not a model of ours, of a kind this version
    does not know, or of another version.
    """
    kind = kind_of(path)
    if kind == KIND:
        return Pipeline.load(path)
    return registry.parser_class(_family_of(kind, path)).load(path)


def _header_parts(path) -> tuple[dict, dict, str | None]:
    """(what it says of itself, its components' entries by name, its parser's family) of
    the model file at `path`, from its header alone; a parser's own file is read as a
    pipeline of that parser alone."""
    header = model_files.header(path)
    kind = str(header.get("kind"))
    if kind != KIND:
        return {}, {"parser": {"kind": kind, "version": header.get("version"),
                               "header": header}}, _family_of(kind, path)
    components = header.get("components") or {}
    parser = components.get("parser") or {}
    family = _family_of(parser["kind"], path) if parser.get("kind") else None
    return header.get("info") or {}, components, family


def info(path) -> dict:
    """What the model file at `path` says of itself (`INFO`'s keys, None where a file
    written by an earlier version lacks one), from its header alone."""
    stored, components, family = _header_parts(path)
    parser = (components.get("parser") or {}).get("header") or {}
    heads = parser.get("temperature", 1.0)  # 1 in files written before it
    labeler = parser.get("labeler")
    labeler = labeler.get("temperature") if isinstance(labeler, dict) else None
    temperatures = (heads, parser.get("label_temperature", heads),
                    labeler if isinstance(labeler, (int, float)) else None) \
        if family in TEMPERED and parser else None
    members = parser.get("members") if family == "ensemble" else None
    if isinstance(members, dict):
        members = {name: (entry or {}).get("kind") if isinstance(entry, dict) else None
                   for name, entry in members.items()}
    return describe(stored, family, {c: (components[c] or {}).get("version")
                                     for c in COMPONENTS if c in components},
                    parser.get("reach"), parser.get("tag_reach"), parser.get("decoder"),
                    temperatures, _members(members, parser.get("weight"), stored.get("members")))


def _members(kinds, weight, record=None) -> dict | None:
    """`INFO`'s members of an ensemble whose parsers are of the `kinds` (name -> kind) and
    the first's share `weight`: {"first": {"family": ..., "weight": w, "dev UAS": ...,
    "dev LAS": ...}, "second": {...}}, each member's own dev scores as its model recorded
    them (`record`: the stored ``members``; none in files written before them); None for
    another parser (or a damaged header)."""
    if not isinstance(kinds, dict) or not isinstance(weight, (int, float)):
        return None
    shares = {"first": weight, "second": round(1 - weight, 10)}
    record = record if isinstance(record, dict) else {}
    return {name: {"family": kind, "weight": shares.get(name),
                   **{k: v for k, v in (record.get(name) or {}).items()
                      if k in MEMBER_SCORES and isinstance(v, (int, float))}}
            for name, kind in kinds.items()}


class Offer(NamedTuple):
    """What a model offers when it parses (what `check_options` reads): its parser's kind
    and its capabilities."""

    kind: str
    capabilities: Capabilities


def offer(path) -> Offer:
    """What the model file at `path` offers when it parses, from its header alone (no
    weights read: `parse --scheduler` checks its options with it, the workers load the
    model)."""
    _, components, family = _header_parts(path)
    tags = Capabilities(tags="tagger" in components or "lemmatizer" in components)
    if "parser" not in components:
        return Offer(KIND, tags)
    parser = components["parser"]
    family = family or _family_of(str(parser.get("kind")), path)  # refuses a missing kind
    return Offer(family, registry.options_table(family).offers(parser.get("header") or {})
                 | tags)


def describe(stored: dict, family: str | None, versions: dict, reach=None,
             tag_reach=None, decoder=None, temperatures=None, members=None) -> dict:
    """`INFO`'s keys in order: what `stored` holds, the family, the components and their
    format versions as found (`versions`: component -> version), the parser's decoder
    (None: a family without one, or no parser), the linear parser's reach
    (`LinearParser.reach` as a list; None: none, or another family), tag reach (its
    header entry, `TagReach.header`, told as the number of tags and of the pairs of them
    seen as head and word; None: none) and temperatures ((T, T_l, the second-stage
    labeler's or None) of a linear or neural parser's marginals, told as {"heads": T,
    "labels": T_l} and "labeler" where there is one; None: another family), an ensemble's
    parsers (`members`, as `_members` gives them; None: another family)."""
    found = {key: stored.get(key) for key in INFO}
    if tag_reach is not None:
        tag_reach = _tag_reach_summary(tag_reach)
    found.update(family=family or stored.get("family"), members=members,
                 components=list(versions),
                 versions=versions, tag_reach=tag_reach, decoder=decoder,
                 reach=list(reach) if isinstance(reach, tuple) else reach,
                 temperatures=None if temperatures is None else {
                     key: t for key, t in zip(("heads", "labels", "labeler"), temperatures)
                     if t is not None})
    return found


def _tag_reach_summary(entry) -> dict | str:
    """{"tags": K, "pairs": the pairs seen as head and word} of a tag reach's header entry
    (`TagReach.header`), or "invalid" where the parser would refuse it."""
    tags = entry.get("tags") if isinstance(entry, dict) else None
    tables = [entry.get(k) for k in ("before", "after")] if isinstance(entry, dict) else []
    K = len(tags) if isinstance(tags, list) else -1

    def whole(v):
        return isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= 1 << 30
    if K < 0 or not all(isinstance(t, str) for t in tags) or len(set(tags)) != K or not all(
            isinstance(t, list) and len(t) == K and all(
                isinstance(row, list) and len(row) == K and all(map(whole, row)) for row in t)
            for t in tables) or len(tables) != 2:
        return "invalid"
    return {"tags": K, "pairs": sum(1 for rows in zip(*tables) for b, a in zip(*rows)
                                    if b or a)}


def check_tagged(sentences) -> None:
    """Refuse, for ``keep_tags``, a sentence none of whose words has a UPOS."""
    for s in sentences:
        if s.upos.count("_") == len(s):
            raise TreebankFormatError(s.path, s.line, "the words have no tags (UPOS empty), "
                                      "and keep_tags (parse --keep-tags) keeps the input's: "
                                      "leave it out, and the model's tagger tags them",
                                      where=s.where)


class Pipeline:
    """A tokenizer, a tagger and a lemmatizer (`arborparse.text`) in front of a parser of
    any family; any of them may be missing (a tagger alone tags)."""

    kind = KIND

    def __init__(self, tagger=None, lemmatizer=None, parser=None, tokenizer=None,
                 info: dict | None = None):
        self.tokenizer = tokenizer
        self.tagger = tagger
        self.lemmatizer = lemmatizer
        self.parser = parser
        self._info = info or {}

    @property
    def capabilities(self) -> Capabilities:
        """The parser's, and tags where there is a tagger or a lemmatizer."""
        own = self.parser.capabilities if self.parser is not None else Capabilities()
        return own | Capabilities(tags=self.tagger is not None or self.lemmatizer is not None)

    @property
    def components(self) -> list[str]:
        return [name for name in COMPONENTS if getattr(self, name) is not None]

    @property
    def info(self) -> dict:
        """What the model says of itself: `INFO`'s keys (None where unknown: a model file
        of an earlier version, or a pipeline put together by hand); `versions`: the format
        each component was read in (`component`), or, one made here, would be saved in."""
        family = registry.canonical(self.parser.kind) if self.parser is not None else None
        tag_reach = getattr(self.parser, "tag_reach", None)
        versions = {name: getattr(getattr(self, name), "format_read",
                                  import_module(_home(name, family)[0]).VERSION)
                    for name in self.components}
        labeler = getattr(self.parser, "labeler", None)
        temperatures = (self.parser.temperature, self.parser.label_temperature,
                        getattr(labeler, "temperature", None)) if family in TEMPERED else None
        members = getattr(self.parser, "members", None)
        return describe(self._info, family, versions, getattr(self.parser, "reach", None),
                        None if tag_reach is None else tag_reach.header(),
                        getattr(self.parser, "decoder", None), temperatures,
                        None if members is None else _members(
                            {"first": members[0].kind, "second": members[1].kind},
                            self.parser.weight, self._info.get("members")))

    def _annotate(self, sentences, retag: bool):
        """The sentences with tags and lemmas predicted where they are needed."""
        sentences = list(sentences)
        if self.tagger is not None:
            todo = [i for i, s in enumerate(sentences) if retag or "_" in s.upos]
            for i, s in zip(todo, self.tagger.tag([sentences[i] for i in todo])):
                sentences[i] = s
        if self.lemmatizer is not None and self.lemmatizer.enabled:
            todo = [i for i, s in enumerate(sentences) if retag or "_" in s.lemmas]
            lemmas = self.lemmatizer.lemmas([sentences[i] for i in todo])
            for i, new in zip(todo, lemmas):
                old = sentences[i].lemmas
                keep = [a if a != "_" and not retag else b for a, b in zip(old, new)]
                sentences[i] = sentences[i].with_columns({LEMMA: keep})
        return sentences

    def iter_parse(self, sentences, **options):
        """Tag where needed (see the module docstring), then parse, lazily, chunk by chunk;
        the parser's options as in its `parse` (``decode``, `__call__`'s name for
        ``decode_as``, taken too)."""
        options = self._parse_options(options, "decode_as")
        retag, keep_tags = tagging(options)

        def tagged():  # where the input fails, what was read before it is given first
            for chunk in chunks(only_sentences(sentences), CHUNK):
                if keep_tags and self.tagger is not None:
                    check_tagged(chunk)
                yield from (chunk if keep_tags else self._annotate(chunk, retag))
        if self.parser is None:
            return tagged()
        if self.parser.capabilities.tags:  # a parser that tags (neural)
            options.update(retag=retag, keep_tags=keep_tags)
        return self.parser.iter_parse(tagged(), **options)

    def parse(self, sentences, **options) -> list:
        """Every sentence tagged where needed and parsed; options as in `iter_parse`."""
        return list(self.iter_parse(sentences, **options))

    def iter_parse_text(self, lines, document: str = "", per_line: bool = False, **options):
        """Raw text (an iterable of lines, e.g. an open file; paragraphs separated by blank
        lines) tokenized, split into sentences (`per_line`: each non-blank line is one
        sentence), tagged and parsed, lazily: a batch of paragraphs (about
        `arborparse.text.tokenizer.BATCH_CHARACTERS` characters) and one chunk of
        sentences in memory at a time. Options as in `iter_parse`; `document` prefixes
        the ``# sent_id`` numbers."""
        if isinstance(lines, (str, bytes)):
            raise TypeError(f"iter_parse_text takes an iterable of lines (an open file, a "
                            f"list of str), not {type(lines).__name__}, whose lines would "
                            "be its characters: for one text call parse_text(text)")
        if self.tokenizer is None:
            raise self._no_tokenizer("tokenized input (arborparse parse --input-format "
                                     "tokenized)", "CoNLL-U whose words have tags")
        return self.iter_parse(self.tokenizer.iter_tokenize(lines, document, per_line,
                                                            self.crossing()), **options)

    @property
    def reads_words(self) -> bool:
        """Whether it parses words without tags: it tags them, or its parser needs none
        (or tags them itself), or it has no parser."""
        return self.tagger is not None or self.parser is None or \
            self.parser.capabilities.tags

    def _no_tokenizer(self, words: str, tagged: str) -> ArborparseError:
        """The refusal of raw text by a model without a tokenizer, saying what it reads
        instead: `words` (tokenized input) where it `reads_words`, else `tagged`
        (sentences whose words have tags)."""
        given = words if self.reads_words else f"{tagged} (it has no tagger either)"
        return ArborparseError(f"this model has no tokenizer, so it cannot read raw text: "
                               f"give {given}, or train a model with one "
                               f"({TRAIN_EVERY_COMPONENT})")

    def crossing(self, parser=None):
        """The function the tokenizer weighs sentence ends with (`arborparse.text.syntax`:
        words -> the expected arcs over each gap: the paragraph tagged once, each word
        beside its real neighbours, and its windows given arc marginals by `parser`'s
        `window_marginals` (a `LinearParser`'s), by default the window parser the
        tokenizer's view keeps), or None where there is none
        (a tokenizer that kept no such view) or no tagger to give that parser its tags."""
        from arborparse.text.syntax import crossing

        if parser is None:
            parser = getattr(getattr(self.tokenizer, "syntax", None), "parser", None)
        if parser is None or self.tagger is None:
            return None

        def view(words):
            tagged = self._annotate([words_sentence(words, 1)], retag=False)[0]
            return crossing(len(words), lambda spans: parser.window_marginals(
                tagged, spans, single_root=False))
        return view

    # ------------------------------------------------------------------ documents

    def __call__(self, inputs, **options):
        """Tag and parse `inputs` into a `arborparse.document.Document`.

        Parameters
        ----------
        inputs : str (raw text, through the model's tokenizer; paragraphs separated by
            blank lines), a list of word lists (pre-tokenized sentences), or a list of
            `Sentence` (CoNLL-U sentences, tagged where they need it)
        marginals : bool, give each word `head_prob` and `label_prob`
        decode : ``"map"`` (the best tree) or ``"mbr"`` (minimum Bayes risk)
        kbest : int, give each sentence its k most probable trees
        retag, keep_tags : tag every sentence, or none (default: those without tags)
        decoder : ``"mst"`` or ``"eisner"``
        beam, branching : beam search (ISBN models)

        An option the model cannot honour raises `arborparse.options.OptionError`, naming
        what it offers; an input of another type raises TypeError.
        """
        return next(self.pipe([inputs], **options))

    def pipe(self, inputs, batch_size: int = 256, **options):
        """`__call__` over a stream of inputs, lazily: `batch_size` inputs are read, their
        sentences tagged and parsed together, and their documents yielded in order."""
        from arborparse.document import Document

        if isinstance(inputs, str):
            raise TypeError("pipe takes an iterable of inputs, not one str: call the "
                            "pipeline on a text, or give pipe a list of texts")
        if not isinstance(batch_size, numbers.Integral) or isinstance(batch_size, bool) or \
                batch_size < 1:
            raise ArborparseError(f"batch_size={batch_size!r}: give an integer >= 1")
        options = self._parse_options(options)
        stream = iter(inputs)
        while batch := list(islice(stream, batch_size)):
            prepared = [self._sentences(item) for item in batch]
            parsed = iter(self.iter_parse((s for sentences, _ in prepared for s in sentences),
                                          **options))
            for sentences, text in prepared:
                yield Document(list(islice(parsed, len(sentences))), text)

    def _parse_options(self, options: dict, name: str = "decode") -> dict:
        """The options as the parsers name them (``decode``, `__call__`'s name, as
        ``decode_as``), checked; a refusal calls that option as the caller did, else
        `name`."""
        options = dict(options)
        if "decode" in options:
            if options.get("decode_as") is not None and options["decode"] is not None:
                raise OptionError("decode", options["decode"], "is decode_as by another "
                                  "name: give one of the two")
            name = "decode"
            decode = options.pop("decode")
            options["decode_as"] = options.get("decode_as") if decode is None else decode
        elif "decode_as" in options:
            name = "decode_as"
        try:
            check_options(self, options)
        except OptionError as err:  # named as the caller named them
            raise err.renamed({"decode_as": name}) from None
        return options

    def _sentences(self, item) -> tuple[list, str | None]:
        """(the sentences of one input, its raw text or None)."""
        from arborparse.document import Document
        from arborparse.document import Sentence as View

        if isinstance(item, str):
            if self.tokenizer is None:
                raise self._no_tokenizer("a list of word lists (pre-tokenized sentences)",
                                         "a list of Sentence whose words have tags "
                                         "(Document.from_conllu(conllu).sentences)")
            lines = prose_lines(characters(item), "<text>", "give its sentences instead "
                                "(Document.from_conllu(text).sentences)")
            return list(self.tokenizer.iter_tokenize(lines, crossing=self.crossing())), item
        if isinstance(item, Document):
            return [s.data for s in item.sentences], item.text
        if isinstance(item, (list, tuple)):
            if all(isinstance(s, Sentence) for s in item):
                return list(item), None
            if all(isinstance(s, View) for s in item):
                return [s.data for s in item], None
            if all(isinstance(s, (list, tuple)) and all(isinstance(w, str) for w in s)
                   for s in item):
                for k, s in enumerate(item, 1):
                    if not all(map(writable, s)) or not s:
                        raise ArborparseError(f"words must be non-empty, without tabs or "
                                              f"line ends, and sentences not empty: {s!r}")
                    characters(" ".join(s), f"sentence {k}")
                return [words_sentence(list(s), k, k == 1, newdoc=k == 1)
                        for k, s in enumerate(item, 1)], None
        got = type(item).__name__
        if isinstance(item, (list, tuple)):
            got = f"a {got} of {', '.join(sorted({type(s).__name__ for s in item}))}"
            if item and all(isinstance(s, str) for s in item):
                got += (" (one sentence's words? give a list of word lists, "
                        "nlp([['The', 'dog', 'barks']]); several texts: nlp.pipe(texts))")
            wrong = next(((k, w) for k, s in enumerate(item, 1) if isinstance(s, (list, tuple))
                          for w in s if not isinstance(w, str)), None)
            if wrong:
                got += f", and sentence {wrong[0]} holds {reprlib.repr(wrong[1])} (" \
                       f"{type(wrong[1]).__name__}) where a word (a str) should be"
        raise TypeError("a pipeline takes a str (raw text), a list of word lists "
                        f"(pre-tokenized sentences) or a list of Sentence; got {got}")

    def parse_text(self, text: str, **options) -> list:
        """The sentences of a raw text (a str), parsed; see `iter_parse_text`."""
        if not isinstance(text, str):
            raise TypeError(f"parse_text takes a str, not {type(text).__name__}"
                            + (": decode it first (data.decode('utf-8'))"
                               if isinstance(text, (bytes, bytearray)) else ""))
        return list(self.iter_parse_text(lines_of(text), **options))

    # ------------------------------------------------------------------ model files

    def parts(self) -> tuple[dict, dict]:
        components, arrays = {}, {}
        for name, component in (("tokenizer", self.tokenizer), ("tagger", self.tagger),
                                ("lemmatizer", self.lemmatizer), ("parser", self.parser)):
            if component is None:
                continue
            components[name], parts = entry_of(component)
            arrays.update(model_files.nested(name, parts))
        header = {"components": components}
        if self._info:
            header["info"] = self._info
        return header, arrays

    def save(self, path, force: bool = False) -> None:
        """Write the pipeline as one model file, atomically; a file there that is not a
        model of ours is replaced only with `force`."""
        model_files.save(path, KIND, VERSION, *self.parts(), force=force)

    @classmethod
    def load(cls, path) -> Pipeline:
        header, arrays = model_files.load(path, KIND, VERSION)
        components = header.get("components")
        if not isinstance(components, dict) or not components:
            raise ModelFileError(f"{path}: the pipeline model file has no components")
        found = {name: component(name, entry, model_files.inner(name, arrays), path,
                                 f"the pipeline's {name}")
                 for name, entry in components.items()}
        return cls(found.get("tagger"), found.get("lemmatizer"), found.get("parser"),
                   found.get("tokenizer"), header.get("info"))


def entry_of(component) -> tuple[dict, dict]:
    """(its entry in the header of a model file holding it among others: ``{"kind",
    "version", "header"}``, its arrays) of a component (a parser too)."""
    header, arrays = component.parts()
    version = import_module(type(component).__module__).VERSION
    return {"kind": component.kind, "version": version, "header": header}, arrays


def component(name: str, entry, arrays: dict, path, where: str):
    """The component `name` (``"parser"``: of any family) read back from its `entry_of`
    entry and its arrays, its kind and version checked; ModelFileError saying `where` it is
    in the file at `path` ("the pipeline's tagger")."""
    try:
        kind, part = entry["kind"], entry["header"]
    except (KeyError, TypeError):
        raise ModelFileError(f"{path}: {where} is invalid") from None
    family = registry.ALIASES.get(kind, kind)
    home = _home(name, family)
    if home is None or (name == "parser") != (family in registry.FAMILIES):
        raise ModelFileError(f"{path}: {where} is of kind {kind!r}, which this arborparse "
                             "does not read")
    module = import_module(home[0])
    version, oldest = module.VERSION, getattr(module, "OLDEST", module.VERSION)
    written = entry.get("version")
    if type(written) is not int or not oldest <= written <= version:
        raise ModelFileError(f"{path}: {where} is version {written!r}, this arborparse reads "
                             f"{model_files.versions(oldest, version)}; "
                             f"{model_files.what_to_do(written, version)}")
    found = _class(home).from_parts(part, arrays, path)
    found.format_read = written  # what `Pipeline.info` says of it
    return found
