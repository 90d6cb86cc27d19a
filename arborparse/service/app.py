"""The HTTP service: an ASGI app (Starlette) around one model, loaded once.

``POST /parse``: the body is raw text, tokenized text (one sentence per line) or CoNLL-U /
CoNLL-X, either plain (``text/plain``; the settings in the query string) or JSON
(``application/json``: ``{"text": ..., "format": ..., "output": ..., "marginals": ...,
"k": ...}``). ``format``: ``auto`` (default: CoNLL when the first line that is not a comment
has tab-separated columns, raw text otherwise), ``conllu``, ``conllx``, ``text`` or
``tokenized``. ``output``: ``conllu`` (default for a plain body) or ``json`` (default for
JSON). ``marginals=true`` adds each word's probability distribution over its heads, ``k=K``
the K most probable trees with their probabilities (JSON output; models whose parser gives
them: linear and neural), ``svg=true`` each tree drawn (`arborparse.render.svg`; with
marginals, arcs as sure as the parser is). Refusals are JSON ``{"error": "..."}`` with a
4xx status: 400 bad input, 413 too large (body, words, a sentence's length), 415 wrong
content type, 422 an option the model does not take. Parsing runs in a worker thread, one request at a time.

``GET /``: the web page (`page.html`); ``GET /openapi.json``: the schema; ``GET /health``.
"""

from __future__ import annotations

import io
import json
import threading
from dataclasses import dataclass
from importlib import resources

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse
from starlette.routing import Route

from arborparse.errors import ArborparseError
from arborparse.io.conllu import MISC, iter_conllu
from arborparse.io.plain import iter_tokenized
from arborparse.options import OptionError
from arborparse.pipeline import Pipeline
from arborparse.render import svg

FORMATS = ("auto", "conllu", "conllx", "text", "tokenized")
OUTPUTS = ("conllu", "json")


@dataclass
class Limits:
    """What one request may hold."""

    body_bytes: int = 256 * 1024
    words: int = 5000
    sentence_words: int = 250
    k: int = 20


