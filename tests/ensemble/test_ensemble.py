"""The ensemble of two trained parsers: its tree is the best of the mixture of their head
marginals (brute force), its labels and marginals the mixture's, each parser alone at
weights 1 and 0; `combine` chooses the weight on dev as the parse then scores it; the model
file round-trips, says what it is, and refuses what it cannot be."""

import types
import warnings

import numpy as np
import pytest
from click.testing import CliRunner
from oracles import all_trees

import arborparse
from arborparse import registry
from arborparse.cli import cli
from arborparse.ensemble.combine import WEIGHTS
from arborparse.ensemble.options import EnsembleOptions
from arborparse.ensemble.parser import PRUNE, EnsembleParser, left_out
from arborparse.errors import ArborparseError
from arborparse.eval import evaluate
from arborparse.io import model_files, read_conllu, write_conllu
from arborparse.io.conllu import MISC, UPOS
from arborparse.io.model_files import ModelFileError
from arborparse.neural.train import NeuralTrainer
from arborparse.options import Capabilities, OptionError
from arborparse.pipeline import Pipeline, offer
from arborparse.trees.decode import best_tree

TINY = dict(hidden=32, layers=1, word_dim=16, batch_size=8, dropout=0.0, learning_rate=1e-2,
            progress=False)


@pytest.fixture(scope="module")
def parts(ud, english_pipeline):
    """(the English pipeline, a small neural parser of the same 300 sentences, 40 dev
    sentences tagged by the pipeline)."""
    sentences = read_conllu(ud / "UD_English-EWT" / "en_ewt-ud-dev.conllu")
    pipeline = arborparse.load(english_pipeline)
    neural = NeuralTrainer(epochs=3, **TINY).fit(sentences[:300]).parser_
    gold = sentences[300:340]
    return pipeline, neural, gold, pipeline.parse(gold, retag=True)


def offer_of(header):
    return EnsembleOptions.offers(header)


def misc_values(sentence, key):
    return np.array([float(sentence.rows[r][MISC].split(f"{key}=")[1].split("|")[0])
                     for r in sentence.word_rows])


def test_at_weights_1_and_0_each_parser_parses_as_its_own_mbr(parts):
    """... the linear one over the trees its arcs pruned by the neural one leave."""
    pipeline, neural, _, tagged = parts
    first = EnsembleParser(pipeline.parser, neural, 1.0).parse(tagged)
    linear = pipeline.parser
    for s, parsed in zip(tagged, first):
        cut = left_out(neural.head_marginals(s), linear.single_root)
        ((_, mu, _),) = linear.iter_mixture([s], left_out=[cut])
        assert parsed.heads.tolist() == best_tree(mu, linear.decoder == "eisner",
                                                  linear.single_root).tolist()
        assert parsed.deprels == [linear.labels[k] for k in linear.label_distribution(
            s, parsed.heads).argmax(axis=1)]
    second = EnsembleParser(pipeline.parser, neural, 0.0).parse(tagged)
    alone = neural.parse(tagged, decode_as="mbr", keep_tags=True)
    assert [s.heads.tolist() for s in second] == [s.heads.tolist() for s in alone]
    assert [s.deprels for s in second] == [s.deprels for s in alone]
    assert [s.upos for s in second] == [s.upos for s in tagged]  # the input's tags


