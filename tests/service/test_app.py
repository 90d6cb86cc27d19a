"""The HTTP service in process (Starlette's test client): every input kind and output, the
marginals and k-best trees against the parser's own, and every bad input refused with a
4xx JSON message while the service keeps serving."""

import json

import numpy as np
import pytest
from starlette.testclient import TestClient

import arborparse
from arborparse.service.app import Limits, create_app

TEXT = "The dog barks. It sleeps all day.\n"


@pytest.fixture(scope="module")
def parser(english_pipeline):
    return arborparse.load(english_pipeline)


@pytest.fixture(scope="module")
def client(parser):
    return TestClient(create_app(parser, Limits(body_bytes=20_000, words=300,
                                                sentence_words=40)))


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


def test_the_service_answers_as_nlp_and_scores_each_sentence_once(client, parser,
                                                                  monkeypatch):
    from arborparse.linear.parser import LinearParser

    calls = []
    scores = LinearParser._scores
    monkeypatch.setattr(LinearParser, "_scores", lambda self, x: calls.append(1) or
                        scores(self, x))
    r = client.post("/parse", json={"text": TEXT, "marginals": True, "k": 3, "svg": True})
    assert r.status_code == 200 and len(calls) == 2  # two sentences, each scored once
    doc = parser(TEXT, marginals=True, kbest=3)
    for got, sentence in zip(r.json()["sentences"], doc.sentences):
        assert [w["head"] for w in got["words"]] == [w.head for w in sentence.words]
        assert [w["deprel"] for w in got["words"]] == [w.deprel for w in sentence.words]
        assert [t["probability"] for t in got["kbest"]] == \
            [t.probability for t in sentence.kbest]


def test_conllu_and_tokenized_input(client, parser):
    conllu = "".join(s.to_text() for s in parser.parse_text(TEXT))
    r = client.post("/parse", content=conllu)  # auto: CoNLL-U
    assert r.status_code == 200 and r.text == conllu
    r = client.post("/parse?format=tokenized&output=json", content="The dog barks .\n")
    assert [w["form"] for w in r.json()["sentences"][0]["words"]] == \
        ["The", "dog", "barks", "."]


BAD = [
    ("empty body", dict(content=b""), 400, "the text is empty"),
    ("invalid UTF-8", dict(content=b"The \xff dog"), 400, "not UTF-8"),
    ("malformed CoNLL-U", dict(content="1\tThe\t_\t_\t_\t_\t9\tdet\t_\t_\n\n",
                               params={"format": "conllu"}), 400, "<request>:1:"),
    ("1 MB body", dict(content=b"a " * 500_000), 413, "bytes"),
    ("a 2,000-word sentence", dict(content=" ".join(["word"] * 2000) + "\n",
                                   params={"format": "tokenized"}), 413, "words"),
    ("wrong content type", dict(content=b"<a/>", headers={"content-type": "application/xml"}),
     415, "content type"),
    ("invalid JSON", dict(content=b"{text:", headers={"content-type": "application/json"}),
     400, "not valid JSON"),
    ("JSON without text", dict(json={"txt": "a"}), 400, 'string "text"'),
    ("unknown format", dict(json={"text": "a", "format": "xml"}), 400, "format: one of"),
    ("k too large", dict(json={"text": "a dog", "k": 99}), 400, "k: between"),
]


@pytest.mark.parametrize("name,request_args,status,message", BAD, ids=[b[0] for b in BAD])
def test_bad_input_is_refused_and_the_service_goes_on(client, name, request_args, status,
                                                      message):
    r = client.post("/parse", **request_args)
    assert r.status_code == status, r.text
    assert message in r.json()["error"]
    assert client.post("/parse", content=TEXT).status_code == 200


def test_the_page_the_schema_and_health(client):
    page = client.get("/")
    assert page.status_code == 200 and "<textarea" in page.text
    schema = client.get("/openapi.json").json()
    assert "/parse" in schema["paths"] and schema["openapi"].startswith("3.")
    assert client.get("/health").json()["status"] == "ok"
    about = client.get("/model").json()
    assert about["kind"] == "linear" and "kbest" in about["capabilities"]
    assert about["info"]["family"] == "linear"
    assert json.loads(client.get("/openapi.json").text) == schema
