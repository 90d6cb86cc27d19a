"""The train and parse commands end to end on a small treebank."""

import subprocess
import sys

import pytest
from click.testing import CliRunner
from treebanks import separable_text

from arborparse.cli import cli
from arborparse.io import read_conllu


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    root = tmp_path_factory.mktemp("cli")
    train = root / "train.conllu"
    train.write_text(separable_text())
    model = root / "model.npz"
    r = CliRunner().invoke(cli, ["train", "--train", str(train), "--dev", str(train),
                                 "--model", str(model), "--epochs", "4", "--hash-bits", "16",
                                 "--trainer", "mira", "--quiet"])
    assert r.exit_code == 0, r.output
    return root, train, model


def test_parse_file_and_stdin(trained):
    root, train, model = trained
    out = root / "out.conllu"
    r = CliRunner().invoke(cli, ["parse", "--model", str(model), str(train), "-o", str(out)])
    assert r.exit_code == 0, r.output
    assert out.read_text() == train.read_text()  # a perfect parse reproduces the file
    r = CliRunner().invoke(cli, ["parse", "--model", str(model)], input=train.read_text())
    assert r.exit_code == 0 and r.output == train.read_text()


def test_parse_changes_only_head_and_deprel(trained):
    root, train, model = trained
    scrambled = root / "scrambled.conllu"
    text = train.read_text()
    lines = [ln.split("\t") for ln in text.split("\n")]
    for cols in lines:
        if len(cols) == 10:
            cols[6], cols[7] = "_", "_"
    scrambled.write_text("\n".join("\t".join(c) for c in lines))
    r = CliRunner().invoke(cli, ["parse", "--model", str(model), str(scrambled)])
    assert r.exit_code == 0
    assert r.output == text


def test_conllx_in_conllx_out(trained):
    root, train, model = trained
    conllx = root / "in.conllx"
    sentences = read_conllu(train)
    conllx.write_text("".join("\n".join(ln for ln in s.to_text().split("\n")
                                        if not ln.startswith("#")) for s in sentences))
    r = CliRunner().invoke(cli, ["parse", "--model", str(model), str(conllx)])
    assert r.exit_code == 0
    assert r.output == conllx.read_text()


def test_errors_are_one_line(trained, tmp_path):
    _, train, model = trained
    bad_model = tmp_path / "bad.npz"
    bad_model.write_text("nonsense")
    for args in (["parse", "--model", str(bad_model), str(train)],
                 ["parse", "--model", str(tmp_path / "none.npz"), str(train)],
                 ["train", "--train", str(tmp_path / "none.conllu"), "--model",
                  str(tmp_path / "m.npz")]):
        proc = subprocess.run([sys.executable, "-m", "arborparse", *args], capture_output=True,
                              text=True)
        assert proc.returncode == 1, proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr
    assert not (tmp_path / "m.npz").exists()
