"""`arborparse.train(..., family="ensemble")`: a linear pipeline and a neural parser trained
and combined in one call, each member saved beside the model as it trains, so that an
interrupted training resumes from what it finished; what it cannot do is refused."""

import os

import pytest
from click.testing import CliRunner

import arborparse
from arborparse.cli import cli
from arborparse.errors import ArborparseError
from arborparse.io import read_conllu, write_conllu
from arborparse.neural.options import NeuralOptions
from arborparse.training import Loop, TrainingInterrupted


@pytest.fixture(scope="module")
def data(ud):
    sentences = read_conllu(ud / "UD_English-EWT" / "en_ewt-ud-dev.conllu")
    return sentences[:60], sentences[60:80]


def test_an_ensemble_trains_both_members_resumes_after_an_interrupt_and_combines_them(
        data, tmp_path, monkeypatch):
    train, dev = data
    files = tmp_path / "train.conllu", tmp_path / "dev.conllu"  # recorded by their sha256
    for part, file in zip(data, files):
        write_conllu(part, file)
    monkeypatch.setattr(NeuralOptions, "by_size", classmethod(
        lambda cls, sentences, given: {"epochs": 3, "patience": 3}))
    save = Loop._save_checkpoint

    def interrupted(self, epoch, *args):  # Ctrl-C in the neural member's second epoch
        save(self, epoch, *args)
        if epoch == 2 and str(self.checkpoint).endswith(".neural.checkpoint"):
            raise KeyboardInterrupt

    monkeypatch.setattr(Loop, "_save_checkpoint", interrupted)
    path = tmp_path / "e.npz"
    with pytest.raises(TrainingInterrupted) as caught:
        arborparse.train(*map(str, files), family="ensemble", path=path, progress=False)
    said = str(caught.value)
    assert f"{path}.neural.checkpoint holds the last finished epoch" in said
    assert said.endswith(f"(in the ensemble's neural parser, stage 2 of 3); to go on, resume "
                         f"the ensemble (--model {path} --resume)")
    assert not path.exists() and os.path.exists(f"{path}.linear")
    assert not os.path.exists(f"{path}.linear.checkpoint")
    monkeypatch.setattr(Loop, "_save_checkpoint", save)
    with pytest.raises(ArborparseError, match=f"{path}.linear holds a member of an "
                                              "interrupted ensemble training"):
        arborparse.train(*map(str, files), family="ensemble", path=path, progress=False)
    with pytest.raises(ArborparseError, match="other train data"):
        arborparse.train(train[:50], str(files[1]), family="ensemble", path=path, progress=False,
                         resume=True)
    with pytest.raises(ArborparseError, match=r"other seed 0 \(now 1\), multi_root False "
                                              r"\(now True\); resume with the same data"):
        arborparse.train(*map(str, files), family="ensemble", path=path, progress=False,
                         resume=True, seed=1, multi_root=True)

    def not_again(*args, **kwargs):
        raise AssertionError("the finished linear member was trained again")
    monkeypatch.setattr("arborparse.linear.train.trainer", not_again)
    nlp = arborparse.train(*map(str, files), family="ensemble", path=path, progress=False,
                           resume=True)
    info = arborparse.load(path).info
    # the members and their files gone, but a member better alone (as here, from 60
    # sentences), which the model's warnings name
    better = [w for w in info["warnings"] if f"it is kept at {path}.linear" in w]
    assert sorted(os.listdir(tmp_path)) == sorted(["dev.conllu", "e.npz", "train.conllu"]
                                                  + ["e.npz.linear"] * len(better))
    assert info["family"] == "ensemble" and info["options"]["seed"] == 0
    assert [m["family"] for m in info["members"].values()] == ["linear", "neural"]
    assert all(0 <= m["dev LAS"] <= m["dev UAS"] <= 100 for m in info["members"].values())
    shown = CliRunner().invoke(cli, ["info", str(path)]).output  # each member's own, and
    # each file once
    assert f"first             family linear  weight {info['members']['first']['weight']}" \
        f"  dev UAS {info['members']['first']['dev UAS']:.2f}" in shown
    assert "  first dev         the same file as dev\n" in shown
    assert info["chosen_on_dev"]["weight"] == info["options"]["weight"]
    assert info["data"]["first train"]["sentences"] == 60 and info["data"]["dev"]
    assert info["training_seconds"] > 0
    assert {"UPOS", "Lemmas", "UAS", "LAS"} <= set(info["scores"])  # the front end's too
    doc = nlp("The cat sat on the mat. It was happy.")
    assert len(doc.sentences) == 2
    assert all(w.head is not None for s in doc.sentences for w in s.words)