class Refused(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


def _settings(request: Request, body: bytes) -> dict:
    """text, format, output, marginals, k of a request."""
    kind = request.headers.get("content-type", "text/plain").split(";")[0].strip().lower()
    if kind == "application/json":
        try:
            data = json.loads(body)
        except (UnicodeDecodeError, ValueError) as err:
            raise Refused(400, f"the body is not valid JSON ({err})") from None
        if not isinstance(data, dict) or not isinstance(data.get("text"), str):
            raise Refused(400, 'the JSON body must be an object with a string "text"')
        settings = {"output": "json", **data}
    elif kind in ("text/plain", "text/x-conllu", ""):
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError as err:
            raise Refused(400, f"the body is not UTF-8 (byte {err.start + 1})") from None
        settings = {"output": "conllu", **dict(request.query_params), "text": text}
    else:
        raise Refused(415, f"content type {kind!r}: send text/plain or application/json")
    fmt, output = settings.get("format", "auto"), settings.get("output")
    if fmt not in FORMATS:
        raise Refused(400, f"format: one of {', '.join(FORMATS)}")
    if output not in OUTPUTS:
        raise Refused(400, f"output: one of {', '.join(OUTPUTS)}")
    flags = {}
    for name in ("marginals", "svg"):
        value = settings.get(name, False)
        flags[name] = value.lower() in ("1", "true", "yes") if isinstance(value, str) \
            else bool(value)
    try:
        k = int(settings.get("k", 0))
    except (TypeError, ValueError):
        raise Refused(400, "k: a whole number") from None
    if not settings["text"].strip():
        raise Refused(400, "the text is empty")
    return {"text": settings["text"], "format": fmt, "output": output, "k": k, **flags}


def _format(text: str) -> str:
    """``auto``: CoNLL when the first line that is not a comment has tabs, else raw text."""
    for line in text.splitlines():
        if line.strip() and not line.startswith("#"):
            return "conllu" if "\t" in line else "text"
    return "text"


class Service:
    """The model and the limits; `parse` does the work of one request."""

    def __init__(self, model, limits: Limits):
        self.model, self.limits = model, limits
        self.lock = threading.Lock()

    def sentences(self, text: str, fmt: str):
        if fmt == "auto":
            fmt = _format(text)
        if fmt == "text":
            model = self.model if isinstance(self.model, Pipeline) else \
                Pipeline(parser=self.model)
            if model.tokenizer is None:
                raise Refused(422, "this model has no tokenizer: send tokenized text or "
                                   "CoNLL-U")
            return model.tokenizer.tokenize(text)
        source = io.StringIO(text)
        source.name = "<request>"
        return list(iter_tokenized(source) if fmt == "tokenized" else iter_conllu(source, fmt))

    def parse(self, settings: dict):
        limits = self.limits
        with self.lock:
            try:
                sentences = self.sentences(settings["text"], settings["format"])
            except ArborparseError as err:
                raise Refused(400, str(err)) from None
            words = sum(map(len, sentences))
            if words > limits.words:
                raise Refused(413, f"{words} words; at most {limits.words} a request")
            longest = max(map(len, sentences), default=0)
            if longest > limits.sentence_words:
                raise Refused(413, f"a sentence of {longest} words; at most "
                                   f"{limits.sentence_words}")
            if not 0 <= settings["k"] <= limits.k:
                raise Refused(400, f"k: between 0 and {limits.k}")
            parser = self.model.parser if isinstance(self.model, Pipeline) else self.model
            can = parser.capabilities
            for wanted, offered, what in ((settings["marginals"], can.marginals, "marginals"),
                                          (settings["k"], can.kbest, "k-best trees")):
                if wanted and not offered:
                    raise Refused(422, f"this {parser.kind} model gives no {what} (it offers: "
                                       f"{', '.join(can.names()) or 'trees only'})")
            try:  # one scoring per sentence serves the tree, the marginals and the k best
                parsed = self.model.parse(sentences, marginals=settings["marginals"] or None,
                                          kbest=settings["k"] or None)
            except OptionError as err:
                raise Refused(422, str(err)) from None
            except ArborparseError as err:
                raise Refused(400, str(err)) from None
            if settings["output"] == "conllu":
                return "".join(s.to_text() for s in parsed)
            return {"sentences": [self._json(s, settings) for s in parsed]}

    @staticmethod
    def _json(s, settings) -> dict:
        words = [{"id": m, "form": f, "lemma": lemma, "upos": u, "xpos": x, "feats": feats,
                  "head": int(h), "deprel": d}
                 for m, (f, lemma, u, x, feats, h, d) in enumerate(zip(
                     s.forms, s.lemmas, s.upos, s.xpos, s.feats, s.heads[1:], s.deprels), 1)]
        text = next((c[9:] for c in s.comments if c.startswith("# text = ")),
                    " ".join(s.forms))
        out = {"text": text, "words": words}
        if settings["marginals"]:
            mu = s.analysis["heads"]
            for m, word in enumerate(words, 1):
                word["heads"] = [round(float(p), 6) for p in mu[:, m]]
        if settings["svg"]:
            out["svg"] = svg(s)
        if settings["k"]:
            out["kbest"] = []
            for p, heads, labels in s.analysis["kbest"]:
                tree = {"probability": p, "heads": [int(h) for h in heads[1:]],
                        "deprels": labels}
                if settings["svg"]:
                    tree["svg"] = svg(_without_probabilities(s).with_tree(heads, labels))
                out["kbest"].append(tree)
        return out


def _without_probabilities(s):
    """The sentence without the best tree's HeadProb and LabelProb (another tree is drawn
    without them)."""
    misc = ["|".join(e for e in m.split("|") if e.split("=")[0] not in PROBABILITIES) or "_"
            for m in s.column(MISC)]
    return s.with_columns({MISC: misc})


PROBABILITIES = ("HeadProb", "LabelProb")


def create_app(model, limits: Limits | None = None) -> Starlette:
    """The app serving `model` (a loaded parser or pipeline)."""
    service = Service(model, limits or Limits())
    page = resources.files("arborparse.service").joinpath("page.html").read_text("utf-8")
    schema = json.loads(resources.files("arborparse.service").joinpath(
        "openapi.json").read_text("utf-8"))

    async def parse(request: Request):
        try:
            size = int(request.headers.get("content-length", "0") or 0)
        except ValueError:
            size = 0
        if size > service.limits.body_bytes:
            return JSONResponse({"error": f"the body has {size} bytes; at most "
                                          f"{service.limits.body_bytes}"}, 413)
        body = b""
        async for chunk in request.stream():
            body += chunk
            if len(body) > service.limits.body_bytes:
                return JSONResponse({"error": f"the body is over "
                                              f"{service.limits.body_bytes} bytes"}, 413)
        try:
            settings = _settings(request, body)
            result = await run_in_threadpool(service.parse, settings)
        except Refused as err:
            return JSONResponse({"error": str(err)}, err.status)
        if isinstance(result, str):
            return PlainTextResponse(result, media_type="text/x-conllu; charset=utf-8")
        return JSONResponse(result)

    async def home(request: Request):
        return HTMLResponse(page)

    async def openapi(request: Request):
        return JSONResponse(schema)

    async def health(request: Request):
        return JSONResponse({"status": "ok", "model": getattr(model, "kind", "?")})

    async def about(request: Request):
        return JSONResponse(describe(model))

    return Starlette(routes=[Route("/", home), Route("/parse", parse, methods=["POST"]),
                             Route("/openapi.json", openapi), Route("/health", health),
                             Route("/model", about)])


def describe(model) -> dict:
    """What the served model is and offers (``GET /model``; the page reads it)."""
    parser = model.parser if isinstance(model, Pipeline) else model
    return {"kind": parser.kind, "capabilities": model.capabilities.names(),
            "info": model.info if isinstance(model, Pipeline) else None}
