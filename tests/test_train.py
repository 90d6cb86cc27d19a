"""`arborparse.train`: one way to train, from Python and from the command line alike; the
families' option tables; what a model file says of itself (`info`)."""

import dataclasses
import json
import re
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from treebanks import separable, separable_text

import arborparse
from arborparse import registry
from arborparse.cli import cli
from arborparse.errors import ArborparseError
from arborparse.eval import evaluate
from arborparse.io import read_conllu
from arborparse.io.conllu import FEATS, LEMMA
from arborparse.linear.online import OnlineTrainer
from arborparse.linear.reach import reach
from arborparse.pipeline import INFO, info
from arborparse.trainer import UNCALIBRATED
from arborparse.neural.train import NeuralTrainer
from arborparse.training import Diverged, Loop, TrainingInterrupted, checkpoint_seconds

MODELS = Path(__file__).parent / "data" / "models"
# per family: small options, the same through Python and the command line
SMALL = {
    "linear": ({"trainer": "perceptron", "epochs": 2, "hash_bits": 12},
               ["--trainer", "perceptron", "--epochs", "2", "--hash-bits", "12"],
               "tagger,parser"),
    "isbn": ({"hidden": 8, "epochs": 1, "cutoff": 1},
             ["--hidden", "8", "--epochs", "1", "--cutoff", "1"], "parser"),
    "neural": ({"hidden": 8, "layers": 1, "epochs": 1, "batch_size": 8, "word_dim": 8},
               ["--hidden", "8", "--layers", "1", "--epochs", "1", "--batch-size", "8",
                "--word-dim", "8"], "parser"),
}


@pytest.fixture(scope="module")
def treebank(tmp_path_factory):
    folder = tmp_path_factory.mktemp("tb")
    (folder / "xx_toy-ud-train.conllu").write_text(separable_text(3))
    (folder / "xx_toy-ud-dev.conllu").write_text(separable_text(1))
    return folder / "xx_toy-ud-train.conllu", folder / "xx_toy-ud-dev.conllu"


@pytest.mark.parametrize("family", sorted(SMALL))
def test_python_and_command_line_train_the_same_model(family, treebank, tmp_path):
    train, dev = treebank
    options, flags, components = SMALL[family]
    nlp = arborparse.train(train, dev, family=family, components=components, progress=False,
                           **options)
    nlp.save(tmp_path / "python.npz")
    r = CliRunner().invoke(cli, ["train", "--model-type", family, "--train", str(train),
                                 "--dev", str(dev), "--model", str(tmp_path / "cli.npz"),
                                 "--components", components, "--quiet", *flags])
    assert r.exit_code == 0, r.output
    a, b = info(tmp_path / "python.npz"), info(tmp_path / "cli.npz")
    assert a["options"] == b["options"] == nlp.info["options"]
    assert a["family"] == family and a["components"] == components.split(",")
    parsed = []
    for name in ("python", "cli"):
        r = CliRunner().invoke(cli, ["parse", "--model", str(tmp_path / f"{name}.npz"),
                                     str(dev)])
        assert r.exit_code == 0, r.output
        parsed.append(r.output)
    assert parsed[0] == parsed[1]


def test_info_says_what_a_model_is(treebank, tmp_path):
    train, dev = treebank
    path = tmp_path / "m.npz"
    nlp = arborparse.train(train, dev, components="tagger,parser", progress=False, path=path,
                           trainer="perceptron", epochs=2, hash_bits=12)
    found = info(path)
    assert list(found) == list(INFO) and found == nlp.info
    assert found["arborparse_version"] == arborparse.__version__
    assert found["created"].endswith("+00:00")
    assert found["family"] == "linear" and found["components"] == ["tagger", "parser"]
    from arborparse.linear.model import VERSION
    from arborparse.text.tagger import VERSION as TAGGER
    assert found["versions"] == {"tagger": TAGGER, "parser": VERSION}  # their formats
    assert found["options"]["trainer"] == "perceptron" and found["options"]["decoder"] is None
    assert found["chosen_on_dev"]["decoder"] in ("mst", "eisner")  # the default: chosen
    assert found["options"]["folds"] == 10  # defaults included
    # the linear family's options need no scaling; the jackknife's folds do
    assert found["defaults_by_size"] == {"train_sentences": len(separable(3)), "folds": 10,
                                         "order": 2, "second_order": "siblings+grandparents"}
    assert found["data"]["train"]["file"] == "xx_toy-ud-train.conllu"
    assert len(found["data"]["train"]["sha256"]) == 64
    assert found["data"]["train"]["sentences"] == len(separable(3))
    assert found["data"]["dev"]["words"] == sum(map(len, separable(1)))
    assert found["language"] == "xx_toy"
    assert found["scores"]["LAS"] > 50 and found["scores"]["UPOS"] == 100.0
    assert found["chosen_on_dev"]["epoch"] in (1, 2)
    # the second-stage labeler's weight, or None where dev left it out
    assert set(found["chosen_on_dev"]) == {"epoch", "labeler", "tag_reach", "decoder"}
    weight = found["chosen_on_dev"]["labeler"]
    assert (weight is None) == (arborparse.load(path).parser.labeler is None)
    assert found["training_seconds"] > 0 and found["warnings"] == []
    before, after = found["reach"]  # the longest arcs of the training trees
    assert (before, after) == reach(separable(3))
    tags = arborparse.load(path).parser.tag_reach  # of the jackknifed tags it trained on
    assert found["tag_reach"] == {"tags": len(tags.tags), "pairs": int(np.count_nonzero(
        np.maximum(tags.before, tags.after)))} and len(tags.tags) == 6
    assert arborparse.load(path).info == found
    r = CliRunner().invoke(cli, ["info", str(path), "--json"])
    assert r.exit_code == 0 and list(json.loads(r.output)) == list(INFO)
    r = CliRunner().invoke(cli, ["info", str(path)])
    assert r.exit_code == 0 and "xx_toy" in r.output and "lacks" not in r.output
    assert "trainer" in r.output and "LAS" in r.output
    assert f"versions            tagger {TAGGER}, parser {VERSION}\n" in r.output
    shown = "none" if weight is None else f"{weight:g}"
    kept = found["chosen_on_dev"]["tag_reach"]
    assert f"chosen_on_dev       epoch {found['chosen_on_dev']['epoch']}  labeler {shown}  " \
        f"tag_reach {kept}  decoder {found['chosen_on_dev']['decoder']}\n" in r.output
    assert f"reach               {before} words before its word, {after} after" in r.output
    parser = arborparse.load(path).parser  # the temperatures of its marginals
    labeler = {} if parser.labeler is None else {"labeler": parser.labeler.temperature}
    assert found["temperatures"] == {"heads": parser.temperature,
                                     "labels": parser.label_temperature, **labeler}
    assert f"temperatures        heads {parser.temperature:.4g}, labels " \
        f"{parser.label_temperature:.4g}" + "".join(
            f", the second-stage labeler's labels {t:.4g}" for t in labeler.values()) + \
        " (of HeadProb and LabelProb" in r.output
    decoder = found["chosen_on_dev"]["decoder"]  # the one it parses with, and how it came
    assert found["decoder"] == decoder == arborparse.load(path).parser.decoder
    assert f"decoder             {decoder} (chosen on dev)\n" in r.output
    with pytest.warns(UserWarning, match="trained without dev data: the parser's HeadProb"):
        blind = arborparse.train(train, components="parser", progress=False, path=path,
                                 trainer="perceptron", epochs=1, hash_bits=12, force=True)
    assert blind.info["warnings"] == info(path)["warnings"] == UNCALIBRATED
    distribution = arborparse.train(train, components="parser", progress=False,
                                    trainer="loglinear-sgd", epochs=1, hash_bits=12)
    assert distribution.info["warnings"] == []  # a log-linear model's are probabilities
    assert blind.info["options"]["decoder"] is None and info(path)["decoder"] == "mst"
    r = CliRunner().invoke(cli, ["info", str(path)])
    assert "decoder             mst\n" in r.output and "lacks" not in r.output
    # the options the perceptron takes, those not given told as their defaults
    assert "  trainer           perceptron\n  decoder           default\n" in r.output
    assert "  train_decoder     default (--decoder, or mst)\n" in r.output
    assert "  workers           default (one per core)\n" in r.output
    assert not re.search(r"^  (C|k|learning_rate|clusters) ", r.output, re.M)
    assert "None" not in r.output and "  dev               none\n" in r.output
    assert "temperatures        heads 1, labels 1 (of HeadProb and LabelProb, parse " \
        "--marginals; not fitted on dev: the scores as trained" in r.output  # no dev data


