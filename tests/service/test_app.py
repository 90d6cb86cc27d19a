"""The HTTP service in process (Starlette's test client, its worker processes started and
stopped with it): every input kind and output, the marginals and k-best trees against the
parser's own, and every bad input refused with a 4xx JSON message while the service keeps
serving."""

import asyncio
import json
import signal
import socket
import subprocess
import sys
import time
import urllib.request

import numpy as np
import pytest
from starlette.testclient import TestClient

import arborparse
from arborparse.service.app import Limits, Service, create_app

TEXT = "The dog barks. It sleeps all day.\n"


@pytest.fixture(scope="module")
def parser(english_pipeline):
    return arborparse.load(english_pipeline)


LIMITS = Limits(body_bytes=20_000, words=300, sentence_words=40)


@pytest.fixture(scope="module")
def client(english_pipeline):
    with TestClient(create_app(english_pipeline, LIMITS, workers=2)) as client:
        yield client


def test_raw_text_to_conllu_as_parse_gives(client, parser):
    r = client.post("/parse", content=TEXT, headers={"content-type": "text/plain"})
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/x-conllu")
    assert r.text == "".join(s.to_text() for s in parser.parse_text(TEXT))


def test_json_in_and_out_with_marginals_and_kbest(client, parser):
    r = client.post("/parse", json={"text": TEXT, "marginals": True, "k": 3, "svg": True})
    assert r.status_code == 200
    sentences = r.json()["sentences"]
    parsed = parser.parse_text(TEXT)
    assert len(sentences) == len(parsed) == 2
    for got, s in zip(sentences, parsed):
        assert [w["head"] for w in got["words"]] == list(s.heads[1:])
        assert [w["deprel"] for w in got["words"]] == s.deprels
        mu = np.array([w["heads"] for w in got["words"]])
        assert np.allclose(mu.sum(axis=1), 1, atol=1e-4)
        assert np.allclose(mu, parser.parser.head_marginals(s)[:, 1:].T, atol=1e-5)
        probabilities = [t["probability"] for t in got["kbest"]]
        assert probabilities == sorted(probabilities, reverse=True) and len(probabilities) == 3
        assert got["kbest"][0]["heads"] == list(s.heads[1:])
        assert got["svg"].count('class="arc') == len(s)
        assert all(t["svg"].startswith("<svg") for t in got["kbest"])
        # the best tree's arcs drawn with their probabilities, the k best without them
        assert got["svg"].count("data-prob=") == len(s)
        assert all("data-prob=" not in t["svg"] for t in got["kbest"])


def test_the_service_answers_as_nlp_and_scores_each_sentence_once(client, parser,
                                                                  monkeypatch):
    from arborparse.linear.parser import LinearParser

    calls = []
    scores = LinearParser._distribution
    monkeypatch.setattr(LinearParser, "_distribution", lambda self, x, *threads:
                        calls.append(1) or scores(self, x, *threads))
    settings = {"text": TEXT, "format": "auto", "output": "json", "marginals": True, "k": 3,
                "svg": True}
    answer = Service(parser, LIMITS).parse(settings)  # a request's work, as a worker does it
    assert len(calls) == 2  # two sentences, each scored once
    r = client.post("/parse", json={"text": TEXT, "marginals": True, "k": 3, "svg": True})
    assert r.status_code == 200 and r.json() == json.loads(json.dumps(answer))
    doc = parser(TEXT, marginals=True, kbest=3)
    for got, sentence in zip(r.json()["sentences"], doc.sentences):
        assert [w["head"] for w in got["words"]] == [w.head for w in sentence.words]
        assert [w["deprel"] for w in got["words"]] == [w.deprel for w in sentence.words]
        assert [t["probability"] for t in got["kbest"]] == \
            [t.probability for t in sentence.kbest]


