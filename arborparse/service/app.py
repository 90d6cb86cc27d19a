"""The HTTP service: an ASGI app (Starlette) around one model, loaded once.

``POST /parse``: the body is raw text, tokenized text (one sentence per line) or CoNLL-U /
CoNLL-X, either plain (``text/plain``; the settings in the query string) or JSON
(``application/json``: ``{"text": ..., "format": ..., "output": ..., "marginals": ...,
"k": ..., "beam": ..., "svg": ...}``). ``format``: ``auto`` (default: CoNLL when the first
line that is not a comment has tab-separated columns, raw text otherwise), ``conllu``,
``conllx``, ``text``, ``lines`` (raw text, one sentence per line) or ``tokenized``; raw
text that looks like CoNLL-U is refused. ``output``: ``conllu`` (default for a plain body)
or ``json`` (default for JSON). ``marginals=true`` adds each word's probability distribution
over its heads, ``k=K`` the K most probable trees with their probabilities (JSON output;
models whose parser gives them: linear and neural), ``beam=B`` a beam width (isbn),
``svg=true`` each tree drawn (`arborparse.render.svg`; with marginals, arcs as sure as the
parser is).

The fields (and query parameters) are those of the schema (`openapi.json`, read here), and
are checked against it strictly: an unknown field, or a value of another type (``"k": "3"``,
``"k": true``, ``"k": 0``) is refused naming the field; what the model cannot honour is
refused as `arborparse.options.check_options` refuses it, by its capabilities. Refusals are
JSON ``{"error": "..."}`` with a 4xx status: 400 bad input, 404 and 405 a path or method not
served, 413 too large (naming the limit, and the sentence where one sentence is over it),
415 wrong content type, 422 an option the model does not take, 503 not answered within the
timeout; 408 where the body itself did not arrive within it.

Parsing runs in a pool of worker processes (`workers.Workers`, one per core by default,
and a spare one for requests of at most 50 words when the others are busy), each of which
loads the model once; requests wait for a worker in order of cost (their words: a
one-sentence request is not queued behind 250-word documents, and a large one is aged so
that it is not passed over forever: `workers.Admission`). A request not answered
within the timeout (30 s by default) gets 503 and its work is abandoned (taken out of the
queue; one that a worker is already running is finished there and its answer dropped).
The event loop only reads, checks and answers, so ``GET /health`` answers at once under any
load.

``GET /``: the web page (`page.html`); ``GET /openapi.json``: the schema; ``GET /health``.
`serving(app)` runs an app in a thread on a free loopback port (tests, screenshots).
"""

from __future__ import annotations

import asyncio
import gc
import io
import json
import os
import socket
import tempfile
import threading
import time
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from arborparse.errors import ArborparseError
from arborparse.io.conllu import iter_conllu, lines_of
from arborparse.io.plain import characters, iter_tokenized, prose_lines
from arborparse.options import OptionError, check_options
from arborparse.pipeline import Pipeline, load, split_tokens
from arborparse.render import svg
from arborparse.document import Sentence as View
from arborparse.service import AGING, SHORT, TIMEOUT
from arborparse.service.workers import Overdue, Workers
from arborparse.text.rules import invisible

SCHEMA = json.loads(resources.files("arborparse.service").joinpath("openapi.json")
                    .read_text("utf-8"))
# the fields of a JSON body and the query parameters of a plain one, as the schema has them
FIELDS = SCHEMA["components"]["schemas"]["Request"]["properties"]
PARAMETERS = {p["name"]: p["schema"] for p in SCHEMA["paths"]["/parse"]["post"]["parameters"]}
OPTIONS = {"marginals": "marginals", "kbest": "k", "beam": "beam"}  # parse option -> field


@dataclass
class Limits:
    """What one request may hold."""

    body_bytes: int = 256 * 1024
    words: int = 5000
    sentence_words: int = 250
    k: int = 20
    beam: int = 64


