"""The train and parse commands end to end on a small treebank."""

import fcntl
import io
import os
import re
import pty
import struct
import termios
import subprocess
import sys

import numpy as np
import pytest
from click.testing import CliRunner
from treebanks import separable_text

import arborparse
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
                                 "--trainer", "mira", "--quiet",
                                 "--components", "parser"])
    assert r.exit_code == 0, r.output
    return root, train, model


def _stderr_on_a_terminal(args: list, stdin=None) -> str:
    """What `arborparse ARGS` writes to stderr when stderr is a terminal (a pseudo one)."""
    main, side = pty.openpty()
    fcntl.ioctl(side, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))  # 100 columns
    proc = subprocess.Popen([sys.executable, "-m", "arborparse", *map(str, args)],
                            stdin=stdin, stdout=subprocess.DEVNULL, stderr=side)
    os.close(side)
    seen = b""
    while True:
        try:
            chunk = os.read(main, 4096)
        except OSError:  # the other end closed
            break
        if not chunk:
            break
        seen += chunk
    os.close(main)
    assert proc.wait(timeout=300) == 0, seen
    return seen.decode()


def test_parse_shows_progress_on_a_terminal_for_a_file(trained):
    root, train, model = trained
    out = root / "progress.conllu"
    shown = _stderr_on_a_terminal(["parse", "--model", model, train, "-o", out])
    count = len(read_conllu(train))
    assert f"parsing: {count} sentences" in shown and "words/s" in shown, shown
    assert out.read_text() == train.read_text()
    with open(train) as stdin:  # not for stdin (its size is unknown, and it may be a pipe)
        assert _stderr_on_a_terminal(["parse", "--model", model, "-o", out], stdin) == ""
    r = subprocess.run([sys.executable, "-m", "arborparse", "parse", "--model", model, train,
                        "-o", out, "--force"], capture_output=True, text=True)
    assert r.returncode == 0 and r.stderr == ""  # nor when stderr is not a terminal


def test_parse_imports_neither_the_trainer_nor_the_service_nor_progress_bars(trained):
    """A parse without a progress bar starts without importing what it does not use: the
    trainer, the service's process pools (asyncio) and tqdm (a fifth of a second of every
    command's start between them); `arborparse.train` is there when asked for. The
    loaded model's objects are frozen while it parses (`gc.freeze`: full collections skip
    them), and unfrozen after (for a caller in the same process)."""
    root, train, model = trained
    code = ("import gc, sys\n"
            "frozen, freeze = [], gc.freeze\n"
            "gc.freeze = lambda: (frozen.append(len(gc.get_objects())), freeze())\n"
            f"sys.argv = ['arborparse', 'parse', '--model', {str(model)!r}, {str(train)!r}, "
            f"'-o', {str(root / 'imports.conllu')!r}, '--force']\n"
            "from arborparse.cli import cli\n"  # main() ends the process (cli._end_now)
            "try:\n    cli(prog_name='arborparse')\n"
            "except SystemExit as end:\n    assert not end.code, end.code\n"
            "print(sorted(m for m in ('arborparse.trainer', 'asyncio', 'tqdm') "
            "if m in sys.modules))\n"
            "import arborparse\nprint(arborparse.train.__module__)\n"
            "print(len(frozen) == 1 and gc.get_freeze_count() == 0)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.split("\n")[:3] == ["[]", "arborparse.trainer",
                                                              "True"], r.stdout + r.stderr