def test_the_jackknifes_folds_follow_the_training_size_and_yield_to_the_users(monkeypatch):
    options = dict(components="tagger,parser", progress=False, trainer="perceptron",
                   epochs=1, hash_bits=12)
    monkeypatch.setattr("arborparse.trainer.LARGE", len(separable(3)))  # "large" data
    nlp = arborparse.train(separable(3), **options)
    assert nlp.info["options"]["folds"] == nlp.info["defaults_by_size"]["folds"] == 5
    nlp = arborparse.train(separable(3), folds=3, **options)
    assert nlp.info["options"]["folds"] == 3 and "folds" not in nlp.info["defaults_by_size"]
    nlp = arborparse.train(separable(3), components="parser", progress=False,
                           trainer="perceptron", epochs=1, hash_bits=12)
    assert "folds" not in nlp.info["options"] and "folds" not in nlp.info["defaults_by_size"]
    few = separable(1)[:4]  # a fold per sentence at most: the folds used are recorded
    assert arborparse.train(few, folds=10, **options).info["options"]["folds"] == 4
    nlp = arborparse.train(few, **options)
    assert nlp.info["options"]["folds"] == nlp.info["defaults_by_size"]["folds"] == 4


def test_the_jackknifes_taggers_score_left_to_right_alone(monkeypatch):
    """The front end's tagger scores the pairs both ways; the jackknife's, in half the time,
    left to right alone."""
    from arborparse.text.tagger import Tagger

    trained, fit = [], Tagger.fit

    def recorded(self, train, dev=None):
        trained.append(self.backward)
        return fit(self, train, dev)

    monkeypatch.setattr(Tagger, "fit", recorded)
    nlp = arborparse.train(separable(3), folds=3, components="tagger,parser", progress=False,
                           trainer="perceptron", epochs=1, hash_bits=12)
    assert trained == [True, False, False, False] and nlp.tagger.backward


def test_a_parser_below_the_left_neighbour_baseline_on_dev_is_warned_of(tmp_path):
    """Dev trees that chain every word to its left neighbour, which a parser trained on other
    trees misses: the kept dev UAS is below the baseline's 100, and train says so."""
    dev = [s.with_tree(np.arange(-1, len(s)), ["root"] + ["dep"] * (len(s) - 1))
           for s in separable(1)]
    path = tmp_path / "m.npz"
    with pytest.warns(UserWarning, match=r"below that of attaching every word to its left "
                                         r"neighbour \(100\.00\)"):
        nlp = arborparse.train(separable(3), dev, components="parser", progress=False,
                               path=path, **SMALL["linear"][0])
    assert len(nlp.info["warnings"]) == 1 and info(path)["warnings"] == nlp.info["warnings"]
    r = CliRunner().invoke(cli, ["info", str(path)])
    assert r.exit_code == 0 and "warnings:\n  the parser's dev UAS" in r.output


@pytest.mark.parametrize("name", ["perceptron-v2", "latent-v2", "isbn-v2"])
def test_info_of_files_of_the_first_version(name):
    found = info(MODELS / f"{name}.npz")
    assert list(found) == list(INFO)
    assert found["family"] == ("isbn" if name.startswith("isbn") else "linear")
    assert found["components"] == ["parser"] and found["options"] is None
    r = CliRunner().invoke(cli, ["info", str(MODELS / f"{name}.npz")])
    assert r.exit_code == 0
    lacks = "this file lacks: arborparse_version, created, options, defaults_by_size, data, " \
            "language, scores, chosen_on_dev, training_seconds, warnings"
    assert ("decoder             mst\n" in r.output) == (found["decoder"] == "mst")
    if name.startswith("isbn"):  # no reach nor decoder: a linear parser's
        assert f"{lacks} (" in r.output and "reach" not in r.output
        assert found["decoder"] is None and "decoder" not in r.output
    else:
        assert f"{lacks}, reach (" in r.output and "reach               none (no arc left out" \
            in r.output
    r = CliRunner().invoke(cli, ["info", str(MODELS / "missing.npz")])
    assert r.exit_code == 1 and "no such model file" in r.output


def test_the_neural_defaults_follow_the_training_size_and_yield_to_the_users():
    from arborparse.neural.options import NeuralOptions

    sized = {n: NeuralOptions.by_size(n, {}) for n in (50, 400, 1000, 3000, 50_000)}
    assert sized == {50: {"epochs": 120, "patience": 30}, 400: {"epochs": 110, "patience": 27},
                     1000: {"epochs": 69, "patience": 17}, 3000: {"epochs": 40, "patience": 10},
                     50_000: {"epochs": 40, "patience": 10}}
    data = separable(3)
    options = {**SMALL["neural"][0], "epochs": 1}  # given: kept; patience: by the size
    nlp = arborparse.train(data, None, family="neural", components="parser", progress=False,
                           **options)
    assert nlp.info["defaults_by_size"] == {"train_sentences": len(data), "patience": 30}
    assert nlp.info["options"]["epochs"] == 1 and nlp.info["options"]["patience"] == 30
    r = CliRunner().invoke(cli, ["train", "--model-type", "neural", "--help"])
    assert "more for fewer, up to 120" in " ".join(r.output.split())


def test_the_linear_default_order_follows_the_training_size_and_yields_to_the_users(
        monkeypatch):
    from arborparse.linear.options import SMALL, LinearOptions

    sized = {"order": 2, "second_order": "siblings+grandparents"}
    assert LinearOptions.by_size(SMALL, {}) == sized
    assert LinearOptions.by_size(SMALL + 1, {}) == {}
    assert LinearOptions.by_size(10, {"trainer": "perceptron"}) == sized
    assert LinearOptions.by_size(10, {"second_order": "siblings"}) == sized  # given: kept
    for given in ({"order": 1}, {"trainer": "mira-kbest"}, {"trainer": "latent"},
                  {"trainer": "loglinear"}, {"exact_features": True},
                  {"trainer": "perceptron", "exact_features": True}):
        assert LinearOptions.by_size(10, given) == {}, given  # given, or left at order 1
    data = separable(3)
    nlp = arborparse.train(data, None, components="parser", progress=False, epochs=1)
    assert nlp.info["defaults_by_size"] == {"train_sentences": len(data), **sized}
    assert nlp.info["options"]["order"] == 2 and not nlp.capabilities.kbest
    assert nlp.info["options"]["second_order"] == "siblings+grandparents"
    nlp = arborparse.train(data, None, components="parser", progress=False, epochs=1,
                           second_order="siblings")
    assert nlp.info["defaults_by_size"] == {"train_sentences": len(data), "order": 2}
    assert nlp.info["options"]["second_order"] == "siblings"
    nlp = arborparse.train(data, None, components="parser", progress=False, epochs=1,
                           trainer="mira-kbest")
    assert nlp.info["defaults_by_size"] == {"train_sentences": len(data)}
    assert nlp.info["options"]["order"] == 1 and nlp.capabilities.kbest
    monkeypatch.setattr("arborparse.linear.options.SMALL", len(data))
    for copies in (1, 2):  # second_order alone asks for order 2 at any size
        nlp = arborparse.train(data * copies, None, components="parser",
                               progress=False, epochs=1, hash_bits=12,
                               second_order="siblings+grandparents")
        assert (nlp.info["options"]["order"], nlp.info["options"]["second_order"]) == \
            (2, "siblings+grandparents")
    tagger = arborparse.train(data, None, components="tagger", progress=False)
    assert "order" not in tagger.info["defaults_by_size"]  # a parser's option
    r = CliRunner().invoke(cli, ["train", "--help"])
    assert "train's default: 2 with siblings and grandparents up to 5,000 training " \
        "sentences" in " ".join(r.output.split())