def test_each_member_reads_a_sentence_once_and_a_neural_first_tags_as_it_parses(
        parts, monkeypatch):
    """Parsing encodes each sentence once in each parser (the neural network's encoder one
    call per batch, the linear model's encoding one per sentence); a neural first parser
    gives the tags and lemmas its own parse gives; what an earlier parse left in the
    sentences' analysis is gone; a linear second parser's warning of words without tags is
    given."""
    from arborparse.io.validate import MissingTagsWarning
    from arborparse.linear.model import LinearModel
    from arborparse.neural.network import Network

    pipeline, neural, _, tagged = parts
    calls = {"encode": 0, "encoded": 0}
    encode, encoded = Network.encode, LinearModel.encoded

    def counted(name, method):
        def wrapper(*args, **kwargs):
            calls[name] += 1
            return method(*args, **kwargs)
        return wrapper
    monkeypatch.setattr(Network, "encode", counted("encode", encode))
    monkeypatch.setattr(LinearModel, "encoded", counted("encoded", encoded))
    EnsembleParser(pipeline.parser, neural, 0.5).parse(tagged, marginals=True)
    assert calls == {"encode": 1, "encoded": len(tagged)}  # 40 sentences: one batch
    monkeypatch.setattr(Network, "encode", encode)
    monkeypatch.setattr(LinearModel, "encoded", encoded)
    analysed = neural.parse(tagged, marginals=True, kbest=2)  # analysis: heads, kbest
    untagged = [s.with_columns({UPOS: ["_"] * len(s)}) for s in analysed]
    mixed = EnsembleParser(neural, pipeline.parser, 0.5)
    assert [s.upos for s in mixed.parse(untagged)] == \
        [s.upos for s in neural.parse(untagged)]
    assert all(s.analysis is None for s in mixed.parse(analysed))
    assert all(set(s.analysis) == {"heads"} for s in mixed.parse(analysed, marginals=True))
    partly = [tagged[0].with_columns({UPOS: ["_"] + tagged[0].upos[1:]}), *tagged[1:3]]
    with pytest.warns(MissingTagsWarning, match="1 word"):
        mixed.parse(partly, keep_tags=True)


@pytest.mark.parametrize("decoder", ["mst", "eisner"])
def test_the_tree_is_the_best_of_the_mixture_and_the_marginals_are_its(parts, decoder):
    """Brute force over every tree of the short sentences: no tree has a higher sum of the
    mixture's head marginals; HeadProb, LabelProb and analysis["heads"] are the mixture's."""
    pipeline, neural, _, tagged = parts
    ensemble = EnsembleParser(pipeline.parser, neural, 0.3)
    short = [s for s in tagged if len(s) <= 6]
    assert short
    for sentence in short:
        parsed = ensemble.parse([sentence], decoder=decoder, marginals=True)[0]
        mu2 = neural.head_marginals(sentence)
        cut = left_out(mu2, pipeline.parser.single_root)  # the neural member prunes
        ((_, mu1, _),) = pipeline.parser.iter_mixture([sentence], left_out=[cut])
        assert np.all(mu1[cut] == 0)
        mu = 0.3 * mu1 + 0.7 * mu2
        assert np.allclose(parsed.analysis["heads"], mu)
        trees = all_trees(len(sentence), decoder == "eisner", True)
        words = np.arange(1, len(sentence) + 1)
        sums = mu[trees[:, 1:], words].sum(axis=1)
        assert mu[parsed.heads[1:], words].sum() == pytest.approx(sums.max())
        assert np.allclose(misc_values(parsed, "HeadProb"), mu[parsed.heads[1:], words],
                           atol=1e-4)
        mixed = np.zeros((len(sentence), len(ensemble.labels)))
        for parser, share in ((pipeline.parser, 0.3), (neural, 0.7)):
            found = parser.label_distributions([sentence], [parsed.heads])[0]
            for k, label in enumerate(parser.labels):
                mixed[:, ensemble.labels.index(label)] += share * found[:, k]
        assert [ensemble.labels[k] for k in mixed.argmax(axis=1)] == parsed.deprels
        assert np.allclose(misc_values(parsed, "LabelProb"), mixed.max(axis=1), atol=1e-4)