@pytest.mark.parametrize("model", ["english", "isbn-v2.npz"])
def test_trees_drawn_without_marginals_or_kbest(model, parser):
    """What the page asks of a model without marginals (ISBN), and of any model when the
    marginals are not asked: the trees drawn, nothing else."""
    from pathlib import Path

    folder = Path(__file__).parent.parent / "data" / "models"
    nlp = parser if model == "english" else arborparse.load(folder / model)
    text = TEXT if model == "english" else "\n\n".join(  # tagged: the model has no tagger
        (folder / "isbn-v2.parsed.conllu").read_text().split("\n\n")[:2]) + "\n\n"
    settings = {"text": text, "format": "auto", "output": "json", "svg": True}
    answer = Service(nlp, LIMITS).parse(settings)
    assert [s["svg"].startswith("<svg") for s in answer["sentences"]] == [True, True]
    assert all("kbest" not in s for s in answer["sentences"])


def test_conllu_and_tokenized_input(client, parser):
    conllu = "".join(s.to_text() for s in parser.parse_text(TEXT))
    r = client.post("/parse", content=conllu)  # auto: CoNLL-U
    assert r.status_code == 200 and r.text == conllu
    r = client.post("/parse?format=tokenized&output=json", content="The dog barks .\n")
    assert [w["form"] for w in r.json()["sentences"][0]["words"]] == \
        ["The", "dog", "barks", "."]


LONG = "The dog barks.\n" + " ".join(["word"] * 2000) + "\n"
BAD = [
    ("empty body", dict(content=b""), 400, "the text is empty"),
    ("invalid UTF-8", dict(content=b"The \xff dog"), 400,
     "the body is not UTF-8 at byte 4 (from 0)"),  # as the command line counts
    ("malformed CoNLL-U", dict(content="1\tThe\t_\t_\t_\t_\t9\tdet\t_\t_\n\n",
                               params={"format": "conllu"}), 400, "<request>:1:"),
    ("1 MB body", dict(content=b"a " * 500_000), 413, "at most 20000 bytes"),
    ("a 2,000-word sentence", dict(content=LONG, params={"format": "tokenized"}), 413,
     "sentence 2 (word word word word word ...) has 2000 words; at most 40 a sentence"),
    ("350 words", dict(content="a b c d e f g\n" * 50, params={"format": "tokenized"}), 413,
     "350 words; at most 300 a request"),
    ("wrong content type", dict(content=b"<a/>", headers={"content-type": "application/xml"}),
     415, "content type"),
    ("invalid JSON", dict(content=b"{text:", headers={"content-type": "application/json"}),
     400, "not valid JSON"),
    ("JSON without text", dict(json={"format": "auto"}), 400, 'string "text"'),
    ("JSON with text misspelled", dict(json={"txt": "a"}), 400,
     'the JSON body has no "text", and an unknown field \'txt\' (the fields: text, format, '
     'output, marginals, k, beam, svg)'),
    ("unknown field", dict(json={"text": "a dog", "kbest": 3}), 400,
     "unknown field 'kbest' (the fields: text, format, output, marginals, k, beam, svg)"),
    ("unknown query parameter", dict(content="a dog", params={"K": "3"}), 400,
     "unknown query parameter 'K'"),
    ("unknown format", dict(json={"text": "a", "format": "xml"}), 400,
     'format="xml": one of auto, conllu'),
    ("k = 3.5", dict(json={"text": "a dog", "k": 3.5}), 400, "k=3.5: an integer >= 1"),
    ("k = true", dict(json={"text": "a dog", "k": True}), 400, "k=true: an integer >= 1"),
    ("k = 0", dict(json={"text": "a dog", "k": 0}), 400, "k=0: an integer >= 1"),
    ('k = "3"', dict(json={"text": "a dog", "k": "3"}), 400, 'k="3": an integer >= 1'),
    ("k=three in the query", dict(content="a dog", params={"k": "three", "output": "json"}),
     400, 'k="three": an integer >= 1'),
    ('marginals = "yes"', dict(json={"text": "a dog", "marginals": "yes"}), 400,
     'marginals="yes": true or false'),
    ("k too large", dict(json={"text": "a dog", "k": 99}), 400, "k=99: at most 20"),
    ("beam for a linear model", dict(json={"text": "a dog", "beam": 4}), 422,
     "beam=4 does not apply to this linear model (its options: marginals, k)"),
    ("a lone surrogate", dict(content=b'{"text": "a \\ud800 dog"}',
                              headers={"content-type": "application/json"}), 400,
     'the "text" field holds a lone surrogate (U+D800, character 3)'),
    ("invisible characters only", dict(json={"text": "\u0000\u200b\u0000"}), 400,
     "the text is empty"),
    ("CoNLL-U given as text", dict(content="# sent_id = 1\n1\ta\t_\t_\t_\t_\t0\troot\t_\t_\n",
                                   params={"format": "text"}), 400,
     '<request>:1: looks like CoNLL-U (a "# sent_id =" comment), not text: send it with '
     'format "conllu"'),
    ("CoNLL-U that auto read as text", dict(content="# text = Hi\n# sent_id = 1\nHi.\n"),
     400, 'not text: send it with format "conllu"'),
    ("query parameters beside a JSON body", dict(json={"text": "a dog"}, params={"k": "3"}),
     400, "a JSON body takes its settings as fields, not as query parameters (k)"),
    ("a query parameter twice", dict(content="a dog", params=[("k", "2"), ("k", "3")]), 400,
     "query parameter 'k' given more than once"),
    ("k with CoNLL-U output", dict(json={"text": "a dog", "k": 2, "output": "conllu"}), 400,
     'k comes with output "json"'),
    ("svg with CoNLL-U output", dict(content="a dog", params={"svg": "true",
                                                              "output": "conllu"}), 400,
     'svg comes with output "json"'),
    ("a JSON field twice", dict(content=b'{"text": "a dog", "text": "a cat"}',
                                headers={"content-type": "application/json"}), 400,
     "field 'text' given more than once"),
    ("an unknown charset", dict(content=b"a dog",
                                headers={"content-type": "text/plain; charset=klingon"}), 415,
     "charset 'klingon': not an encoding this service knows"),
    ("bytes not of the charset", dict(content=b"a \xff dog",
                                      headers={"content-type": "text/plain; charset=ascii"}),
     400, "the body is not ascii at byte 2 (from 0)"),
    ("JSON nested too deeply", dict(content=b"[" * 9_000 + b"]" * 9_000,
                                    headers={"content-type": "application/json"}), 400,
     "not valid JSON here (nested too deeply)"),
    ("k of 5,000 digits in the query", dict(content="a dog", params={"k": "9" * 5000}), 400,
     "an integer >= 1"),
    ("k of 5,000 digits in JSON", dict(content=b'{"text": "a dog", "k": ' + b"9" * 5000 + b"}",
                                       headers={"content-type": "application/json"}), 400,
     "not valid JSON (a number of too many digits)"),
]