@pytest.mark.parametrize("family, first, then, kept", [
    ("neural", None, {"patience": 7}, {"patience": 30}),
    # an order-1 run of an older rule resumed under one that gives order 2 here
    ("linear", {}, None, {"order": 1, "second_order": "siblings"})])
def test_a_resumed_training_keeps_its_own_defaults_by_size(tmp_path, monkeypatch, family,
                                                            first, then, kept):
    from arborparse import registry

    table = registry.options_table(family)
    data, path = separable(2), tmp_path / "m.npz"
    options = {**SMALL[family][0], "epochs": 2}
    save, calls, rule = Loop._save_checkpoint, [], table.by_size

    def interrupted(self, *args):
        save(self, *args)
        calls.append(1)
        raise KeyboardInterrupt

    def ruled(sized):
        monkeypatch.setattr(table, "by_size", rule if sized is None else
                            classmethod(lambda cls, n, given: sized))

    monkeypatch.setattr(Loop, "_save_checkpoint", interrupted)
    ruled(first)
    with pytest.raises(TrainingInterrupted):
        arborparse.train(data, data, family=family, components="parser", progress=False,
                         path=path, **options)
    monkeypatch.setattr(Loop, "_save_checkpoint", save)
    ruled(then)  # a later rule would give other values: the interrupted run keeps its own
    nlp = arborparse.train(data, data, family=family, components="parser", progress=False,
                           path=path, resume=True, **options)
    assert {name: nlp.info["options"][name] for name in kept} == kept
    fresh = arborparse.train(data, None, family=family, components="parser",
                             progress=False, **options)
    assert fresh.info["options"] != nlp.info["options"]


def test_in_memory_sentences_and_language(tmp_path):
    nlp = arborparse.train(separable(2), None, components=["parser"], progress=False,
                           lang="xx", trainer="perceptron", epochs=1, hash_bits=12)
    assert nlp.info["language"] == "xx" and nlp.info["data"]["dev"] is None
    assert nlp.info["data"]["train"]["file"] is None
    assert nlp.info["data"]["train"]["sentences"] == len(separable(2))
    assert nlp.components == ["parser"] and nlp.parser.kind == "linear"


def test_first_order_is_the_linear_family(treebank):
    nlp = arborparse.train(separable(1), family="first-order", components="parser",
                           progress=False, trainer="perceptron", epochs=1, hash_bits=12)
    assert nlp.info["family"] == "linear"
    assert nlp.info["options"]["order"] == 1  # as its name says, on small data too
    assert "order" not in nlp.info["defaults_by_size"]
    r = CliRunner().invoke(cli, ["train", "--help"])
    assert "first-order" in r.output


def test_wrong_options_are_refused_in_one_line():
    data = separable(1)
    with pytest.raises(ArborparseError, match=r"the linear family takes no option beam; its "
                                              r"options: trainer, decoder"):
        arborparse.train(data, beam=3)
    with pytest.raises(ArborparseError, match=r"the linear family takes no option epoch \(did "
                                              r"you mean epochs\?\), zz; its options: "):
        arborparse.train(data, epoch=2, zz=1)
    with pytest.raises(ArborparseError, match="k does not apply to the linear trainer mira "
                                              r"\(k: mira-kbest\)"):
        arborparse.train(data, k=3)
    with pytest.raises(ArborparseError, match="linear option epochs=0: must be >= 1"):
        arborparse.train(data, epochs=0)
    with pytest.raises(ArborparseError, match="linear option trainer='sgd': choose one of"):
        arborparse.train(data, trainer="sgd")
    with pytest.raises(ArborparseError, match="neural option hidden='big': give an integer"):
        arborparse.train(data, family="neural", hidden="big")
    with pytest.raises(ArborparseError, match="unknown family 'tree'"):
        arborparse.train(data, family="tree")
    with pytest.raises(ArborparseError, match="components: choose among"):
        arborparse.train(data, components="parser,chunker")
    with pytest.raises(ArborparseError, match="train: give a path or an iterable"):
        arborparse.train(3)
    with pytest.raises(ArborparseError, match="linear option seed=-1: must be >= 0"):
        arborparse.train(data, seed=-1)
    with pytest.raises(ArborparseError, match="components: a list of names"):
        arborparse.train(data, components=3)
    with pytest.raises(ArborparseError, match="fmt='xml': choose one of"):
        arborparse.train(data, fmt="xml")
    with pytest.raises(ArborparseError, match="lang=3"):
        arborparse.train(data, lang=3)
    with pytest.raises(ArborparseError, match="dev: no sentences"):
        arborparse.train(data, [])
    with pytest.raises(ArborparseError, match=r"^progress='no': give True or False$"):
        arborparse.train(data, progress="no")
    with pytest.raises(ArborparseError, match="second_order applies to order 2 only"):
        arborparse.train(data, order=1, second_order="siblings")  # the default, but given
    with pytest.raises(ArborparseError, match="hash_bits sizes the hashed features, and "
                                              "exact_features hashes none"):
        arborparse.train(data, trainer="perceptron", exact_features=True, hash_bits=12)
    with pytest.raises(ArborparseError, match=r"learning_rate=0.0: must be > 0 and <= 1.0"):
        arborparse.train(data, family="neural", learning_rate=0.0)
    for family, name in (("neural", "learning_rate"), ("neural", "dropout"),
                         ("linear", "C")):
        with pytest.raises(ArborparseError, match=f"{name}=inf: give a finite number"):
            arborparse.train(data, family=family, **{name: float("inf")})
    assert arborparse.train(data, components="parser", progress=False, epochs=np.int64(1),
                            hash_bits=12).info["options"]["epochs"] == 1
    for r in (CliRunner().invoke(cli, ["train", "--train", "x", "--model", "m", "--beam", "3"]),
              CliRunner().invoke(cli, ["train", "--model-type", "neural", "--train", "x",
                                       "--model", "m", "--trainer", "eg"])):
        assert r.exit_code == 2 and "does not apply to --model-type" in r.output
    for flags, said in ((["--model-type", "neural", "--dropout", "nan"],
                         "neural option --dropout=nan: give a finite number"),
                        (["-C", "inf"], "linear option -C=inf: give a finite number")):
        r = CliRunner().invoke(cli, ["train", "--train", "x", "--model", "m", *flags])
        assert r.exit_code == 2 and said in r.output


def test_word_vectors_set_the_word_dimension(tmp_path):
    vectors = tmp_path / "vectors.txt"
    vectors.write_text("the 0.1 0.2 0.3\n")
    with pytest.raises(ArborparseError, match="word_dim: the word vectors of embeddings set "
                                              "the word dimension; leave word_dim out"):
        arborparse.train(separable(1), family="neural", embeddings=vectors, word_dim=50)
    r = CliRunner().invoke(cli, ["train", "--model-type", "neural", "--train", "x", "--model",
                                 "m", "--embeddings", str(vectors), "--word-dim", "50"])
    assert r.exit_code == 2 and "leave --word-dim out" in r.output


def test_a_diverging_training_stops_without_saving_the_epoch(tmp_path, monkeypatch):
    data, path = separable(3), tmp_path / "m.npz"
    with warnings.catch_warnings(record=True) as caught, \
            pytest.raises(Diverged, match=r"training diverged in epoch \d+: its scores "
                                          "became infinite or NaN; start again with a "
                                          "smaller learning rate"):
        warnings.simplefilter("always")
        arborparse.train(data, components="parser", progress=False,
                         trainer="loglinear-sgd", learning_rate=1e300, hash_bits=12)
    assert not caught  # numpy's overflows on the way are not said before the one line
    loss = NeuralTrainer.loss
    monkeypatch.setattr(NeuralTrainer, "loss", lambda self, net, batch: (
        lambda total, n: (total * float("nan") if self.history_ else total, n))(
            *loss(self, net, batch)))
    with pytest.raises(Diverged, match="diverged in epoch 2: its loss is nan"):
        arborparse.train(data, path=path, family="neural", components="parser",
                         progress=False, **{**SMALL["neural"][0], "epochs": 3})
    assert path.exists()  # epoch 1, saved when it ended
    assert not Path(f"{path}.checkpoint").exists()  # resuming would diverge again