def test_the_command_collects_garbage_less_often():
    """The command (not the library) raises the youngest generation's threshold."""
    code = ("import gc, sys\nfrom arborparse.cli import GC_YOUNG, main\n"
            "sys.argv = ['arborparse', '--version']\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "print(gc.get_threshold()[0] == GC_YOUNG > 700)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.stdout.splitlines()[-1] == "True", r.stdout + r.stderr


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
    # its tenth column is PDEPREL, not MISC: no place for the marginals
    r = CliRunner().invoke(cli, ["parse", "--model", str(model), "--marginals", str(conllx),
                                 "-o", str(root / "out.conllx")])
    assert r.exit_code == 1 and not (root / "out.conllx").exists()
    assert r.output.strip().splitlines() == [
        f"Error: {conllx}:1: CoNLL-X has no MISC column for HeadProb and LabelProb (its tenth "
        "column is PDEPREL): give CoNLL-U"]


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


def test_mbr_and_marginals(trained):
    root, train, model = trained
    r = CliRunner().invoke(cli, ["parse", "--model", str(model), str(train), "--decode", "mbr"])
    assert r.exit_code == 0 and len(read_conllu(io.StringIO(r.output))) == 18
    r = CliRunner().invoke(cli, ["parse", "--model", str(model), str(train), "--marginals"])
    assert r.exit_code == 0
    original = [ln.split("\t") for ln in train.read_text().splitlines()]
    marked = [ln.split("\t") for ln in r.output.splitlines()]
    for a, b in zip(original, marked, strict=True):
        if len(a) == 10:
            assert a[:9] == b[:9]
            head_prob, label_prob = (float(kv.split("=")[1]) for kv in b[9].split("|"))
            assert 0.0 <= head_prob <= 1.0 and 0.0 <= label_prob <= 1.0
        else:
            assert a == b


def test_parser_marginals(trained):
    _, train, model = trained
    parser = arborparse.load(model).parser
    sentence = read_conllu(train)[1]
    for decoder in ("mst", "eisner"):
        mu = parser.marginals(sentence, decoder)
        n = len(sentence)
        assert mu.shape == (n + 1, n + 1, len(parser.model.labels))
        assert abs(mu[:, 1:].sum(axis=(0, 2)) - 1).max() < 1e-9
        # MBR's tree has at least as many expected correct heads as the best tree
        heads_mu = mu.sum(axis=2)
        mbr = parser.parse_one(sentence, decoder=decoder, decode_as="mbr").heads
        best = parser.parse_one(sentence, decoder=decoder).heads
        m = np.arange(1, n + 1)
        assert heads_mu[mbr[1:], m].sum() >= heads_mu[best[1:], m].sum() - 1e-12


def test_train_ends_saying_how_long_it_took_and_where_the_model_is(tmp_path):
    train = tmp_path / "train.conllu"
    train.write_text(separable_text())
    model = tmp_path / "m.npz"
    r = CliRunner().invoke(cli, ["train", "--train", str(train), "--dev", str(train),
                                 "--model", str(model), "--epochs", "1", "--hash-bits", "12",
                                 "--components", "parser"])
    assert r.exit_code == 0, r.output
    last = r.stderr.splitlines()[-1]
    assert re.fullmatch(rf"trained in \d+\.\d s \(dev UAS [\d.]+  LAS [\d.]+, epoch 1\): "
                        rf"saved {re.escape(str(model))} \(arborparse info .* says what it "
                        r"holds\)", last), last
    assert "epoch 1/1" in r.stderr and " sent/s " in r.stderr


def test_train_options_that_cannot_be_are_usage_errors(tmp_path):
    """A component no model has, or --extend without --dev: status 2 and one line in the
    command line's words, as for any other option the command cannot take."""
    train = tmp_path / "train.conllu"
    train.write_text(separable_text())
    for args, said in ((["--components", "parser,foo"], "Invalid value for '--components': "
                        "choose among tokenizer, tagger, lemmatizer, parser (got "
                        "'parser,foo')"),
                       (["--extend", "2"], "--extend 2 goes on past the epochs only with dev "
                        "data, whose LAS says when to stop: give --dev, or leave out "
                        "--extend")):
        r = CliRunner().invoke(cli, ["train", "--train", str(train), "--model",
                                     str(tmp_path / "m.npz"), *args])
        assert r.exit_code == 2 and r.stderr.splitlines()[-1] == f"Error: {said}", r.stderr
        assert not (tmp_path / "m.npz").exists()


def test_train_loglinear(tmp_path):
    train = tmp_path / "train.conllu"
    train.write_text(separable_text())
    model = tmp_path / "ll.npz"
    r = CliRunner().invoke(cli, ["train", "--train", str(train), "--model", str(model),
                                 "--trainer", "loglinear-sgd", "--epochs", "3", "-C", "10",
                                 "--learning-rate", "0.5", "--hash-bits", "14", "--quiet"])
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(cli, ["parse", "--model", str(model), str(train)])
    assert r.exit_code == 0 and r.stdout == train.read_text()
    # its tagger left the input's tags as they were, and parse says so
    assert r.stderr == "Note: all 18 sentences kept the input's tags (every word had a " \
        "UPOS); --retag tags every sentence, --keep-tags trusts the input's (and says " \
        "nothing)\n"
    one = tmp_path / "one.conllu"
    one.write_text(train.read_text().split("\n\n")[0] + "\n\n")
    r = CliRunner().invoke(cli, ["parse", "--model", str(model), str(one)])
    assert r.stderr.startswith("Note: the sentence kept the input's tags (every word had a ")
    r = CliRunner().invoke(cli, ["parse", "--model", str(model), str(train), "--keep-tags"])
    assert r.exit_code == 0 and r.stdout == train.read_text() and not r.stderr
    mbr = [CliRunner().invoke(cli, ["parse", "--model", str(model), str(train), "--keep-tags",
                                    flag, "mbr"]) for flag in ("--decode", "--decode-as")]
    assert mbr[0].exit_code == 0 and mbr[0].stdout == mbr[1].stdout  # the API's name too
    r = CliRunner().invoke(cli, ["train", "--train", str(train), "--model", str(model),
                                 "--trainer", "loglinear", "--exact-features"])
    assert r.exit_code == 2