class Refused(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status

    def __reduce__(self):  # raised in a worker process, it comes back pickled
        return Refused, (self.status, str(self))


def _settings(request: Request, body: bytes) -> dict:
    """The fields of a request (those of the JSON body, or the query string's and the text
    of a plain body) checked against the schema, defaults filled in."""
    kind, *parameters = request.headers.get("content-type", "text/plain").split(";")
    kind = kind.strip().lower()
    if kind == "application/json":
        try:
            data = json.loads(body, object_pairs_hook=_once)
        except _Twice as err:
            raise Refused(400, f"field {err.args[0]!r} given more than once") from None
        except RecursionError:
            raise Refused(400, "the body is not valid JSON here (nested too deeply)") from None
        except (UnicodeDecodeError, ValueError) as err:
            why = "a number of too many digits" if "digits" in str(err) else err
            raise Refused(400, f"the body is not valid JSON ({why})") from None
        if isinstance(data, dict) and "text" not in data and \
                (unknown := [name for name in data if name not in FIELDS]):  # "txt"
            raise Refused(400, f'the JSON body has no "text", and an unknown field '
                               f"{unknown[0]!r} (the fields: {', '.join(FIELDS)})")
        if not isinstance(data, dict) or not isinstance(data.get("text"), str):
            raise Refused(400, 'the JSON body must be an object with a string "text"')
        if request.query_params:
            raise Refused(400, "a JSON body takes its settings as fields, not as query "
                               f"parameters ({', '.join(request.query_params)})")
        try:
            characters(data["text"], 'the "text" field')
        except ArborparseError as err:
            raise Refused(400, str(err)) from None
        settings = _checked(data, FIELDS, "field")
    elif kind in ("text/plain", "text/x-conllu", ""):
        charset = next((p.split("=", 1)[1].strip().strip('"') for p in parameters
                        if p.strip().lower().startswith("charset=")), "UTF-8")
        try:
            text = body.decode(charset)
        except LookupError:
            raise Refused(415, f"charset {charset!r}: not an encoding this service "
                               "knows (send UTF-8)") from None
        except UnicodeDecodeError as err:
            raise Refused(400, f"the body is not {charset} at byte {err.start} (from 0)"
                          ) from None
        names = [name for name, _ in request.query_params.multi_items()]
        if twice := sorted({name for name in names if names.count(name) > 1}):
            raise Refused(400, f"query parameter {twice[0]!r} given more than once")
        query = {name: _typed(value, PARAMETERS.get(name, {}))
                 for name, value in request.query_params.items()}
        settings = {**_checked(query, PARAMETERS, "query parameter"), "text": text}
    else:
        raise Refused(415, f"content type {kind!r}: send text/plain or application/json")
    if all(c.isspace() or invisible(c) for c in settings["text"]):
        raise Refused(400, "the text is empty (nothing but spaces and invisible characters)")
    return settings


DIGITS = 4000  # a longer integer is refused as one (Python converts at most 4,300 digits)


class _Twice(ValueError):
    """A JSON object with a key twice (`_once`)."""


def _once(pairs: list) -> dict:
    """A JSON object's pairs as a dict, refusing a key given twice (json keeps the last)."""
    out = {}
    for key, value in pairs:
        if key in out:
            raise _Twice(key)
        out[key] = value
    return out


def _typed(value: str, spec: dict):
    """A query string's `value` as the JSON value it stands for when `spec` (a schema) asks
    for a boolean or an integer and it spells one; else as it is (and refused)."""
    if spec.get("type") == "boolean":
        return {"true": True, "1": True, "yes": True, "false": False, "0": False,
                "no": False}.get(value.lower(), value)
    if spec.get("type") == "integer" and value.isascii() and value.lstrip("-").isdigit() \
            and len(value) <= DIGITS:
        return int(value)
    return value


def _checked(given: dict, specs: dict, what: str) -> dict:
    """`given` (name -> value) with the defaults of `specs` (name -> the value's schema:
    a string, with `enum` its choices; a boolean; an integer, with `minimum`) filled in;
    an unknown name or a value of the wrong type is refused (400), naming it."""
    for name, value in given.items():
        spec = specs.get(name)
        if spec is None:
            raise Refused(400, f"unknown {what} {name!r} (the {what}s: {', '.join(specs)})")
        kind = spec["type"]
        if kind == "integer":
            ok = isinstance(value, int) and not isinstance(value, bool) and \
                value >= spec.get("minimum", value)
            expected = f"an integer >= {spec['minimum']}" if "minimum" in spec else \
                "an integer"
        elif kind == "boolean":
            ok, expected = isinstance(value, bool), "true or false"
        else:
            choices = spec.get("enum")
            ok = isinstance(value, str) and (choices is None or value in choices)
            expected = f"one of {', '.join(choices)}" if choices else "a string"
        if not ok:
            raise Refused(400, f"{name}={json.dumps(value)}: {expected}")
    return {**{name: spec["default"] for name, spec in specs.items() if "default" in spec},
            **given}


def _format(text: str) -> str:
    """``auto``: CoNLL when the first line that is not a comment has tabs, else raw text."""
    for line in lines_of(text):
        if line.strip() and not line.startswith("#"):
            return "conllu" if "\t" in line else "text"
    return "text"


def _cost(settings: dict) -> int:
    """The words of a request, estimated without tokenizing it (the admission order's
    cost): its lines with tabs for CoNLL, its whitespace-separated tokens otherwise."""
    text = settings["text"]
    fmt = _format(text) if settings["format"] == "auto" else settings["format"]
    if fmt in ("conllu", "conllx"):
        return sum(1 for line in lines_of(text) if "\t" in line)
    return len(text.split())


class Service:
    """The model and the limits; `parse` does the work of one request (in a worker
    process: `_start_worker`)."""

    def __init__(self, model, limits: Limits):
        self.model, self.limits = model, limits

    def sentences(self, text: str, fmt: str):
        if fmt == "auto":
            fmt = _format(text)
        if fmt in ("text", "lines"):
            model = self.model if isinstance(self.model, Pipeline) else \
                Pipeline(parser=self.model)
            if model.tokenizer is None:
                raise Refused(422, "this model has no tokenizer: send tokenized text or "
                                   "CoNLL-U")
            lines = prose_lines(text, "<request>", 'send it with format "conllu"')
            return list(model.tokenizer.iter_tokenize(lines, per_line=fmt == "lines",
                                                      crossing=model.crossing()))
        source = io.StringIO(text)
        source.name = "<request>"
        return list(split_tokens(self.model, iter_tokenized(source)) if fmt == "tokenized"
                    else iter_conllu(source, fmt))

    def options(self, settings: dict) -> dict:
        """The parse options that `settings` ask for (false and absent ones are not asked),
        refused where the model does not take them (422) or over the limits (400)."""
        options = {option: settings[field] for option, field in OPTIONS.items()
                   if settings.get(field)}
        if settings.get("output") == "conllu" and (settings.get("k") or settings.get("svg")):
            given = "k" if settings.get("k") else "svg"
            raise Refused(400, f'{given} comes with output "json" (CoNLL-U holds one tree a '
                               "sentence and no drawing)")
        try:
            check_options(self.model, options)
        except OptionError as err:
            raise Refused(422, str(err.renamed(OPTIONS, others=False, spell=json.dumps))
                          ) from None
        for field in ("k", "beam"):
            if settings.get(field, 0) > getattr(self.limits, field):
                raise Refused(400, f"{field}={settings[field]}: at most "
                                   f"{getattr(self.limits, field)}")
        return options

    def parse(self, settings: dict):
        limits, options = self.limits, self.options(settings)
        try:
            sentences = self.sentences(settings["text"], settings["format"])
        except ArborparseError as err:
            raise Refused(400, str(err)) from None
        for i, sentence in enumerate(sentences, 1):
            if len(sentence) > limits.sentence_words:
                opening = " ".join(sentence.forms[:5])
                raise Refused(413, f"sentence {i} ({opening} ...) has {len(sentence)} "
                                   f"words; at most {limits.sentence_words} a sentence")
        words = sum(map(len, sentences))
        if words > limits.words:
            raise Refused(413, f"{words} words; at most {limits.words} a request")
        try:  # one scoring per sentence serves the tree, the marginals and the k best
            parsed = self.model.parse(sentences, **options)
        except ArborparseError as err:
            raise Refused(400, str(err)) from None
        if settings["output"] == "conllu":
            return "".join(s.to_text() for s in parsed)
        return {"sentences": [self._json(s, settings) for s in parsed]}

    @staticmethod
    def _json(s, settings) -> dict:
        """The sentence as `arborparse.document.Sentence.to_dict` gives it, with its
        drawings if asked."""
        out = View(s).to_dict()
        if settings["svg"]:
            out["svg"] = svg(s)
            for tree, (_, heads, labels) in zip(out.get("kbest", ()),
                                                (s.analysis or {}).get("kbest", ())):
                tree["svg"] = svg(s.with_tree(heads, labels))  # without s's HeadProb
        return out


_service: Service | None = None  # in a worker process: what it parses with
# the answer to a request whose body was not read to its end ends its connection too, so
# that what is left of the body is not read as the next request
CLOSE = {"connection": "close"}


def _start_worker(path: str, limits: Limits) -> None:
    """Set up a worker process: load the model (once), and leave its objects out of the
    garbage collector's full collections (`gc.freeze`: the worker keeps them to its end)."""
    global _service
    _service = Service(load(path), limits)
    gc.freeze()


def _parse(settings: dict):
    """One request's work, in a worker process."""
    return _service.parse(settings)


@contextmanager
def _model_file(model):
    """The path of `model`'s file: its own if `model` is a path, else a temporary one that
    it is saved to (removed after)."""
    if isinstance(model, (str, os.PathLike)):
        yield str(model)
        return
    with tempfile.TemporaryDirectory(prefix="arborparse-service-") as folder:
        path = Path(folder) / "model.npz"
        model.save(path)
        yield str(path)


def create_app(model, limits: Limits | None = None, workers: int | None = None,
               timeout: float = TIMEOUT, aging: float = AGING,
               short: int = SHORT) -> Starlette:
    """The app serving `model` (a model file's path, or a loaded parser or pipeline, which
    the worker processes then load from a temporary copy) with `workers` processes (default:
    one per core) and a spare one for requests of at most `short` words (0: none), and
    `timeout` seconds per request; `aging`, in words per second, is how fast a waiting
    request gains rank (`workers.Admission`; ``math.inf``: first come, first served).

    The workers start with the app (its lifespan: uvicorn runs it; a test client runs it
    when used as a context manager, ``with TestClient(app) as client``) and stop with it;
    meanwhile they are ``app.state.workers``.
    """
    path, model = (model, load(model)) if isinstance(model, (str, os.PathLike)) else \
        (None, model)
    service = Service(model, limits or Limits())
    processes = workers or os.cpu_count() or 1

    @asynccontextmanager
    async def lifespan(app):
        with _model_file(path or model) as file:
            pool = Workers(processes, _start_worker, (file, service.limits), timeout, aging,
                           short)
            try:
                await pool.start()
                app.state.workers = pool
                yield
            finally:
                pool.close()

    page = resources.files("arborparse.service").joinpath("page.html").read_text("utf-8")

    async def parse(request: Request):
        try:
            size = int(request.headers.get("content-length", "0") or 0)
        except ValueError:
            size = 0
        if size > service.limits.body_bytes:
            return JSONResponse({"error": f"the body has {size} bytes; at most "
                                          f"{service.limits.body_bytes} bytes"}, 413)
        body = b""
        try:  # the whole body within the timeout (a slow or stalled one holds nothing long)
            async with asyncio.timeout(timeout):
                async for chunk in request.stream():
                    body += chunk
                    if len(body) > service.limits.body_bytes:
                        return JSONResponse({"error": f"the body is over "
                                                      f"{service.limits.body_bytes} bytes"},
                                            413, CLOSE)
        except ClientDisconnect:  # gone before its body ended: no one to answer
            return Response(status_code=400)
        except TimeoutError:
            return JSONResponse({"error": f"the body did not arrive within {timeout:g} s"},
                                408, CLOSE)
        try:
            settings = _settings(request, body)
            service.options(settings)  # refused here, before it waits for a worker
            result = await request.app.state.workers.run(_cost(settings), _parse, settings)
        except Refused as err:
            return JSONResponse({"error": str(err)}, err.status)
        except Overdue as err:
            return JSONResponse({"error": str(err)}, 503)
        if isinstance(result, str):
            return PlainTextResponse(result, media_type="text/x-conllu; charset=utf-8")
        return JSONResponse(result)

    async def home(request: Request):
        return HTMLResponse(page)

    async def openapi(request: Request):
        return JSONResponse(SCHEMA)

    async def health(request: Request):
        return JSONResponse({"status": "ok", "kind": kind})  # as GET /model says

    async def about(request: Request):
        return JSONResponse(describe(model))

    kind = describe(model)["kind"]

    routes = [Route("/", home), Route("/parse", parse, methods=["POST"]),
              Route("/openapi.json", openapi), Route("/health", health),
              Route("/model", about)]
    served = ", ".join(f"{'/'.join(sorted(r.methods - {'HEAD'}))} {r.path}" for r in routes)

    async def not_served(request: Request, err: HTTPException):
        """404, 405 (and any other refusal of Starlette's own) as JSON, naming what is
        served."""
        return JSONResponse({"error": f"{request.method} {request.url.path}: "
                                      f"{err.detail.lower()} (the service answers {served})"},
                            err.status_code, headers=err.headers)

    app = Starlette(routes=routes, exception_handlers={HTTPException: not_served},
                    lifespan=lifespan)
    app.router.redirect_slashes = False  # /parse/ is none of ours: a JSON 404, no redirect
    return app


def describe(model) -> dict:
    """What the served model is and offers (``GET /model``; the page reads it)."""
    parser = model.parser if isinstance(model, Pipeline) else model
    return {"kind": (parser or model).kind, "capabilities": model.capabilities.names(),
            "info": model.info if isinstance(model, Pipeline) else None}


@contextmanager
def serving(app, host: str = "127.0.0.1"):
    """`app` served by uvicorn in a thread on a free port of `host` (for tests and
    scripts): yields its URL, ``http://host:port/``, once it is up, and stops it after."""
    import uvicorn

    with socket.socket() as s:
        s.bind((host, 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        if not thread.is_alive():
            raise RuntimeError(f"the server did not start on {host}:{port}")
        time.sleep(0.05)
    try:
        yield f"http://{host}:{port}/"
    finally:
        server.should_exit = True
        thread.join(10)