def test_checkpoints_of_neural_trainings_before_its_later_options_resume():
    assert "word_dropout" not in NeuralTrainer().settings()  # as they were written
    assert NeuralTrainer(word_dropout=0.2).settings()["word_dropout"] == 0.2


def test_the_train_commands_errors_name_options_as_flags_and_leave_paths_alone(tmp_path):
    folder = tmp_path / "learning_rate"
    folder.mkdir()
    r = CliRunner().invoke(cli, ["train", "--train", "x", "--model", str(folder / "m.npz"),
                                 "--resume"])
    assert r.exit_code == 1 and f"{folder}/m.npz.checkpoint" in r.output


def test_the_tables_are_the_defaults_of_the_classes():
    from arborparse.isbn.train import ISBNTrainer
    from arborparse.linear.online import OnlineTrainer
    from arborparse.neural.train import NeuralTrainer

    for trainer, family in ((NeuralTrainer(), "neural"), (ISBNTrainer(), "isbn"),
                            (OnlineTrainer(), "linear")):
        table = registry.options_table(family)()
        for field in dataclasses.fields(table):
            if hasattr(trainer, field.name) and field.name not in ("decoder", "train_decoder", "C"):
                assert getattr(trainer, field.name) == getattr(table, field.name), field.name
        assert trainer.single_root == (not table.multi_root)
    assert OnlineTrainer().trainer == "mira"


def test_help_groups_every_familys_options():
    r = CliRunner().invoke(cli, ["train", "--help"])
    assert r.exit_code == 0
    for family in registry.FAMILIES:
        section = r.output.split(f"{family} options (--model-type {family})")[1]
        for spec in registry.options_table(family).specs():
            assert spec.flag in section.split(" options (--model-type")[0], (family, spec.name)
    neural = r.output.split("neural options (--model-type neural)")[1]
    assert "[default: 200]" in neural  # hidden
    sized = "[default: by the training data's size (as said)]"  # epochs, patience
    assert " ".join(neural.split()).count(sized) == 2
    linear = r.output.split("linear options (--model-type linear)")[1]
    order, second = linear.split("--second-order [")[:2]
    assert sized in " ".join(order.split())  # --order
    assert sized in " ".join(second.split("--labeler")[0].split())  # --second-order


def _interrupted_after_epoch_2(monkeypatch):
    """Make trainings stop (Ctrl-C) once epoch 2's checkpoint is written; returns the
    checkpoint writer to put back."""
    save = Loop._save_checkpoint

    def interrupted(self, epoch, *args):
        save(self, epoch, *args)
        if epoch == 2:
            raise KeyboardInterrupt

    monkeypatch.setattr(Loop, "_save_checkpoint", interrupted)
    return save


@pytest.mark.parametrize("trainer", [{"trainer": "perceptron"},
                                     {"trainer": "loglinear-sgd", "C": 0.3}])
def test_a_checkpoint_of_a_linear_training_before_the_suffix_features_is_not_resumed(
        tmp_path, monkeypatch, trainer):
    """Its weights were learned without them (and an exact dictionary of features would
    no longer fit): refused in one line, nothing written."""
    from arborparse.io import model_files
    from arborparse.training import CHECKPOINT, CHECKPOINT_VERSION

    data = separable(2)
    options = dict(family="linear", components="parser", progress=False, epochs=3,
                   hash_bits=12, **trainer)
    path = tmp_path / "m.npz"
    save = _interrupted_after_epoch_2(monkeypatch)
    with pytest.raises(TrainingInterrupted):
        arborparse.train(data, data, path=path, **options)
    monkeypatch.setattr(Loop, "_save_checkpoint", save)
    checkpoint = tmp_path / "m.npz.checkpoint"
    header, arrays = model_files.load(checkpoint, CHECKPOINT, CHECKPOINT_VERSION)
    assert header["settings"].pop("features") == "suffixes"
    for key in ("format", "kind", "version"):
        del header[key]
    model_files.save(checkpoint, CHECKPOINT, CHECKPOINT_VERSION, header, arrays, force=True)
    before = {f: f.read_bytes() for f in tmp_path.iterdir()}
    with pytest.raises(ArborparseError, match="m.npz.checkpoint: the checkpoint was written by "
                                              "an earlier arborparse, without features: train "
                                              "again without resume"):
        arborparse.train(data, data, path=path, resume=True, **options)
    assert {f: f.read_bytes() for f in tmp_path.iterdir()} == before


def test_a_resumed_training_records_what_its_user_chose(tmp_path, monkeypatch):
    """An order given to the interrupted run and left out on resume: the run goes on with
    its own, and `info` does not say that the training data's size chose it."""
    data, path = separable(3), tmp_path / "m.npz"
    options = dict(family="linear", components="parser", progress=False,
                   trainer="perceptron", epochs=3, hash_bits=12)
    save = _interrupted_after_epoch_2(monkeypatch)
    with pytest.raises(TrainingInterrupted):
        arborparse.train(data, data, path=path, order=2, **options)
    monkeypatch.setattr(Loop, "_save_checkpoint", save)
    nlp = arborparse.train(data, data, path=path, resume=True, **options)
    assert (nlp.info["options"]["order"], nlp.info["options"]["second_order"]) == \
        (2, "siblings")
    assert nlp.info["defaults_by_size"] == {"train_sentences": len(data)}


def test_a_resumed_training_records_no_size_for_what_is_given_now(tmp_path, monkeypatch):
    """Patience chosen by the size, interrupted, then given on resume (it may change):
    `defaults_by_size` no longer claims it."""
    from arborparse.neural.options import NeuralOptions

    data, path = separable(2), tmp_path / "m.npz"
    options = {**SMALL["neural"][0], "epochs": 3}
    monkeypatch.setattr(NeuralOptions, "by_size",
                        classmethod(lambda cls, n, given: {"patience": 30}))
    save = _interrupted_after_epoch_2(monkeypatch)
    with pytest.raises(TrainingInterrupted):
        arborparse.train(data, data, family="neural", components="parser", progress=False,
                         path=path, **options)
    monkeypatch.setattr(Loop, "_save_checkpoint", save)
    assert arborparse.load(path).info["defaults_by_size"]["patience"] == 30
    nlp = arborparse.train(data, data, family="neural", components="parser", progress=False,
                           path=path, resume=True, patience=7, **options)
    assert nlp.info["options"]["patience"] == 7
    assert nlp.info["defaults_by_size"] == {"train_sentences": len(data)}


def test_resume_compares_the_data_by_content_not_by_file_name():
    """The same bytes under another file name are the same data; other bytes are named
    with both files; a part given or left out is named."""
    from arborparse.trainer import _other_data

    record = {"file": "a.conllu", "sha256": "1" * 64, "sentences": 5, "words": 40}
    before = {"train": record, "dev": None}
    assert _other_data(before, {"train": {**record, "file": "copy.conllu"}, "dev": None}) == []
    assert _other_data(before, {"train": {**record, "sha256": "2" * 64}, "dev": None}) == [
        "train data (a.conllu, 5 sentences, 40 words, sha256 111111111111…; now a.conllu, 5 "
        "sentences, 40 words, sha256 222222222222…)"]
    assert _other_data(before, {"train": record, "dev": record}) == [
        "dev data (none; now a.conllu, 5 sentences, 40 words, sha256 111111111111…)"]


