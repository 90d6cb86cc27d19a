"""The command line on broken inputs and unsafe outputs, as a new user meets them: one line
on stderr naming the file (and line), exit status 1, nothing partially written, nothing
overwritten by surprise."""

import io
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from treebanks import separable_text

import arborparse
from arborparse.cli import cli
from arborparse.linear.online import OnlineTrainer
from arborparse.training import TrainingInterrupted

MODELS = Path(__file__).parent / "data" / "models"
MODEL = MODELS / "perceptron-v2.npz"


def arborparse_cli(*args, input=None, cwd=None):
    """Run the command in a process of its own: (exit status, stdout, stderr)."""
    proc = subprocess.run([sys.executable, "-m", "arborparse", *map(str, args)], input=input,
                          capture_output=True, text=True, cwd=cwd, timeout=300)
    return proc.returncode, proc.stdout, proc.stderr


def one_line_error(status, stderr, *parts):
    assert status == 1, stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in stderr, stderr
    for part in parts:
        assert part in lines[0], lines[0]


@pytest.fixture
def treebank(tmp_path):
    path = tmp_path / "t.conllu"
    path.write_text(separable_text(1))
    return path


def run(*args, input=None):
    return CliRunner().invoke(cli, list(map(str, args)), input=input)


# 1, 4: outputs -----------------------------------------------------------------------------

def test_parse_to_a_full_device_is_one_line(treebank):
    status, _, err = arborparse_cli("parse", "--model", MODEL, treebank, "-o", "/dev/full")
    one_line_error(status, err, "cannot write /dev/full: No space left on device")
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)


def test_parse_to_stdout_ends_with_all_of_it_or_one_line(treebank, tmp_path):
    """A serial parse ends without the interpreter's shutdown (`cli._end_now`): its output
    is whole on stdout, and where stdout cannot take it (a full device), one line and exit
    status 1."""
    status, out, err = arborparse_cli("parse", "--model", MODEL, treebank)
    assert status == 0 and err == ""
    assert out == run("parse", "--model", MODEL, treebank).output and out.count("\n\n") > 1
    with open("/dev/full", "w") as full:
        proc = subprocess.run([sys.executable, "-m", "arborparse", "parse", "--model", MODEL,
                               treebank], stdout=full, stderr=subprocess.PIPE, text=True,
                              timeout=300)
    one_line_error(proc.returncode, proc.stderr, "No space left on device")


@pytest.mark.parametrize("output, reason", [("nodir/x.conllu", "No such file or directory"),
                                            ("/proc/foo", "cannot write /proc/foo")])
def test_unwritable_parse_output(treebank, tmp_path, output, reason):
    status, _, err = arborparse_cli("parse", "--model", MODEL, treebank, "-o", output,
                                    cwd=tmp_path)
    one_line_error(status, err, reason)


def test_unwritable_model_is_found_before_training(treebank, tmp_path):
    status, _, err = arborparse_cli("train", "--train", treebank, "--model", "nodir/m.npz",
                                    "--epochs", "50", cwd=tmp_path)
    one_line_error(status, err, "cannot write nodir/m.npz: No such file or directory")
    assert "epoch" not in err


# 2: no silent overwrites -------------------------------------------------------------------

def test_an_input_is_never_the_output(treebank, tmp_path):
    before = treebank.read_bytes()
    r = run("train", "--train", treebank, "--model", treebank, "--force", "--quiet")
    assert r.exit_code == 1 and "is also an input of this command" in r.output
    r = run("parse", "--model", MODEL, treebank, "-o", treebank)
    assert r.exit_code == 1 and "is also an input" in r.output
    link = tmp_path / "link.conllu"
    link.symlink_to(treebank)
    r = run("projectivize", treebank, link)
    assert r.exit_code == 1 and "is also an input" in r.output
    assert treebank.read_bytes() == before