def test_an_interrupt_before_any_member_or_while_combining_says_what_is_kept(
        data, tmp_path, monkeypatch):
    train, dev = data
    monkeypatch.setattr(NeuralOptions, "by_size", classmethod(
        lambda cls, sentences, given: {"epochs": 1, "patience": 1}))
    path = tmp_path / "e.npz"

    def stop(*args, **kwargs):
        raise KeyboardInterrupt
    monkeypatch.setattr("arborparse.trainer.front_end", stop)
    with pytest.raises(TrainingInterrupted) as caught:
        arborparse.train(train, dev, family="ensemble", path=path, progress=False)
    assert str(caught.value).endswith("(in the ensemble's linear pipeline, stage 1 of 3)")
    assert os.listdir(tmp_path) == []  # nothing to go on from, and no advice to
    monkeypatch.undo()
    monkeypatch.setattr(NeuralOptions, "by_size", classmethod(
        lambda cls, sentences, given: {"epochs": 1, "patience": 1}))
    monkeypatch.setattr("arborparse.ensemble.train.combine", stop)
    with pytest.raises(TrainingInterrupted) as caught:
        arborparse.train(train, dev, family="ensemble", path=path, progress=False,
                         components="tagger,parser")
    assert str(caught.value) == (
        f"training interrupted while choosing the members' shares on dev (stage 3 of 3): "
        f"both members are kept ({path}.linear, {path}.neural); to go on, resume the "
        f"ensemble (--model {path} --resume)")
    monkeypatch.undo()
    monkeypatch.setattr(NeuralOptions, "by_size", classmethod(
        lambda cls, sentences, given: {"epochs": 1, "patience": 1}))
    monkeypatch.setattr("arborparse.trainer.front_end", stop)  # nothing trained again
    nlp = arborparse.train(train, dev, family="ensemble", path=path, progress=False,
                           components="tagger,parser", resume=True)
    assert nlp.info["components"] == ["tagger", "parser"] and path.exists()


def test_what_an_ensemble_training_cannot_do_is_refused(data, tmp_path):
    train, dev = data
    with pytest.raises(ArborparseError, match="an ensemble needs dev data"):
        arborparse.train(train, family="ensemble")
    with pytest.raises(ArborparseError, match="components tagger: an ensemble is two "
                                              "parsers combined; add parser"):
        arborparse.train(train, dev, family="ensemble", components="tagger")
    with pytest.raises(ArborparseError, match="epochs"):
        arborparse.train(train, dev, family="ensemble", epochs=3)
    with pytest.raises(ArborparseError, match="resume: nothing of an ensemble training"):
        arborparse.train(train, dev, family="ensemble", path=tmp_path / "e.npz",
                         resume=True)
    result = CliRunner().invoke(cli, ["train", "--model-type", "ensemble", "--train", "x",
                                      "--dev", "y", "--model", str(tmp_path / "m.npz"),
                                      "--epochs", "3"])
    assert result.exit_code == 2 and "--epochs does not apply to --model-type ensemble" \
        in result.output


def test_an_ensemble_below_a_member_alone_on_dev_says_so():
    from types import SimpleNamespace

    from arborparse.ensemble.train import _below, _better_member

    members = [SimpleNamespace(info={"scores": {"LAS": las}}) for las in (54.24, 1.56)]
    assert _better_member({"LAS": 52.23}, members) == ("linear", 54.24)
    assert _below({"LAS": 52.23}, "linear", 54.24, {"linear": "e.npz.linear"}) == (
        "the ensemble's dev LAS (52.23) is below that of its linear member parsing alone "
        "(54.24): that model alone serves this data better; it is kept at e.npz.linear")
    assert _below({"LAS": 52.23}, "linear", 54.24, {"linear": None}).endswith(
        "; train it alone (--model-type linear)")
    assert _better_member({"LAS": 54.24}, members) is None
    assert _better_member({"LAS": 50.0}, [SimpleNamespace(info={}), members[1]]) is None


def test_an_ensemble_without_a_path_trains_its_members_without_one(data, monkeypatch):
    """No model file: the members are trained in memory (a member's files are not looked
    for: there are none), and an interrupt says nothing of resuming."""
    train, dev = data
    paths = []

    def member(*args, path=None, resume=False, **kwargs):
        paths.append((path, resume))
        raise TrainingInterrupted(None, None, message="stopped")

    from arborparse.ensemble.train import train as ensemble

    monkeypatch.setattr("arborparse.trainer.train", member)  # each member's training
    with pytest.raises(TrainingInterrupted, match=r"^stopped \(in the ensemble's linear "
                                                  r"pipeline, stage 1 of 3\)$"):
        ensemble(train, dev, progress=False)
    assert paths == [(None, False)]