def test_resume_continues_a_linear_training_bit_for_bit(tmp_path, monkeypatch):
    data, dev = separable(3), separable(1)
    options = dict(family="linear", components="parser", progress=False,
                   trainer="perceptron", epochs=3, hash_bits=12)
    straight = arborparse.train(data, dev, **options)
    path = tmp_path / "m.npz"
    save = _interrupted_after_epoch_2(monkeypatch)
    with pytest.raises(TrainingInterrupted, match="m.npz.checkpoint holds the last finished "
                                                  r"epoch: continue with resume \(--resume\)"):
        arborparse.train(data, dev, path=path, **options)
    monkeypatch.setattr(Loop, "_save_checkpoint", save)
    said = CliRunner().invoke(cli, ["info", str(path)]).output
    assert f"unfinished: {path}.checkpoint holds an unfinished training (its last finished " \
        "epoch, epoch 2); unless it is still running, arborparse train with the same options " \
        "and --resume continues it" in said
    said = CliRunner().invoke(cli, ["info", f"{path}.checkpoint"]).output
    assert "m.npz.checkpoint: a training's checkpoint, not a model: the model is the file " \
        "beside it (without .checkpoint), and arborparse train --resume continues" in said
    with pytest.raises(ArborparseError, match="holds an interrupted training"):
        arborparse.train(data, dev, path=path, **options)
    with pytest.raises(ArborparseError, match=r"had other seed 0 \(now 1\)"):
        arborparse.train(data, dev, path=path, resume=True, **{**options, "seed": 1})
    with pytest.raises(ArborparseError, match="the interrupted training is of the linear "
                                              "family; resume it as that family"):
        arborparse.train(data, dev, path=path, resume=True, family="neural",
                         components="parser", progress=False)
    with pytest.raises(ArborparseError, match=re.escape(
            "the interrupted training had other train data (sentences given in memory, "
            f"{len(data)} sentences, {sum(map(len, data))} words; now sentences given in "
            f"memory, {len(separable(4))} sentences, {sum(map(len, separable(4)))} words)")):
        arborparse.train(separable(4), dev, path=path, resume=True, **options)
    with pytest.raises(ArborparseError, match=r"m.npz.checkpoint: the interrupted training "
                                              r"finished 2 epochs, more than epochs 1 allows: "
                                              r"resume with epochs \(--epochs\) of at least 2"):
        arborparse.train(data, dev, path=path, resume=True, **{**options, "epochs": 1,
                                                                "extend": 0})
    with pytest.raises(ArborparseError, match="cannot resume"):
        arborparse.train(data, dev, path=path, resume=True, **{**options, "C": 1.0,
                                                                "trainer": "loglinear"})
    before = info(path)
    # the second-stage labeler acts after the epochs: a resumed run may change it
    resumed = arborparse.train(data, dev, path=path, resume=True, labeler=False, **options)
    assert (resumed.parser.model.weights == straight.parser.model.weights).all()
    assert not Path(f"{path}.checkpoint").exists()
    after = info(path)
    assert after["scores"]["LAS"] >= before["scores"]["LAS"]  # the kept epoch's, not none
    assert after["chosen_on_dev"]["epoch"] >= before["chosen_on_dev"]["epoch"] >= 1
    assert after["training_seconds"] >= before["training_seconds"]


def test_a_resumed_training_counts_the_epochs_after_the_best_one(tmp_path, monkeypatch):
    """The model file holds the time up to its best epoch, the checkpoint the time up to the
    last finished one: a resumed run goes on from the latter. The interrupted run's clock
    moves 100 s at each reading, the resumed run's stands still."""
    import arborparse.trainer as trainer_module

    ticks = iter(range(0, 10**9, 100))
    clock = type("Clock", (), {"perf_counter": staticmethod(lambda: float(next(ticks)))})
    monkeypatch.setattr(trainer_module, "time", clock)
    path = tmp_path / "m.npz"
    _interrupted_after_epoch_2(monkeypatch)
    options = dict(family="linear", components="parser", progress=False,
                   trainer="perceptron", epochs=4, hash_bits=12)
    with pytest.raises(TrainingInterrupted):
        arborparse.train(separable(3), separable(1), path=path, **options)
    recorded = checkpoint_seconds(f"{path}.checkpoint")
    assert recorded > info(path)["training_seconds"]  # the model was saved before
    clock.perf_counter = staticmethod(lambda: 0.0)
    resumed = arborparse.train(separable(3), separable(1), path=path, resume=True, **options)
    assert resumed.info["training_seconds"] == recorded


def test_resume_takes_the_front_end_and_the_jackknifed_tags_of_the_interrupted_run(
        tmp_path, monkeypatch):
    """A resumed pipeline training trains no tokenizer, tagger or lemmatizer again, nor
    jackknifes the training tags: they come from the model file and PATH.tags, and the
    parser ends as an uninterrupted run's."""
    data, dev = separable(3), separable(1)
    options = dict(components="tokenizer,tagger,lemmatizer,parser", progress=False,
                   trainer="perceptron", epochs=3, hash_bits=12, folds=2)
    straight = arborparse.train(data, dev, **options)
    path = tmp_path / "m.npz"
    save = _interrupted_after_epoch_2(monkeypatch)
    with pytest.raises(TrainingInterrupted, match=r"continue with resume \(--resume\)"):
        arborparse.train(data, dev, path=path, **options)
    assert Path(f"{path}.tags").exists()
    monkeypatch.setattr(Loop, "_save_checkpoint", save)

    def trained_again(*args, **kwargs):
        raise AssertionError("trained again")

    monkeypatch.setattr("arborparse.trainer.front_end", trained_again)
    monkeypatch.setattr("arborparse.trainer._jackknife", trained_again)
    resumed = arborparse.train(data, dev, path=path, resume=True, **options)
    assert (resumed.parser.model.weights == straight.parser.model.weights).all()
    assert [s.rows for s in resumed.parse(dev, retag=True)] == \
        [s.rows for s in straight.parse(dev, retag=True)]
    assert {"UAS", "LAS", "UPOS", "Lemmas", "boundary_F1"} <= set(info(path)["scores"])
    assert not Path(f"{path}.tags").exists() and not Path(f"{path}.checkpoint").exists()
    assert info(path)["scores"] == straight.info["scores"]
    monkeypatch.undo()
    _interrupted_after_epoch_2(monkeypatch)
    with pytest.raises(TrainingInterrupted):
        arborparse.train(data, dev, path=path, **options)
    monkeypatch.undo()
    arborparse.train(data, dev, path=path, force=True, **options)  # starts again
    assert not Path(f"{path}.tags").exists() and not Path(f"{path}.checkpoint").exists()
    straight.save(Path(f"{path}.tags"))  # another model where the tags would go
    with pytest.raises(ArborparseError, match=r"m\.npz\.tags is another model file"):
        arborparse.train(data, dev, path=path, **options)


def test_an_interrupt_in_the_first_epoch_keeps_the_front_end_and_its_tags_for_resume(
        tmp_path, monkeypatch, capsys):
    """Ctrl-C in the parser's first epoch: the front end (``PATH.front``) and the jackknifed
    tags stay, and resume trains the parser alone from its start (neither the tagger nor
    the jackknife again), as a training never stopped does; nothing stays beside the model
    after it. (They were lost: a Coptic training stopped there trained its front end again.)"""
    from arborparse.text.tagger import Tagger

    end = Loop.end

    def stop_the_parser(self, *args, **kwargs):
        if self.checkpoint is not None:  # the parser's loop (the tagger's keeps none)
            raise KeyboardInterrupt
        return end(self, *args, **kwargs)

    monkeypatch.setattr(Loop, "end", stop_the_parser)
    path = tmp_path / "m.npz"
    options = dict(components="tagger,parser", progress=False, path=path,
                   trainer="perceptron", hash_bits=12, folds=2, epochs=2, extend=0)
    with pytest.raises(TrainingInterrupted, match=re.escape(
            f"training interrupted before the parser's first model was saved: {path}.front "
            "holds the "
            "trained tagger: continue with resume (--resume)")):
        arborparse.train(separable(2), separable(1), **options)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.npz.front", "m.npz.tags"]
    said = CliRunner().invoke(cli, ["info", str(path)])
    assert said.exit_code == 1 and said.output == (
        f"Error: {path}: no such model file; {path}.front holds the front end of an unfinished "
        "training: unless it is still running, arborparse train with the same options and "
        "--resume continues it\n")
    with pytest.raises(ArborparseError, match="m.npz.front holds an interrupted training"):
        arborparse.train(separable(2), separable(1), **options)
    monkeypatch.undo()

    def not_again(*args, **kwargs):
        raise AssertionError("trained again")
    monkeypatch.setattr(Tagger, "fit", not_again)
    monkeypatch.setattr("arborparse.text.jackknife.jackknife", not_again)
    capsys.readouterr()
    resumed = arborparse.train(separable(2), separable(1), resume=True, **options)
    assert f"resuming with the tagger of {path}.front; the parser starts from its first " \
        "epoch\n" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.npz"]
    monkeypatch.undo()
    straight = arborparse.train(separable(2), separable(1), **{**options, "path": None})
    assert resumed.info["scores"] == straight.info["scores"]
    assert (resumed.parser.model.weights == straight.parser.model.weights).all()