@pytest.mark.parametrize("name,request_args,status,message", BAD, ids=[b[0] for b in BAD])
def test_bad_input_is_refused_and_the_service_goes_on(client, name, request_args, status,
                                                      message):
    r = client.post("/parse", **request_args)
    assert r.status_code == status, r.text
    assert message in r.json()["error"]
    assert client.post("/parse", content=TEXT).status_code == 200


def test_a_client_gone_before_its_body_ends_is_no_error(english_pipeline):
    """No traceback in the log, no 500: nobody is there to answer."""
    app = create_app(english_pipeline, LIMITS, workers=1)
    received = iter([{"type": "http.request", "body": b"a d", "more_body": True},
                     {"type": "http.disconnect"}])
    sent = []

    async def receive():
        return next(received)

    async def send(message):
        sent.append(message)

    scope = {"type": "http", "method": "POST", "path": "/parse", "root_path": "",
             "query_string": b"", "http_version": "1.1", "scheme": "http",
             "headers": [(b"content-type", b"text/plain"), (b"content-length", b"100")]}
    asyncio.run(app(scope, receive, send))
    assert sent[0]["type"] == "http.response.start" and sent[0]["status"] == 400


def test_a_plain_body_is_read_in_its_charset(client):
    r = client.post("/parse", content="Caf\u00e9 au lait.".encode("latin-1"),
                    headers={"content-type": "text/plain; charset=latin-1"},
                    params={"output": "json"})
    assert r.status_code == 200, r.text
    assert r.json()["sentences"][0]["words"][0]["form"] == "Caf\u00e9"