def test_the_neural_member_prunes_the_linear_ones_arcs_where_both_have_a_share(parts):
    """`left_out` keeps each arc of at least PRUNE times its word's best neural marginal,
    those of the neural marginals' best projective tree and those between neighbours; the
    neural member prunes whichever place it has, at every weight."""
    pipeline, neural, _, tagged = parts
    for weight in (0.5, 0.0, 1.0):
        assert EnsembleParser(pipeline.parser, neural, weight).pruner == 1
    assert EnsembleParser(neural, pipeline.parser, 0.5).pruner == 0
    assert EnsembleParser(neural, neural, 0.5).pruner is None
    rng = np.random.default_rng(0)
    for sentence in tagged[:10]:
        n = len(sentence)
        mu = neural.head_marginals(sentence)
        mu[:, 1:] = rng.dirichlet(np.full(n + 1, 0.05), size=n).T  # some far below 1e-4
        np.fill_diagonal(mu, 0.0)
        mu[:, 1:] /= mu[:, 1:].sum(axis=0)
        cut = left_out(mu, True)
        best = best_tree(mu, True, True)
        words = np.arange(1, n + 1)
        assert not cut[best[1:], words].any()
        strong = mu[:, 1:] >= PRUNE * mu[:, 1:].max(axis=0)
        assert not cut[:, 1:][strong].any()
        weak = ~strong
        weak[best[1:], words - 1] = False
        weak[words[:-1], words[1:] - 1] = weak[words[1:], words[:-1] - 1] = False
        assert not cut[words[:-1], words[1:]].any() and not cut[words[1:], words[:-1]].any()
        assert cut[:, 1:][weak].all() and cut[:, 0].all()
    ensemble = EnsembleParser(neural, pipeline.parser, 0.5)
    for (first, second), sentence in zip(next(ensemble.members_parse(tagged[:5])), tagged):
        assert np.all(second[1][left_out(first[1], True)] == 0)


def test_a_tree_is_left_when_the_neural_member_is_sure_of_an_arc_out_of_the_linear_reach(
        parts, monkeypatch):
    """The pruned arcs and the linear member's reach together still leave a tree (the
    neighbours' arcs, which no reach leaves out), and the pruned stream reads the input
    once, in chunks, as parsing whole does."""
    from arborparse.ensemble import parser as ensemble_parser

    pipeline, neural, _, tagged = parts
    linear = pipeline.parser
    for s in sorted(tagged, key=len, reverse=True)[:5]:
        x = linear.model.encoded(s)
        reach = linear._out_of_reach(x)
        assert reach is not None and reach.any()
        h, m = map(int, np.argwhere(reach)[0])
        mu = neural.head_marginals(s)
        mu[:, m] = 0.0
        mu[h, m] = 1.0  # sure of an arc the linear member never scores
        ((_, found, _),) = linear.iter_mixture([s], left_out=[left_out(mu, True)])
        assert np.allclose(found[:, 1:].sum(axis=0), 1.0)
    ensemble = EnsembleParser(pipeline.parser, neural, 0.3)
    whole = ensemble.parse(tagged, marginals=True)
    monkeypatch.setattr(ensemble_parser, "CHUNK", 3)
    assert [s.rows for s in ensemble.parse(iter(tagged), marginals=True)] == \
        [s.rows for s in whole]


def test_combine_chooses_the_weight_on_dev_as_the_parse_scores_it(parts, tmp_path):
    pipeline, neural, gold, _ = parts
    tried = {}
    model = arborparse.combine(pipeline, neural, gold, report=lambda w, s: tried.update({w: s}))
    assert list(tried) == list(WEIGHTS)
    w = model.parser.weight
    assert tried[w]["LAS"] == max(s["LAS"] for s in tried.values())
    las = evaluate(gold, model.parse(gold, retag=True))["LAS"]  # the official script's
    assert model.info["scores"]["LAS"] == round(las, 2) == round(tried[w]["LAS"], 2)
    assert model.info["chosen_on_dev"] == {"weight": w}
    assert model.info["members"] == {"first": {"family": "linear", "weight": w},
                                     "second": {"family": "neural",
                                                "weight": round(1 - w, 10)}}
    given = arborparse.combine(pipeline, neural, weight=0.7)
    assert given.parser.weight == 0.7 and given.info["chosen_on_dev"] == {}