def test_an_interrupt_before_the_first_epoch_says_nothing_was_written(tmp_path, monkeypatch):
    def stop(self, *args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(Loop, "end", stop)
    with pytest.raises(TrainingInterrupted, match="before the first epoch ended: nothing was "
                                                  "written \\(a model is written when"):
        arborparse.train(separable(1), components="parser", progress=False,
                         path=tmp_path / "m.npz", trainer="perceptron", hash_bits=12)
    assert not (tmp_path / "m.npz").exists()


@pytest.mark.parametrize("stage, stopped, says", [
    ("data", "arborparse.trainer.check_tree",
     "while reading and checking the data: nothing was written$"),
    ("front end", "arborparse.text.tagger.Tagger.fit",
     "while training the tokenizer and tagger: nothing was written \\(the model file is "
     "written when the parser's first epoch ends\\)"),
    ("jackknife", "arborparse.text.jackknife.jackknife",
     "while tagging the training sentences for the parser \\(jackknifing\\): .*m\\.npz\\.front "
     "holds the trained tokenizer and tagger: continue with resume \\(--resume\\)"),
    ("trainer's start", "arborparse.registry.trainer",
     "while the parser's trainer started \\(its libraries loading\\): .*m\\.npz\\.front "
     "holds the trained tokenizer and tagger: continue with resume \\(--resume\\)"),
    ("sentence ends", "arborparse.trainer._syntax_ends",
     "while the tokenizer weighed a parser's view of sentence ends, after the parser's "
     "epochs: .*m\\.npz holds epoch 1, the best, without that view; .*m\\.npz\\.checkpoint "
     "holds the last finished epoch: continue with resume \\(--resume\\)")])
def test_an_interrupt_outside_the_parsers_epochs_says_what_was_written(
        stage, stopped, says, tmp_path, monkeypatch):
    """Ctrl-C while the data is read and checked, while the front end trains, while the
    training tags are jackknifed, while the parser's trainer starts (the neural family's
    imports take a second), or while the tokenizer weighs the parser's sentence ends: one
    line saying what is kept, not a bare abort; what was finished stays (the front end once
    trained, its tags once made, the parser's checkpoint after its epochs), and resume
    finishes the training."""
    def stop(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(stopped, stop)
    path = tmp_path / "m.npz"
    options = dict(components="tokenizer,tagger,parser", progress=False, path=path, folds=2,
                   trainer="perceptron", epochs=1, extend=0, hash_bits=12)
    with pytest.raises(TrainingInterrupted, match=f"^training interrupted {says}"):
        arborparse.train(separable(2), separable(1), **options)
    kept = {"data": [], "front end": [], "jackknife": [".front"],
            "trainer's start": [".front", ".tags"],
            "sentence ends": ["", ".checkpoint", ".front", ".tags"]}[stage]
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"m.npz{end}" for end in kept]
    if kept:
        monkeypatch.undo()
        resumed = arborparse.train(separable(2), separable(1), resume=True, **options)
        assert sorted(p.name for p in tmp_path.iterdir()) == ["m.npz"]
        straight = arborparse.train(separable(2), separable(1), **{**options, "path": None})
        assert resumed.info["scores"] == straight.info["scores"]


def test_a_front_end_alone_says_its_family_and_no_folds(tmp_path):
    path = tmp_path / "t.npz"
    arborparse.train(separable(1), components="tagger", progress=False, path=path)
    found = info(path)
    assert found["family"] == "linear" and found["components"] == ["tagger"]
    assert "folds" not in found["options"]
    r = CliRunner().invoke(cli, ["info", str(path)])
    assert "lacks" not in r.output and "none (no dev data)" in r.output
    assert not re.search(r"^(tag_)?reach ", r.output, re.M)  # a linear parser's


def test_one_training_sentence_behind_a_tagger_is_refused_before_any_training(monkeypatch):
    """A parser behind a tagger trains on jackknifed tags: one sentence cannot be split, and
    that is said before the front end trains, not after."""
    import arborparse.trainer

    monkeypatch.setattr(arborparse.trainer, "front_end", lambda *a: pytest.fail("trained"))
    with pytest.raises(ArborparseError, match=r"^train \(the data given\): a parser behind a "
                       r"tagger or lemmatizer trains on jackknifed tags, which need at least "
                       r"2 training sentences$"):
        arborparse.train(separable(1)[:1], components="tagger,parser", progress=False)
    cycle = separable(1)[0]  # a gold tree that is no tree is said first
    cycle = cycle.with_tree(np.array([-1, 2, 1, *cycle.heads[3:]]), cycle.deprels)
    with pytest.raises(ArborparseError, match="cycle"):
        arborparse.train([cycle], components="tagger,parser", progress=False)


def test_nothing_the_user_owns_is_overwritten_by_train_or_save(tmp_path):
    """As on the command line: the training data is never the model's path, and a file
    that is not a model is replaced only with force."""
    data = tmp_path / "t.conllu"
    data.write_text(separable_text(1))
    options = dict(components="parser", progress=False, trainer="perceptron", epochs=1,
                   hash_bits=12)
    with pytest.raises(ArborparseError, match=r"t\.conllu is also an input of this command"):
        arborparse.train(data, path=data, force=True, **options)
    assert data.read_text() == separable_text(1)
    notes = tmp_path / "notes.txt"
    notes.write_text("mine")
    with pytest.raises(ArborparseError, match=r"notes\.txt exists and is not an arborparse "
                                              r"model file; use --force \(force=True\)"):
        arborparse.train(data, path=notes, **options)
    assert notes.read_text() == "mine"
    nlp = arborparse.train(data, **options)
    with pytest.raises(ArborparseError, match="is not an arborparse model file"):
        nlp.save(notes)
    with pytest.raises(ArborparseError, match="is not an arborparse model file"):
        nlp.parser.save(notes)
    assert notes.read_text() == "mine"
    nlp.save(notes, force=True)
    assert arborparse.load(notes).info == nlp.info
    with pytest.warns(UserWarning, match=r"notes\.txt holds a model, which this training "
                                         r"replaces once it has one to save \(Ctrl-C before "
                                         r"then keeps it\); to keep it, give another path; "
                                         r"to replace it unwarned, force \(--force\)"):
        arborparse.train(data, path=notes, **options)  # a model replaces a model, said
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".* holds a model")
        arborparse.train(data, path=notes, force=True, **options)  # meant: nothing said
    done = subprocess.run([sys.executable, "-m", "arborparse", "train", "--train", str(data),
                           "--model", str(notes), "--components", "parser", "--trainer",
                           "perceptron", "--epochs", "1", "--hash-bits", "12", "--quiet"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stderr.startswith(
        f"Warning: {notes} holds a model, which this training replaces"), done.stderr


def test_a_tokenizer_before_a_parser_that_reads_tags_needs_a_tagger():
    with pytest.raises(ArborparseError, match=r"^components tokenizer,parser: the linear "
                       r"parser reads tags, so a model that tokenizes raw text needs a tagger"):
        arborparse.train(separable(1), components="tokenizer,parser", progress=False)


def test_resume_without_the_model_file_says_so(tmp_path):
    path = tmp_path / "m.npz"
    (tmp_path / "m.npz.checkpoint").write_text("left")
    with pytest.raises(ArborparseError, match=r"m\.npz is gone .* cannot go on alone: start "
                                              r"again with force"):
        arborparse.train(separable(1), components="parser", progress=False, path=path,
                         resume=True, trainer="perceptron", hash_bits=12)


def test_force_replaces_a_damaged_checkpoint(tmp_path):
    """A checkpoint that is not a model file (damaged, or a stray file) is the training's
    own: with force, the training starts again and writes over it."""
    data = tmp_path / "t.conllu"
    data.write_text(separable_text(1))
    path = tmp_path / "m.npz"
    (tmp_path / "m.npz.checkpoint").write_text("junk")
    options = dict(components="parser", progress=False, trainer="perceptron", epochs=2,
                   hash_bits=12, path=path)
    with pytest.raises(ArborparseError, match="holds an interrupted training"):
        arborparse.train(data, data, **options)
    arborparse.train(data, data, force=True, **options)
    assert info(path)["chosen_on_dev"]["epoch"] in (1, 2)


def test_a_multi_root_parser_trains_with_a_dev_set(ud, tmp_path):
    """Its dev trees may have several roots: scored as they are (the CoNLL-U format and
    the official script want one), not refused."""
    folder = ud / "UD_English-EWT"
    train = read_conllu(folder / "en_ewt-ud-train.conllu")[:150]
    dev = read_conllu(folder / "en_ewt-ud-dev.conllu")[:100]
    fitted = arborparse.train(train, dev, family="linear", components=["parser"],
                              multi_root=True, epochs=2, hash_bits=16, progress=False)
    assert not fitted.parser.single_root
    parsed = fitted.parse(dev)
    assert any((s.heads[1:] == 0).sum() > 1 for s in parsed)  # it does parse several
    assert fitted.info["scores"]["LAS"] == pytest.approx(
        evaluate(dev, parsed, multi_root=True)["LAS"], abs=0.01)


def test_a_later_epoch_must_beat_the_score_of_the_parser_kept():
    """Where `on_best` changes the kept parser's score (a tag reach dropped raises its dev
    LAS), a later epoch is best only above that score, not above the one it was first
    given."""
    class Trainer:
        epochs, progress = 3, False

    loop = Loop(Trainer(), True, on_best=lambda parser, record: {"LAS": record["LAS"] + 2})
    best = [loop.end(epoch, {}, "", scores={"LAS": las})
            for epoch, las in zip(loop, [70.0, 71.0, 72.5])]
    loop.finish()
    assert best == [True, False, True] and loop.best_score == 74.5
    assert [r["LAS"] for r in loop.history] == [72.0, 71.0, 74.5]


def test_a_loop_goes_on_past_its_epochs_while_the_best_is_recent(capsys):
    class Trainer:
        epochs, progress = 4, False

    def epochs_run(scores, extend, trainer=Trainer()):
        loop, seen = Loop(trainer, True, extend=extend), []
        for epoch in loop:
            seen.append(epoch)
            loop.end(epoch, {}, "", scores={"LAS": scores[epoch - 1]})
        loop.finish()
        return seen
    rising = list(range(1, 20))
    assert epochs_run(rising, 0) == [1, 2, 3, 4]
    assert epochs_run(rising, 3) == list(range(1, 13))  # at most 3 times the epochs
    # the best at 5, then three without a better score
    assert epochs_run([1, 2, 3, 4, 5, 4, 4, 4, 9, 9, 9, 9], 3) == list(range(1, 9))
    assert epochs_run([1, 5, 3, 3, 9, 9], 2) == [1, 2, 3, 4]  # the best two epochs back
    assert epochs_run([1, 5, 3, 3, 9, 9, 9, 9], 3) == [1, 2, 3, 4, 5, 6, 7, 8]
    shown = Trainer()
    shown.progress = True  # the lines say why it went on, and why it stopped
    epochs_run([1, 5, 3, 3, 9, 9, 9, 9], 3, shown)
    err = capsys.readouterr().err
    assert "epoch 4/4  " in err and "epoch 5 (past 4: a best in the last 3)  " in err
    assert err.endswith("went on past epoch 4 while the best dev LAS came in the last 3 "
                        "epochs: stopped at epoch 8, 3 epochs after the best\n")
    epochs_run(rising, 3, shown)
    assert capsys.readouterr().err.endswith(
        "stopped at epoch 12, 3 times the epochs asked for, with the best still recent (give "
        "more epochs to go on)\n")
    epochs_run([9, 1, 1, 1], 3, shown)  # not past the epochs: nothing more to say
    assert "went on" not in capsys.readouterr().err


def test_the_linear_family_extends_its_epochs_on_dev(treebank):
    train, dev = treebank
    nlp = arborparse.train(train, dev, components="parser", progress=False, extend=2,
                           trainer="perceptron", hash_bits=12)
    assert nlp.info["options"]["extend"] == 2
    with pytest.raises(ArborparseError, match="extend goes on past the epochs only with dev "
                                              "data"):
        arborparse.train(train, components="parser", progress=False, extend=2)
    without = arborparse.train(train, components="parser", progress=False, extend=0,
                               epochs=1, hash_bits=12)  # 0 asks for nothing dev must tell
    assert without.info["options"]["extend"] == 0
    for extend, epochs in ((0, 1), (2, 3)):  # the first epoch is the best so far: two more
        trainer = OnlineTrainer("perceptron", epochs=1, extend=extend, hash_bits=12,
                                progress=False)
        trainer.fit(read_conllu(train), read_conllu(dev))
        assert len(trainer.history_) == epochs


@pytest.mark.parametrize("tags", [False, True])
def test_the_linear_decoder_is_chosen_on_dev_unless_given(treebank, monkeypatch, tags):
    """The kept decoder is the one whose dev LAS is higher by more than the tolerance (mst
    otherwise), whichever wins: `tags` makes eisner's trees score better on dev."""
    from arborparse.linear.parser import LinearParser
    from arborparse.linear.reach import TOLERANCE

    train, dev = treebank
    if tags:  # eisner's dev trees made the gold ones, mst's a chain to the left
        def rigged(self, sentences, decoder=None, **options):
            sentences = list(sentences)
            if (decoder or self.decoder) == "eisner":
                return sentences
            return [s.with_tree(np.arange(-1, len(s)), ["dep"] * len(s)) for s in sentences]
        monkeypatch.setattr(LinearParser, "parse", rigged)
    nlp = arborparse.train(train, dev, components="parser", progress=False, labeler=False,
                           trainer="perceptron", hash_bits=12)
    chosen = nlp.info["chosen_on_dev"]["decoder"]
    gold = read_conllu(dev)
    las = {d: evaluate(gold, nlp.parser.parse(gold, decoder=d))["LAS"]
           for d in ("mst", "eisner")}
    assert chosen == ("eisner" if las["eisner"] > las["mst"] + TOLERANCE else "mst")
    assert nlp.parser.decoder == chosen and nlp.info["scores"]["LAS"] == round(las[chosen], 2)
    assert chosen == ("eisner" if tags else "mst")
    given = arborparse.train(train, dev, components="parser", progress=False, labeler=False,
                             trainer="perceptron", hash_bits=12, decoder="mst")
    assert "decoder" not in given.info["chosen_on_dev"] and given.parser.decoder == "mst"


def test_a_decoder_chosen_on_dev_fits_the_temperature_and_tag_reach_again(treebank):
    from arborparse.linear.train import OnDev

    class Parser:
        decoder, single_root, tag_reach = "mst", True, None

        def parse(self, sentences, decoder=None):  # eisner's trees are the gold ones
            return list(sentences)

        def calibrate(self, dev):
            self.calibrated_for = self.decoder
            return {"temperature": 2.0, "label_temperature": 0.5}
    parser, dev = Parser(), read_conllu(treebank[1])
    found = OnDev(None, progress=False, decoder=True)._choose_decoder(
        parser, dev, {"UAS": 60.0, "LAS": 50.0, "temperature": 1.0})
    assert found == {"decoder": "eisner", "UAS": 100.0, "LAS": 100.0, "temperature": 2.0,
                     "label_temperature": 0.5, "tag_reach": False}
    assert parser.decoder == parser.calibrated_for == "eisner"
    assert OnDev(None, progress=False, decoder=True)._choose_decoder(  # within the margin
        Parser(), dev, {"UAS": 100.0, "LAS": 99.95}) == {"decoder": "mst"}


@pytest.mark.parametrize("scores", [[1, 2, 3, 4, 1, 1, 1, 1], [4, 3, 2, 1, 1], list(range(20))])
def test_past_its_epochs_every_process_follows_process_0(scores):
    """In a data-parallel run the other processes keep no scores: past the epochs they ask
    process 0 (`agree`) as often as it decides, and stop where it stops."""
    class Trainer:
        epochs, progress = 4, False

    def run(lead, agree):
        loop, seen = Loop(Trainer(), True, extend=3, lead=lead, agree=agree), []
        for epoch in loop:
            seen.append(epoch)
            loop.end(epoch, {}, "", scores={"LAS": scores[epoch - 1]})
        return seen
    decided = []
    first = run(True, lambda stop: decided.append(stop) or stop)
    replay = iter(decided)
    asked = []
    others = run(False, lambda stop: asked.append(stop) or next(replay))
    assert others == first and len(asked) == len(decided)


def test_the_front_ends_stages_are_said_in_a_log_too(capsys):
    """The lemmatizer and the jackknife show no epochs of their own: with progress, a line
    says each began (stderr redirected to a file shows no bars)."""
    arborparse.train(separable(2), separable(1), components="tagger,lemmatizer,parser",
                     progress=True, epochs=1, folds=2, hash_bits=12)
    err = capsys.readouterr().err
    assert "training the lemmatizer\n" in err
    assert "jackknifing: the training sentences tagged in 2 folds, each by a tagger and " \
           "lemmatizer trained on the others\n" in err
    # its last line, as the command line's: the time, dev scores, kept epoch, no file
    assert re.fullmatch(r"trained in \d+\.\d s \(dev UAS [\d.]+  LAS [\d.]+, epoch \d+\): "
                        r"not saved \(save\(path\) writes it\)", err.splitlines()[-1])


def test_an_epochs_stopwatch_counts_numba_compiling_apart():
    """The first call of a kernel compiles it (an epoch's line says so, its rate without
    it); the next call does not."""
    from numba import njit

    from arborparse.training import compiling_said, stopwatch

    @njit
    def twice(x):
        return 2 * x

    with stopwatch() as took:
        twice(3)
    assert 0 < took["compiling"] <= took["seconds"]
    with stopwatch() as again:
        twice(4)
    assert again["compiling"] == 0.0 and compiling_said(again) == ""
    assert compiling_said({"seconds": 80.0, "compiling": 70.04}) == \
        " (70.0s of it compiling, once per install)"


def test_the_tokenizers_dev_segmentation_is_scored_as_the_official_script_scores_it(
        ud, tmp_path):
    """A model with a tokenizer records its Tokens, Words and Sentences F1 on the dev text
    (a Coptic trial could not see that word segmentation was its largest loss): those the
    CoNLL 2018 script gives its tokenizer's reading of that text."""
    from conll18 import official_scores

    from arborparse.io import write_conllu
    from arborparse.text.tokenizer import paragraphs

    sentences = read_conllu(ud / "UD_English-EWT" / "en_ewt-ud-dev.conllu")
    train, dev = sentences[:200], sentences[200:260]
    nlp = arborparse.train(train, dev, components="tokenizer", progress=False)
    gold, system = tmp_path / "gold.conllu", tmp_path / "system.conllu"
    write_conllu(dev, gold)
    text = "\n\n".join(t for t, _ in paragraphs(dev))
    write_conllu([s.with_tree(np.arange(-1, len(s)), ["dep"] * len(s))
                  for s in nlp.parse_text(text)], system)
    found = official_scores(gold, system)
    assert {k: nlp.info["scores"][k] for k in ("Tokens", "Words", "Sentences")} == \
        {k: round(100 * found[k].f1, 2) for k in ("Tokens", "Words", "Sentences")}
    assert nlp.info["scores"]["Sentences"] < 100  # a score, not a formality


def test_the_front_ends_dev_scores_are_counted_as_evaluate_counts_them(ud):
    """The model's dev UPOS, XPOS, UFeats and Lemmas are those `evaluate` (and the CoNLL
    2018 script) gives the front end's tags and lemmas of the dev words: UFeats over the
    universal features alone, and a gold lemma ``_`` matched by any."""
    sentences = read_conllu(ud / "UD_English-EWT" / "en_ewt-ud-dev.conllu")
    train, dev = sentences[:80], sentences[80:110]
    dev = [s.with_columns({LEMMA: ["_" if i % 3 == 0 else lemma for i, lemma in
                                   enumerate(s.lemmas)],
                           FEATS: [f"{f}|Layout=Wide" if f != "_" else "Layout=Wide"
                                   for f in s.feats]}) for s in dev]
    nlp = arborparse.train(train, dev, components="tagger,lemmatizer", progress=False)
    tagged = nlp.parse(dev, retag=True)
    found = evaluate(dev, [p.with_tree(g.heads, g.deprels) for g, p in zip(dev, tagged)])
    assert nlp.info["scores"] == {k: round(found[k], 2)
                                  for k in ("UPOS", "XPOS", "UFeats", "Lemmas")}
    # a treebank without lemmas: a lemmatizer that learned none has no Lemmas score
    blank = [[s.with_columns({LEMMA: ["_"] * len(s)}) for s in part] for part in (train, dev)]
    nlp = arborparse.train(*blank, components="tagger,lemmatizer", progress=False)
    assert not nlp.lemmatizer.enabled and "Lemmas" not in nlp.info["scores"]


def test_a_lemmatizer_without_a_tagger_in_front_of_a_parser_trains_and_relemmatizes(tmp_path):
    """A lemmatizer alone in front of the parser jackknifes the training lemmas (it used to
    fail: retag applied only to a pipeline with a tagger); its model takes ``retag``, and
    the offer read from the file's header says so too."""
    from arborparse.pipeline import offer

    nlp = arborparse.train(separable(2), separable(1), components="lemmatizer,parser",
                           progress=False, epochs=1, folds=2, hash_bits=12)
    assert nlp.components == ["lemmatizer", "parser"] and nlp.capabilities.tags
    assert len(nlp.parse(separable(1), retag=True)) == len(separable(1))
    nlp.save(tmp_path / "m.npz")
    assert offer(tmp_path / "m.npz").capabilities.tags


def test_a_resume_from_the_front_end_may_change_the_parsers_options_and_an_error_clears_it(
        tmp_path, monkeypatch):
    """From ``PATH.front`` the parser trains from its start: its options may change (not the
    front end's seed or folds), and a trainer that writes no checkpoint (L-BFGS) may go on
    from it. An error that is not an interrupt (a diverged training) leaves nothing beside
    the model, so that a plain run starts again."""
    from arborparse.training import Diverged

    def stop(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr("arborparse.text.jackknife.jackknife", stop)
    path = tmp_path / "m.npz"
    options = dict(components="tagger,parser", progress=False, path=path, folds=2,
                   hash_bits=12, epochs=1)
    with pytest.raises(TrainingInterrupted, match="m.npz.front holds the trained tagger"):
        arborparse.train(separable(2), separable(1), trainer="perceptron", **options)
    monkeypatch.undo()
    with pytest.raises(ArborparseError, match=r"other seed 0 \(now 1\)"):
        arborparse.train(separable(2), separable(1), trainer="perceptron", resume=True,
                         seed=1, **options)
    nlp = arborparse.train(separable(2), separable(1), trainer="loglinear", C=1.0,
                           resume=True, **options)
    assert nlp.info["options"]["trainer"] == "loglinear"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.npz"]

    def diverge(self, *args, **kwargs):
        raise Diverged(1, "its loss is nan")
    monkeypatch.setattr(OnlineTrainer, "fit", diverge)
    with pytest.raises(Diverged):
        arborparse.train(separable(2), separable(1), trainer="perceptron", force=True,
                         **options)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.npz"]  # the earlier model