def test_lines_are_sentences_never_split(client):
    r = client.post("/parse", json={"text": "The dog barks. The cat\nsleeps.\n",
                                    "format": "lines"})
    assert r.status_code == 200, r.text
    assert [[w["form"] for w in s["words"]] for s in r.json()["sentences"]] == \
        [["The", "dog", "barks", ".", "The", "cat"], ["sleeps", "."]]
    text = "The dog barks. The cat\nsleeps.\n"
    for word in (w for s in r.json()["sentences"] for w in s["words"]):  # offsets, as nlp's
        assert text[word["start_char"]:word["end_char"]] == word["form"]


def test_query_parameters_are_read_as_the_json_fields(client):
    r = client.post("/parse?output=json&marginals=true&k=2&svg=0", content=TEXT)
    assert r.status_code == 200, r.text
    sentence = r.json()["sentences"][0]
    assert len(sentence["kbest"]) == 2 and "heads" in sentence["words"][0]
    assert "svg" not in sentence


@pytest.mark.parametrize("method,path,message", [
    ("GET", "/nowhere", "GET /nowhere: not found"),
    ("GET", "/parse", "GET /parse: method not allowed"),
    ("DELETE", "/model", "DELETE /model: method not allowed"),
    ("POST", "/parse/", "POST /parse/: not found")])
def test_unknown_paths_and_methods_answer_json(client, method, path, message):
    r = client.request(method, path)
    assert r.status_code == (404 if "found" in message else 405)
    assert r.headers["content-type"] == "application/json"
    error = r.json()["error"]
    assert error.startswith(message) and "POST /parse" in error and "GET /model" in error


def test_beam_is_taken_by_a_model_with_beam_search_only():
    """An ISBN model (beam search; no marginals, no k-best): beam goes to its parse, k and
    marginals are refused as its capabilities say."""
    from treebanks import separable, separable_text

    from arborparse.isbn.train import ISBNTrainer

    model = ISBNTrainer(hidden=8, cutoff=1, unknown_cutoff=0, epochs=1,
                        progress=False).fit(separable(1)).parser_
    text = separable_text(1)
    given, parse = [], model.parse
    model.parse = lambda sentences, **options: given.append(options) or \
        parse(sentences, **options)
    settings = {"text": text, "format": "auto", "output": "json", "marginals": False,
                "beam": 2, "svg": False}
    assert Service(model, Limits()).parse(settings) and given == [{"beam": 2}]
    del model.parse
    with TestClient(create_app(model, workers=1)) as client:  # the workers load a copy
        r = client.post("/parse", json={"text": text, "beam": 2})
        assert r.status_code == 200, r.text
        assert [[w["head"] for w in s["words"]] for s in r.json()["sentences"]] == \
            [list(s.heads[1:]) for s in model.parse(separable(1), beam=2)]
        for field, value, what in (("k", 3, "k=3"), ("marginals", True, "marginals=true")):
            r = client.post("/parse", json={"text": text, field: value})
            assert r.status_code == 422
            assert r.json()["error"] == f"{what} does not apply to this isbn model " \
                                        f"(its options: beam)"
        assert client.post("/parse", json={"text": text, "beam": 65}).json()["error"] == \
            "beam=65: at most 64"


def test_the_page_the_schema_and_health(client):
    page = client.get("/")
    assert page.status_code == 200 and "<textarea" in page.text
    schema = client.get("/openapi.json").json()
    assert "/parse" in schema["paths"] and schema["openapi"].startswith("3.")
    assert client.get("/health").json() == {"status": "ok",
                                            "kind": client.get("/model").json()["kind"]}
    about = client.get("/model").json()
    assert about["kind"] == "linear" and "kbest" in about["capabilities"]
    assert about["info"]["family"] == "linear"
    assert json.loads(client.get("/openapi.json").text) == schema
    # the schema is what the service checks: the JSON fields are the query parameters
    # and the text, and every refusal of /parse is declared
    request = schema["components"]["schemas"]["Request"]
    post = schema["paths"]["/parse"]["post"]
    query = {p["name"]: p["schema"] for p in post["parameters"]}
    assert set(request["properties"]) == {"text", *query}
    assert request["additionalProperties"] is False
    assert all(spec["type"] == request["properties"][name]["type"]
               for name, spec in query.items())
    assert {"400", "405", "413", "415", "422", "503"} <= set(post["responses"])