def test_the_combined_model_file_round_trips_and_says_what_it_is(parts, tmp_path):
    pipeline, neural, _, tagged = parts
    path = tmp_path / "both.npz"
    model = arborparse.combine(pipeline, neural, weight=0.4)
    model.save(path)
    back = arborparse.load(path)
    assert isinstance(back, Pipeline) and back.parser.kind == "ensemble"
    text = "The dog barks at the cat. It runs away."
    a, b = model.parse_text(text, marginals=True), back.parse_text(text, marginals=True)
    assert [s.rows for s in a] == [s.rows for s in b]
    assert offer(path).capabilities == back.capabilities  # from the header alone
    assert back.info["members"]["second"] == {"family": "neural", "weight": 0.6}
    shown = CliRunner().invoke(cli, ["info", str(path)])
    assert shown.exit_code == 0 and "second            family neural  weight 0.6" in \
        shown.output and "arborparse_version" in shown.output
    parser_alone = tmp_path / "ensemble.npz"
    model.parser.save(parser_alone)
    assert arborparse.load(parser_alone).weight == 0.4


def test_a_damaged_ensemble_file_is_refused_naming_what(parts, tmp_path):
    pipeline, neural, _, _ = parts
    ensemble = EnsembleParser(pipeline.parser, neural, 0.5)
    header, arrays = ensemble.parts()
    cases = [({**header, "members": {"first": header["members"]["first"]}},
              "names no first and second parser"),
             ({**header, "weight": 2}, "weight=2"),
             ({**header, "members": {**header["members"], "second": {
                 **header["members"]["second"], "version": 99}}},
              "the ensemble's second parser is version 99")]
    for k, (damaged, said) in enumerate(cases):
        path = tmp_path / f"{k}.npz"
        model_files.save(path, "ensemble", 1, damaged, arrays)
        with pytest.raises(ModelFileError, match=said):
            arborparse.load(path)


def test_what_an_ensemble_cannot_be_is_refused(parts, tmp_path):
    pipeline, neural, gold, tagged = parts
    beam = types.SimpleNamespace(kind="isbn", capabilities=Capabilities(beam=True))
    with pytest.raises(ArborparseError, match="second parser \\(isbn\\) cannot be mixed"):
        EnsembleParser(pipeline.parser, beam, 0.5)
    with pytest.raises(ArborparseError, match="first parser \\(isbn\\) cannot be mixed"):
        arborparse.combine(beam, neural, weight=0.5)  # before anything asks it more
    both = EnsembleParser(pipeline.parser, neural, np.float32(0.5))
    with pytest.raises(ArborparseError, match="second parser \\(ensemble\\) cannot be"):
        EnsembleParser(pipeline.parser, both, 0.5)
    untagged = [s.with_columns({UPOS: ["_"] * len(s)}) for s in tagged[:2]]
    with pytest.raises(ArborparseError, match="the words have no tags"):
        EnsembleParser(neural, pipeline.parser, 0.5).parse(untagged, keep_tags=True)
    assert offer_of({"members": ["first"]}) == offer_of({}) == EnsembleOptions.parses
    with pytest.raises(ArborparseError, match="weight=1.5"):
        EnsembleParser(pipeline.parser, neural, 1.5)
    with pytest.raises(ArborparseError, match="give dev data"):
        arborparse.combine(pipeline, neural)
    with pytest.raises(OptionError, match="does not apply to this ensemble model"):
        EnsembleParser(pipeline.parser, neural, 0.5).parse(tagged, decode_as="mbr")
    with pytest.raises(ArborparseError, match="an ensemble needs dev data"):
        arborparse.train(gold, family="ensemble")
    result = CliRunner().invoke(cli, ["train", "--model-type", "ensemble", "--train", "x",
                                      "--model", str(tmp_path / "m.npz")])
    assert result.exit_code == 2 and "--model-type ensemble needs --dev" in result.output
    with pytest.raises(ArborparseError, match="the ensemble family has no trainer of its own"):
        registry.trainer("ensemble", EnsembleOptions())