def test_models_and_other_files_are_not_swapped_by_surprise(treebank, tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes")
    r = run("train", "--train", treebank, "--model", notes, "--epochs", "1", "--quiet")
    assert r.exit_code == 1 and "is not an arborparse model file; use --force" in r.output
    assert notes.read_text() == "my notes"
    r = run("train", "--train", treebank, "--model", notes, "--epochs", "1", "--quiet", "--force",
            "--components", "parser")
    assert r.exit_code == 0 and arborparse.load(notes).parser.kind == "linear"
    model = tmp_path / "m.npz"
    model.write_bytes(MODEL.read_bytes())
    r = run("parse", "--model", MODEL, treebank, "-o", model)
    assert r.exit_code == 1 and "is an arborparse model file; use --force" in r.output
    assert model.read_bytes() == MODEL.read_bytes()
    # a model replaces a model without a word
    r = run("train", "--train", treebank, "--model", model, "--epochs", "1", "--quiet")
    assert r.exit_code == 0


# 3: interrupted training keeps its best epoch ------------------------------------------------

def test_interrupt_keeps_the_best_epoch(tmp_path, monkeypatch):
    data = arborparse.io.read_conllu(__import__("io").StringIO(separable_text()))
    calls = {"n": 0}
    original = OnlineTrainer._step

    def interrupt_in_epoch_3(self, *args):
        calls["n"] += 1
        if calls["n"] > 2 * len(data):
            raise KeyboardInterrupt
        return original(self, *args)

    monkeypatch.setattr(OnlineTrainer, "_step", interrupt_in_epoch_3)
    path = tmp_path / "m.npz"
    with pytest.raises(TrainingInterrupted, match=f"{path} holds epoch 2, the best so far") as e:
        OnlineTrainer("perceptron", epochs=5, hash_bits=12, progress=False).fit(
            data, save_best=path)  # without dev data, the last epoch is the best
    assert e.value.epoch == 2 and arborparse.load(path).kind == "linear"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.npz"]
    # a Ctrl-C still: a caller's `except Exception` (a loop over settings, say) lets it by
    assert isinstance(e.value, KeyboardInterrupt) and not isinstance(e.value, Exception)


def test_sigterm_keeps_the_best_epoch_and_no_temporary_file(tmp_path):
    big = tmp_path / "big.conllu"
    big.write_text(separable_text(3000))
    model = tmp_path / "m.npz"
    proc = subprocess.Popen([sys.executable, "-m", "arborparse", "train", "--train", str(big),
                             "--model", str(model), "--epochs", "1000", "--hash-bits", "12",
                             "--components", "parser"],
                            stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 240
    while not model.exists() and time.time() < deadline and proc.poll() is None:
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "Interrupted: training interrupted;" in err and "the best so far" in err
    assert arborparse.load(model).parser.kind == "linear"
    left = sorted(p.name for p in tmp_path.iterdir())  # the checkpoint, once one is written
    assert left in (["big.conllu", "m.npz"], ["big.conllu", "m.npz", "m.npz.checkpoint"])
    assert ("continue with resume (--resume)" in err) == ("m.npz.checkpoint" in left)


# 5, 6: what parse writes --------------------------------------------------------------------

def untagged(text: str) -> str:
    lines = []
    for line in text.splitlines():
        cols = line.split("\t")
        if len(cols) == 10:
            cols[2:6] = ["_"] * 4
        lines.append("\t".join(cols))
    return "\n".join(lines) + "\n"


def test_untagged_input_is_refused(treebank, tmp_path):
    bare = tmp_path / "bare.conllu"
    bare.write_text(untagged(treebank.read_text()))
    out = tmp_path / "out.conllu"
    status, _, err = arborparse_cli("parse", "--model", MODEL, bare, "-o", out)
    one_line_error(status, err, f"{bare}:1: the words have no tags (columns UPOS, XPOS, FEATS, "
                                "LEMMA empty): this model has no tagger")
    assert not out.exists()


def test_some_untagged_words_are_counted(treebank, tmp_path):
    text = treebank.read_text().replace("\tDET\tDET\t", "\t_\tDET\t")
    status, out, err = arborparse_cli("parse", "--model", MODEL, "-", input=text)
    assert status == 0 and out
    assert err.strip() == "Warning: 5 words of the input had no UPOS (_) and were parsed " \
                          "without it; expect lower accuracy"


def test_stale_columns_are_cleared_and_marginals_replaced(treebank, tmp_path):
    text = treebank.read_text().replace("\t_\t_\n", "\t0:root\t_\n")
    r = run("parse", "--model", MODEL, "--marginals", input=text)
    assert r.exit_code == 0 and "0:root" not in r.output
    again = run("parse", "--model", MODEL, "--marginals", input=r.output)
    assert again.exit_code == 0 and again.output == r.output
    assert all(line.split("\t")[9].count("HeadProb=") == 1
               for line in again.output.splitlines() if line and not line.startswith("#"))


# 10, 15: evaluate and compare ----------------------------------------------------------------

def with_head(text: str, word_line: int, head: str) -> str:
    lines = text.splitlines()
    cols = lines[word_line - 1].split("\t")
    cols[6] = head
    lines[word_line - 1] = "\t".join(cols)
    return "\n".join(lines) + "\n"


def test_evaluate_refuses_cycles_and_several_roots(treebank, tmp_path):
    text = treebank.read_text()  # line 1 a comment; word 1 "the" on line 2 heads to 2
    cyclic = tmp_path / "cyclic.conllu"
    cyclic.write_text(with_head(text, 3, "1"))  # dog -> the -> dog
    rooted = tmp_path / "rooted.conllu"
    rooted.write_text(with_head(text, 2, "0"))
    for gold, system, where, what in ((cyclic, treebank, f"{cyclic}:2", "cycle"),
                                      (treebank, cyclic, f"{cyclic}:2", "cycle"),
                                      (treebank, rooted, f"{rooted}:4", "2 words attach")):
        status, _, err = arborparse_cli("evaluate", gold, system)
        one_line_error(status, err, where, what)
    status, _, err = arborparse_cli("compare", cyclic, treebank, treebank)
    one_line_error(status, err, "cycle")


def test_a_training_tree_with_a_cycle_or_two_roots_is_refused_before_any_training(
        treebank, tmp_path, monkeypatch):
    """Found before the tokenizer and the tagger spend their epochs on the data, the
    message naming the option that allows several roots (and evaluate none)."""
    from arborparse.text.tokenizer import Tokenizer

    def never(*_):
        raise AssertionError("the tokenizer trained")
    monkeypatch.setattr(Tokenizer, "fit", never)
    text = separable_text(2)
    cyclic, rooted = tmp_path / "cyclic.conllu", tmp_path / "rooted.conllu"
    cyclic.write_text(text + with_head(treebank.read_text(), 3, "1"))
    rooted.write_text(text + with_head(treebank.read_text(), 2, "0"))
    lines = text.count("\n")
    for path, line, what in ((cyclic, lines + 2, "the heads form a cycle"),
                             (rooted, lines + 4, "2 words attach to the root")):
        r = run("train", "--train", path, "--model", tmp_path / "m.npz")
        assert r.exit_code == 1 and f"{path}:{line}: {what}" in r.output, r.output
        assert not (tmp_path / "m.npz").exists()
    assert "single-root trees need exactly one (--multi-root allows several)" in r.output
    status, _, err = arborparse_cli("evaluate", rooted, rooted)
    one_line_error(status, err, "single-root trees need exactly one (in CoNLL-U, as UD and "
                                "the official evaluation script have it)")


def test_a_tokenizer_is_not_trained_from_conllx(tmp_path):
    """CoNLL-X has no text and no SpaceAfter: a tokenizer trained on it split nothing off
    its words, silently; it is refused, with the components to give instead."""
    path = tmp_path / "train.conllx"
    path.write_text("".join(line + "\n" for line in separable_text(2).splitlines()
                            if not line.startswith("#")))
    r = run("train", "--train", path, "--model", tmp_path / "m.npz")
    assert r.exit_code == 1 and r.output == (
        "Error: train (train.conllx) is CoNLL-X, which records neither the text nor its "
        "spacing (SpaceAfter=No), so a tokenizer would learn nothing from it: train from "
        "CoNLL-U, or leave the tokenizer out: components (--components) "
        "tagger,lemmatizer,parser\n")
    assert not (tmp_path / "m.npz").exists()


def test_evaluate_mismatch_empty_and_no_nonprojective_arcs(treebank, tmp_path):
    other = tmp_path / "other.conllu"
    other.write_text(treebank.read_text().replace("\tdog\t", "\tcat\t", 1))
    status, _, err = arborparse_cli("evaluate", treebank, other)
    one_line_error(status, err, f"gold {treebank}:3 has 'dog", f"system {other}:3 has 'cat")
    empty = tmp_path / "empty.conllu"
    empty.write_text("")
    status, _, err = arborparse_cli("evaluate", empty, treebank)
    one_line_error(status, err, f"{empty}: no sentences")
    r = run("evaluate", treebank, treebank)
    assert r.exit_code == 0 and "nonproj_accuracy       n/a" in r.output
    r = run("evaluate", treebank, treebank, "--json")
    assert '"nonproj_accuracy": null' in r.output


# 13, 14, 15: friendlier input ----------------------------------------------------------------

def test_plain_text_is_not_conllu(tmp_path):
    status, _, err = arborparse_cli("parse", "--model", MODEL, input="The dog barks.\n")
    one_line_error(status, err, "<stdin>:1: does not look like CoNLL-U: the line has 1 column",
                   "--input-format text", "--input-format lines", "--input-format tokenized")


def test_conllu_read_as_text_is_refused_before_anything_is_written(treebank, tmp_path,
                                                                   english_pipeline):
    out = tmp_path / "out.conllu"
    for args in (["-o", out], []):
        status, stdout, err = arborparse_cli("parse", "--model", english_pipeline,
                                             "--input-format", "text", treebank, *args)
        one_line_error(status, err, 't.conllu:1: looks like CoNLL-U (a "# sent_id =" comment), '
                                    "not text: read it with --input-format auto (or conllu)")
        assert stdout == "" and not out.exists()
    mixed = tmp_path / "mixed.txt"  # prose, then a treebank pasted after a blank line
    mixed.write_text("The dog barks. It runs home.\n\n" + treebank.read_text())
    status, stdout, err = arborparse_cli("parse", "--model", english_pipeline,
                                         "--input-format", "text", mixed)
    one_line_error(status, err, "mixed.txt:3: looks like CoNLL-U")
    assert stdout == ""


def test_commands_that_read_only_treebanks_suggest_no_text_input(tmp_path):
    text = tmp_path / "prose.txt"
    text.write_text("The dog barks.\n")
    for command in (["render", text, "-o", tmp_path / "out.svg"], ["evaluate", text, text],
                    ["baseline", text], ["compare", text, text, text]):
        status, _, err = arborparse_cli(*command)
        one_line_error(status, err, "does not look like CoNLL-U", "10 tab-separated columns")
        assert "--input-format" not in err, (command, err)
    assert not (tmp_path / "out.svg").exists()


def test_input_in_another_encoding(treebank, tmp_path):
    latin = tmp_path / "latin.conllu"
    latin.write_bytes(treebank.read_text().replace("dog", "chién").encode("latin-1"))
    out = tmp_path / "out.conllu"
    status, _, err = arborparse_cli("parse", "--model", MODEL, latin, "-o", out)
    offset = latin.read_bytes().index("é".encode("latin-1"))
    one_line_error(status, err, f"latin.conllu:3: not valid UTF-8 at byte {offset} "
                                "(give --encoding NAME)")
    assert not out.exists()
    r = run("parse", "--model", MODEL, latin, "-o", out, "--encoding", "latin-1")
    assert r.exit_code == 0, r.output
    assert "\tchién\t" in out.read_text(encoding="utf-8")  # written as UTF-8
    r = run("parse", "--model", MODEL, latin, "--encoding", "klingon")
    assert r.exit_code == 2 and "unknown encoding 'klingon'" in r.output
    r = run("parse", "--model", MODEL, latin, "-o", tmp_path / "o", "--encoding", "latin-1",
            "--scheduler", "local")
    assert r.exit_code == 2 and "--encoding does not apply to --scheduler local" in r.output
    for command in (["train", "--train", latin, "--model", tmp_path / "m.npz"],
                    ["evaluate", latin, latin]):  # commands without --encoding say what to do
        status, _, err = arborparse_cli(*command)
        one_line_error(status, err, f"latin.conllu:3: not valid UTF-8 at byte {offset} (this "
                                    "command reads UTF-8: convert the file, e.g. iconv -f "
                                    "ITS-ENCODING -t UTF-8)")
    assert not (tmp_path / "m.npz").exists()


def test_a_file_in_utf16_is_named_so(treebank, tmp_path):
    """A UTF-16 file begins with its byte order mark: the error says what it looks like,
    and the hint names it (no latin-1 guess that would turn it into garbage)."""
    wide = tmp_path / "wide.conllu"
    wide.write_bytes(treebank.read_text().encode("utf-16"))
    status, _, err = arborparse_cli("parse", "--model", MODEL, wide, "-o", tmp_path / "o")
    one_line_error(status, err, "wide.conllu:1: not valid UTF-8 at byte 0; it begins as UTF-16 "
                                "does (give --encoding UTF-16)")
    status, _, err = arborparse_cli("evaluate", wide, wide)
    one_line_error(status, err, "wide.conllu:1: not valid UTF-8 at byte 0; it begins as UTF-16 "
                                "does (this command reads UTF-8: convert the file, e.g. iconv "
                                "-f UTF-16 -t UTF-8)")
    r = run("parse", "--model", MODEL, wide, "-o", tmp_path / "o", "--encoding", "UTF-16")
    assert r.exit_code == 0, r.output
    # without its byte order mark, every other byte of its first line is 0
    for order in ("LE", "BE"):
        bare = tmp_path / f"bare-{order}.conllu"
        bare.write_bytes(treebank.read_text().replace("\tdog\t", "\tdög\t").encode(
            f"utf-16-{order}"))
        status, _, err = arborparse_cli("parse", "--model", MODEL, bare, "-o", tmp_path / "o")
        one_line_error(status, err, f"; every other byte is 0, as in UTF-16-{order} (give "
                                    f"--encoding UTF-16-{order})")
        r = run("parse", "--model", MODEL, bare, "-o", tmp_path / "o", "--encoding",
                f"UTF-16-{order}")
        assert r.exit_code == 0, r.output


def test_a_bad_byte_or_line_late_in_a_file_is_refused_before_stdout_gets_a_sentence(
        tmp_path):
    late = tmp_path / "late.conllu"
    text = separable_text(20)
    late.write_bytes(text.encode() + text.replace("\t", "é\t", 1).encode("latin-1"))
    status, out, err = arborparse_cli("parse", "--model", MODEL, late)
    one_line_error(status, err, "late.conllu:", "not valid UTF-8 at byte "
                                f"{len(text.encode()) + text.index(chr(9))}")
    assert out == ""
    late.write_text(text + "1\tx\n")  # cut short: a line of two columns at the end
    status, out, err = arborparse_cli("parse", "--model", MODEL, late)
    one_line_error(status, err, f"late.conllu:{text.count(chr(10)) + 1}: expected 10 "
                                "tab-separated columns, found 2")
    assert out == ""


def test_a_pipe_named_as_input_is_read_once(tmp_path):
    text = tmp_path / "t.conllu"
    text.write_text(separable_text(2))
    proc = subprocess.run(f"{sys.executable} -m arborparse parse --model {MODEL} "
                          f"<(cat {text})", shell=True, capture_output=True, text=True,
                          timeout=300, executable="/bin/bash")
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    assert proc.stdout.count("# sent_id") == separable_text(2).count("# sent_id") > 0


def test_a_stream_with_a_bad_line_says_the_output_stops_there(tmp_path):
    text = separable_text(20)
    n = text.count("# sent_id")
    status, out, err = arborparse_cli("parse", "--model", MODEL, input=text + "1\tx\n\n")
    one_line_error(status, err, "<stdin>:", "expected 10 tab-separated columns, found 2; "
                   f"the {n} sentences before it were parsed and written out: the output "
                   "stops there")
    assert out.count("# sent_id") == n


def test_an_empty_input_is_said_to_be_empty(tmp_path):
    empty = tmp_path / "empty.conllu"
    empty.write_text("\n\n")
    status, out, err = arborparse_cli("parse", "--model", MODEL, empty)
    assert status == 0 and out == ""
    assert err == f"Warning: {empty} holds no sentences (as --input-format auto reads it): " \
                  "the output is empty\n"
    status, out, err = arborparse_cli("baseline", empty)
    assert status == 0 and out == "" and err == f"Warning: {empty} holds no sentences (as " \
                                                "--format auto reads it): the output is empty\n"
    parsed = tmp_path / "parsed.conllu"
    status, _, err = arborparse_cli("parse", "--model", MODEL, empty, "-o", parsed,
                                    "--scheduler", "local", "--workers", "1")
    assert status == 0 and parsed.read_text() == "" and "holds no sentences" in err, err


def test_a_directory_as_input(tmp_path):
    status, _, err = arborparse_cli("parse", "--model", MODEL, tmp_path)
    one_line_error(status, err, f"{tmp_path} is a folder: parse reads one file (or - for "
                   "stdin); --scheduler local parses a folder's files into the folder -o names")
    status, _, err = arborparse_cli("evaluate", tmp_path, tmp_path)
    one_line_error(status, err, "Is a directory")


def test_a_closed_pipe_is_not_an_error(tmp_path):
    big = tmp_path / "big.conllu"
    big.write_text(separable_text(300))
    proc = subprocess.run(f"{sys.executable} -m arborparse parse --model {MODEL} {big} | head -1",
                          shell=True, capture_output=True, text=True, timeout=300,
                          executable="/bin/bash")
    assert proc.stdout == "# sent_id = 0-0\n" and proc.stderr == ""


@pytest.mark.parametrize("args, flag", [(["--trainer", "perceptron", "-k", "3"], "--kbest"),
                                        (["--trainer", "perceptron", "-C", "1"], "-C"),
                                        (["--trainer", "mira", "--learning-rate", "1"],
                                         "--learning-rate"),
                                        (["--trainer", "eg", "--exact-features"],
                                         "--exact-features")])
def test_options_that_do_not_apply_to_the_trainer(treebank, tmp_path, args, flag):
    r = run("train", "--train", treebank, "--model", tmp_path / "m.npz", *args)
    assert r.exit_code == 2 and f"{flag} does not apply to --trainer" in r.output


def test_every_option_has_help():
    for name, command in cli.commands.items():
        for param in command.params:
            if isinstance(param, __import__("click").Option):
                assert param.help, f"{name} {param.opts} has no help"


def _started(*args) -> subprocess.Popen:
    """The command running in a process of its own, its stderr read through a pipe."""
    return subprocess.Popen([sys.executable, "-m", "arborparse", *map(str, args)],
                            stderr=subprocess.PIPE, text=True,
                            # a shell's background job inherits SIGINT ignored: undo that
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


def _interrupted(proc: subprocess.Popen) -> tuple[int, str]:
    """Ctrl-C half a second from now: (exit status, the rest of stderr)."""
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    return proc.returncode, err


def _long_sentence() -> str:
    """A 1,000-word sentence in CoNLL-U, each word under the one before it."""
    words = "".join(separable_text(200).split("\n\n"))  # one block of many words
    rows = [line.split("\t") for line in words.splitlines() if "\t" in line][:1000]
    return "".join("\t".join([str(i), *cols[1:6], str(i - 1), "dep", "_", "_"]) + "\n"
                   for i, cols in enumerate(rows, 1)) + "\n"


def test_ctrl_c_stops_a_long_mbr_parse(tmp_path):
    """Two 1,000-word sentences take tens of seconds to parse by MBR; Ctrl-C once parsing has
    begun stops the command while compiled code runs, with nothing written."""
    sentence = _long_sentence()
    long = tmp_path / "long.conllu"
    long.write_text(sentence * 2)
    out = tmp_path / "out.conllu"
    proc = _started("parse", "--model", MODEL, long, "--decode", "mbr", "-o", out)
    deadline = time.time() + 120  # parsing has begun when the output's temporary file exists
    while not list(tmp_path.glob(".out.conllu.*.tmp")) and time.time() < deadline \
            and proc.poll() is None:
        time.sleep(0.05)
    status, err = _interrupted(proc)
    assert status == 130, err
    assert err == f"Interrupted: parsing stopped; {out} was not written\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["long.conllu"]


def test_ctrl_c_stops_combine_and_says_nothing_was_written(tmp_path):
    """`combine` says it parses dev only once its inputs and output are checked (a refusal
    comes alone); Ctrl-C while it parses dev (1,000-word sentences, whose marginals take
    minutes of compiled code) stops it at once with exit status 130, says the output was
    not written, and leaves no file behind."""
    sentence = _long_sentence()
    dev = tmp_path / "dev.conllu"
    dev.write_text(sentence * 8)
    status, _, err = arborparse_cli("combine", MODEL, MODEL, "--dev", dev, "-o", dev)
    one_line_error(status, err, f"{dev} is also an input")
    out = tmp_path / "both.npz"
    proc = _started("combine", MODEL, MODEL, "--dev", dev, "-o", out)
    assert proc.stderr.readline() == f"both parsers parse {dev}, then each weight is scored " \
        "on it\n"
    status, err = _interrupted(proc)
    assert status == 130, err
    assert err == f"Interrupted: combining stopped; {out} was not written\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dev.conllu"]


def test_an_interrupted_parse_to_stdout_says_what_it_wrote_out():
    from arborparse.cli import _written_before

    assert _written_before(0) == "nothing was written out"
    assert _written_before(1) == "the sentence before it was parsed and written out"
    assert _written_before(3) == "the 3 sentences before it were parsed and written out"


def test_an_interrupt_without_a_file_says_that_nothing_was_saved(monkeypatch):
    """Trained in memory (no path): Ctrl-C in epoch 2 names the best epoch, saved nowhere,
    and how to keep it; the trainer's parser_ holds it."""
    from arborparse.linear.online import OnlineTrainer
    from arborparse.training import Loop, TrainingInterrupted

    end = Loop.end

    def interrupted_after_the_first(self, epoch, *args, **kwargs):
        if epoch > 1:
            raise KeyboardInterrupt
        return end(self, epoch, *args, **kwargs)

    monkeypatch.setattr(Loop, "end", interrupted_after_the_first)
    data = arborparse.io.read_conllu(__import__("io").StringIO(separable_text(1)))
    trainer = OnlineTrainer("perceptron", epochs=3, hash_bits=12, progress=False)
    with pytest.raises(TrainingInterrupted, match="the best epoch so far was 1, saved "
                       "nowhere: give arborparse.train a path"):
        trainer.fit(data, data)
    assert trainer.parser_ is not None


def test_an_interrupt_while_saving_names_the_epoch_the_file_holds(tmp_path, monkeypatch):
    """Ctrl-C while epoch 2's model is written: the file (written atomically) still holds
    epoch 1, and so says the message."""
    from arborparse.linear.online import OnlineTrainer
    from arborparse.linear.parser import LinearParser
    from arborparse.training import TrainingInterrupted

    save, saved = LinearParser.save, []

    def interrupted_at_the_second(self, path, force=False):
        if saved:
            raise KeyboardInterrupt
        save(self, path, force)
        saved.append(path)

    monkeypatch.setattr(LinearParser, "save", interrupted_at_the_second)
    path = tmp_path / "m.npz"
    with pytest.raises(TrainingInterrupted, match=f"{path} holds epoch 1, the best so far"):
        OnlineTrainer("perceptron", epochs=3, hash_bits=12, progress=False).fit(
            arborparse.io.read_conllu(__import__("io").StringIO(separable_text(1))),
            save_best=path)
    assert arborparse.load(path).kind == "linear"


def test_info_refuses_a_model_file_damaged_past_its_header(tmp_path):
    """`info` reads the header, and checks the rest: a flipped byte in the weights is named
    as `parse` would meet it, not described as a sound model."""
    import zipfile

    damaged = tmp_path / "damaged.npz"
    data = bytearray(MODEL.read_bytes())
    with zipfile.ZipFile(MODEL) as archive:
        member = max(archive.infolist(), key=lambda m: m.compress_size)
    data[member.header_offset + 30 + len(member.filename) + member.compress_size // 2] ^= 1
    damaged.write_bytes(bytes(data))
    status, out, err = arborparse_cli("info", damaged)
    one_line_error(status, err, f"{damaged}: a damaged model file (")
    assert out == ""
    status, _, err = arborparse_cli("parse", "--model", damaged, "-")
    one_line_error(status, err, f"{damaged}: a damaged model file (")
    assert arborparse_cli("info", MODEL)[0] == 0


@pytest.mark.parametrize("change", ["an array left out", "a newer version"])
def test_info_refuses_what_parse_refuses(tmp_path, change):
    """A model file whose checksums hold but which parse refuses (rewritten without one of
    its arrays, or naming a version this arborparse does not read) is refused by `info`
    with parse's line, nothing shown."""
    import json
    import zipfile

    changed = tmp_path / "changed.npz"
    with zipfile.ZipFile(MODEL) as archive:
        kept = {name: archive.read(name) for name in archive.namelist()}
    if change == "an array left out":
        del kept["keys.npy"]
    else:
        with np.load(MODEL) as archive:
            meta = json.loads(archive["header"].tobytes())
        saved = io.BytesIO()
        np.save(saved, np.frombuffer(json.dumps({**meta, "version": 99}).encode(),
                                     dtype=np.uint8))
        kept["header.npy"] = saved.getvalue()
    with zipfile.ZipFile(changed, "w") as archive:
        for name, data in kept.items():
            archive.writestr(name, data)
    _, _, refused = arborparse_cli("parse", "--model", changed, "-")
    status, out, err = arborparse_cli("info", changed)
    assert out == "" and err == refused
    one_line_error(status, err, f"{changed}: ")