def test_serve_says_a_port_in_use_before_any_work(english_pipeline, monkeypatch):
    from click.testing import CliRunner

    import arborparse.service.app
    from arborparse.cli import cli

    monkeypatch.setattr(arborparse.service.app, "create_app", lambda *a: pytest.fail("work"))

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        r = CliRunner().invoke(cli, ["serve", "--model", str(english_pipeline), "--port",
                                     str(port)])
    assert r.exit_code == 1
    assert r.output == f"Error: cannot serve on 127.0.0.1:{port}: Address already in use\n"


def test_a_body_that_stalls_is_answered_408_within_the_timeout(english_pipeline):
    """A client that sends part of its body and then nothing is answered within the timeout,
    and its connection closed."""
    app = create_app(english_pipeline, LIMITS, workers=1, timeout=0.2)
    chunks = iter([{"type": "http.request", "body": b"a d", "more_body": True}])
    sent = []

    async def receive():
        for message in chunks:
            return message
        await asyncio.sleep(3600)  # the rest never comes

    async def send(message):
        sent.append(message)

    scope = {"type": "http", "method": "POST", "path": "/parse", "root_path": "",
             "query_string": b"", "http_version": "1.1", "scheme": "http",
             "headers": [(b"content-type", b"text/plain"), (b"content-length", b"100")]}
    asyncio.run(asyncio.wait_for(app(scope, receive, send), 60))
    assert sent[0]["type"] == "http.response.start" and sent[0]["status"] == 408
    assert (b"connection", b"close") in sent[0]["headers"]  # the rest of the body is not read
    assert json.loads(sent[1]["body"]) == {"error": "the body did not arrive within 0.2 s"}


def test_serve_answers_on_its_port_and_stops_on_ctrl_c(english_pipeline):
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    server = subprocess.Popen([sys.executable, "-m", "arborparse", "serve", "--model",
                               str(english_pipeline), "--port", str(port), "--workers", "1"],
                              stderr=subprocess.PIPE, text=True)
    try:
        for _ in range(600):  # the model loads, then the port answers
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health") as r:
                    assert json.load(r)["status"] == "ok"
                break
            except OSError:
                assert server.poll() is None, server.stderr.read()
                time.sleep(0.1)
        else:
            pytest.fail("the service did not answer")
    finally:
        server.send_signal(signal.SIGINT)
        assert server.wait(timeout=60) == 130  # interrupted, as the command line says
    said = server.stderr.read()
    assert said.startswith(f"serving {english_pipeline} on http://127.0.0.1:{port}/")
    assert said.endswith("\nInterrupted: the service stopped\n"), said


def test_a_model_without_a_parser_is_served():
    """A tagger alone: /health and /model say its kind, /parse tags CoNLL-U."""
    from treebanks import separable

    from arborparse.pipeline import Pipeline
    from arborparse.text.tagger import Tagger

    data = separable(1)
    tagger = Pipeline(Tagger(epochs=2, bits=12, progress=False).fit(data))
    untagged = [s.with_columns({3: ["_"] * len(s)}) for s in data[:2]]
    with TestClient(create_app(tagger, workers=1)) as client:
        assert client.get("/health").json() == {"status": "ok", "kind": "pipeline"}
        assert client.get("/model").json()["kind"] == "pipeline"
        r = client.post("/parse", content="".join(s.to_text() for s in untagged))
        assert r.status_code == 200, r.text
        assert [line.split("\t")[3] for line in r.text.splitlines() if "\t" in line] == \
            [u for s in tagger.parse(untagged) for u in s.upos]


def test_a_worker_keeps_its_model_out_of_full_collections(english_pipeline, monkeypatch):
    """A worker process, once its model is loaded, freezes the objects it holds (the model
    lives as long as the worker): the garbage collector's full collections skip them."""
    import gc

    from arborparse.service import app as service_app

    monkeypatch.setattr(service_app, "_service", None)
    before = gc.get_freeze_count()
    try:
        service_app._start_worker(str(english_pipeline), LIMITS)
        assert service_app._service is not None and gc.get_freeze_count() > before
    finally:
        gc.unfreeze()