def test_the_combine_command_writes_the_model_and_refuses_to_overwrite(parts, tmp_path,
                                                                      english_pipeline):
    _, neural, gold, _ = parts
    second = tmp_path / "neural.npz"
    neural.save(second)
    out = tmp_path / "both.npz"
    result = CliRunner().invoke(cli, ["combine", str(english_pipeline), str(second),
                                      "--weight", "0.25", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "linear 0.25 + neural 0.75" in result.output
    assert arborparse.load(out).parser.weight == 0.25
    dev = tmp_path / "dev.conllu"
    write_conllu(gold[:20], dev)
    chosen = tmp_path / "chosen.npz"
    result = CliRunner().invoke(cli, ["combine", str(english_pipeline), str(second),
                                      "--dev", str(dev), "-o", str(chosen)])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == f"both parsers parse {dev}, then each weight is scored on it"
    assert [line.split(":")[0] for line in lines[1:12]] == [f"weight {w:.1f}" for w in WEIGHTS]
    model = arborparse.load(chosen)
    assert f"(chosen on dev: UAS {model.info['scores']['UAS']:.2f}" in lines[12]
    mine = tmp_path / "notes.txt"
    mine.write_text("mine")
    for args, said in ((["--weight", "0.5", "-o", str(mine)], "is not an arborparse model"),
                       (["-o", str(out)], "give --dev")):
        result = CliRunner().invoke(cli, ["combine", str(english_pipeline), str(second),
                                          *args])
        assert result.exit_code in (1, 2) and said in result.output
    assert mine.read_text() == "mine"


def test_the_service_serves_an_ensemble_with_its_marginals(parts, tmp_path):
    from starlette.testclient import TestClient

    from arborparse.service.app import create_app

    pipeline, neural, _, _ = parts
    path = tmp_path / "both.npz"
    arborparse.combine(pipeline, neural, weight=0.5).save(path)
    with TestClient(create_app(path, workers=1)) as client:  # the worker loads the file
        about = client.get("/model").json()
        assert about["kind"] == "ensemble" and "marginals" in about["capabilities"]
        r = client.post("/parse", json={"text": "The dog barks.", "marginals": True,
                                        "svg": True})
        assert r.status_code == 200, r.text
        found = r.json()["sentences"][0]
        mu = np.array([w["heads"] for w in found["words"]])
        assert len(mu) == 4 and np.allclose(mu.sum(axis=1), 1, atol=1e-4)
        assert found["svg"].count('class="arc') == 4
        r = client.post("/parse", json={"text": "The dog barks.", "k": 2})
        assert r.status_code == 422 and "does not apply to this ensemble model" in \
            r.json()["error"]


def test_combine_saves_where_told_never_over_its_inputs_and_warns_of_mismatch(parts,
                                                                             tmp_path):
    from treebanks import separable

    from arborparse.linear.online import OnlineTrainer

    pipeline, neural, gold, _ = parts
    first, second = tmp_path / "first.npz", tmp_path / "second.npz"
    pipeline.save(first)
    neural.save(second)
    before = first.read_bytes()
    with pytest.raises(ArborparseError, match="also an input"):
        arborparse.combine(first, second, weight=0.5, path=first)
    assert first.read_bytes() == before
    out = tmp_path / "both.npz"
    dev = tmp_path / "dev.conllu"
    write_conllu(gold[:10], dev)
    model = arborparse.combine(first, second, dev, weight=0.5, path=out)
    assert arborparse.load(out).parser.weight == 0.5
    assert model.info["data"]["dev"]["sentences"] == 10  # what the weight was scored on
    with pytest.warns(UserWarning, match="holds a model, which the combined model replaces"):
        arborparse.combine(first, second, weight=0.5, path=out)
    english = Pipeline(pipeline.tagger, None, pipeline.parser, info={"language": "en_ewt"})
    french = Pipeline(parser=neural, info={"language": "fr_gsd"})
    with pytest.warns(UserWarning, match="different languages \\(en and fr"):
        arborparse.combine(english, french, weight=0.5)
    unnamed = Pipeline(parser=neural, info={"language": "unknown"})  # data not named as UD's
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        arborparse.combine(english, unnamed, weight=0.5)
    toy = OnlineTrainer("perceptron", epochs=1, hash_bits=14, progress=False).fit(
        separable(1)).parser_
    with pytest.warns(UserWarning, match="fewer than half of the second parser's labels"):
        arborparse.combine(toy, neural, weight=0.5)
