import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from arborparse.cli import cli
from arborparse.io import read_conllu


def run(*args, input=None):
    return CliRunner().invoke(cli, list(map(str, args)), input=input)


@pytest.fixture
def ewt_test(ud):
    return ud / "UD_English-EWT" / "en_ewt-ud-test.conllu"


def test_baseline_then_evaluate_json(ewt_test, tmp_path):
    out = tmp_path / "left.conllu"
    assert run("baseline", ewt_test, "-o", out).exit_code == 0
    r = run("evaluate", ewt_test, out, "--json")
    assert r.exit_code == 0, r.output
    scores = json.loads(r.output)
    for key in ("UAS", "LAS", "UAS_nopunct", "LAS_nopunct", "LA", "UCM", "LCM",
                "root_accuracy", "words", "sentences"):
        assert key in scores
    assert scores["words"] == 25094 and 0 < scores["UAS"] < 100
    right = tmp_path / "right.conllu"
    assert run("baseline", "--kind", "right", ewt_test, "-o", right).exit_code == 0
    (first, *_), (parsed, *_) = read_conllu(ewt_test), read_conllu(right)
    n = len(first)
    assert parsed.heads[1:].tolist() == [*range(2, n + 1), 0]
    assert parsed.deprels == ["dep"] * (n - 1) + ["root"] and parsed.forms == first.forms


def test_evaluate_table_and_compare(ewt_test, tmp_path):
    r = run("evaluate", ewt_test, ewt_test)
    assert r.exit_code == 0 and "UAS" in r.output and "100.00" in r.output
    r = run("compare", ewt_test, ewt_test, ewt_test, "--samples", 200)
    assert r.exit_code == 0 and "sign test p = 1" in r.output
    other = tmp_path / "other.conllu"  # another tokenization, as raw text's may be
    other.write_text("1\tA\ta\tX\tX\t_\t0\troot\t_\t_\n\n")
    r = run("compare", other, other, ewt_test)
    assert r.exit_code == 1 and "compare pairs the trees word by word, so both systems need " \
        "the gold file's words (a system parsed from raw text has its own: evaluate aligns " \
        "those)" in r.output, r.output


def test_user_errors_exit_1_with_one_line(tmp_path):
    bad = tmp_path / "bad.conllu"
    bad.write_text("1\tA\ta\tN\tNN\t_\t0\troot\t_\n\n")
    proc = subprocess.run([sys.executable, "-m", "arborparse", "evaluate", bad, bad],
                          capture_output=True, text=True)
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines() == [
        f"Error: {bad}:1: expected 10 tab-separated columns, found 9"]
    assert "Traceback" not in proc.stderr


def test_usage_errors_exit_2():
    assert run("evaluate").exit_code == 2
    assert run("no-such-command").exit_code == 2
    assert run("compare", "a", "b", "c", "--metric", "XYZ").exit_code == 2


def test_help_on_every_command():
    for command in ([], ["evaluate"], ["compare"], ["baseline"]):
        r = run(*command, "--help")
        assert r.exit_code == 0 and "Usage" in r.output


def test_train_help_says_whose_epochs_the_options_set():
    from arborparse.trainer import FRONT_EPOCHS

    text = " ".join(run("train", "--help").output.split())
    assert f"(--epochs too) are the parser's; the tokenizer, the tagger and the lemmatizer " \
        f"train {FRONT_EPOCHS} epochs each" in text


def test_projectivize_command(tmp_path):
    text = ("1\ta\t_\tX\t_\t_\t3\tx\t_\t_\n2\tb\t_\tX\t_\t_\t0\troot\t_\t_\n"
            "3\tc\t_\tX\t_\t_\t2\ty\t_\t_\n4\td\t_\tX\t_\t_\t1\tz\t_\t_\n\n")
    src = tmp_path / "in.conllu"
    src.write_text(text)
    out = tmp_path / "out.conllu"
    r = run("projectivize", src, out)
    assert r.exit_code == 0
    assert "1 of 1 sentence projectivized" in r.output
    from arborparse.io import read_conllu
    from arborparse.trees.structure import is_projective
    (s,) = read_conllu(out)
    assert is_projective(s.heads) and s.deprels == ["x", "root", "y", "z"]


def test_parse_lines_one_sentence_per_line(english_pipeline, tmp_path):
    text = tmp_path / "lines.txt"
    text.write_text("The dog barks. It runs home.\n\n\nGood night . Sleep well\n")
    r = run("parse", "--model", english_pipeline, "--input-format", "lines", text)
    assert r.exit_code == 0, r.output
    comments = [line for line in r.output.splitlines() if line.startswith("# text")]
    assert comments == ["# text = The dog barks. It runs home.",
                        "# text = Good night . Sleep well"]
    r = run("parse", "--model", english_pipeline, "--input-format", "text", text)
    assert r.output.count("# text") > 2  # as raw text, the lines are split into sentences


def test_parse_help_names_the_families_that_take_each_option():
    text = " ".join(run("parse", "--help").output.split())  # click's wrapping undone
    assert "First-order" not in text
    for flag, families in (("--decoder", "linear, neural and ensemble models:"),
                           ("--decode-as", "linear and neural models:"),
                           ("--marginals", "linear, neural and ensemble models:"),
                           ("--retag", "linear, isbn, neural and ensemble models with a "
                                       "tagger or lemmatizer:"),
                           ("--keep-tags", "linear, isbn, neural and ensemble models with a "
                                           "tagger or lemmatizer:"),
                           ("--beam", "isbn models:"), ("--branching", "isbn models:"),
                           ("--threads", "linear models:")):
        assert f"{flag} " in text and f"For {families}" in text.split(f"{flag} ", 1)[1][:80]


def test_each_family_offers_what_its_table_says_it_parses():
    from arborparse import registry
    from arborparse.pipeline import load

    models = Path(__file__).parent / "data" / "models"
    for name in ("perceptron-v2", "latent-v2", "isbn-v2"):
        parser = load(models / f"{name}.npz")  # a parser alone (a file of an earlier version)
        offered = registry.options_table(parser.kind).parses
        assert set(parser.capabilities.parse_options()) <= set(offered.parse_options())


def test_numbers_that_are_not_finite_or_endless_are_refused():
    """click's ranges let NaN through (every comparison with it is false)."""
    for args in (["render", "--threshold", "nan", "x.conllu"],
                 ["serve", "--model", "m.npz", "--timeout", "nan"],
                 ["serve", "--model", "m.npz", "--timeout", "inf"]):
        r = CliRunner().invoke(cli, args)
        assert r.exit_code == 2 and "is not a finite number" in r.output, args
    r = CliRunner().invoke(cli, ["compare", "g.conllu", "a.conllu", "b.conllu", "--samples",
                                 "99999999999999999999"])
    assert r.exit_code == 2 and "--samples" in r.output  # not a run without end


def test_a_sentence_too_long_in_a_stream_says_what_was_written(english_pipeline, tmp_path,
                                                               monkeypatch):
    """The sentence a parse refuses midway through stdout is named with its file, and the
    sentences before it are said to be out, as for a bad line."""
    import arborparse.memory

    text = tmp_path / "lines.txt"
    text.write_text("The dog barks .\nIt runs home .\n" + "word " * 3000 + "\n")
    monkeypatch.setattr(arborparse.memory, "available_memory", lambda: 2 ** 20)
    r = run("parse", "--model", english_pipeline, "--input-format", "lines", text)
    assert r.exit_code == 1 and r.stdout.count("# text") == 2
    error = r.stderr.strip()
    assert error.startswith(f"Error: {text}, sentence 3 (word word word word word ...): a "
                            "sentence of 3000 words is too long") and \
        error.endswith("; the 2 sentences before it were parsed and written out: the "
                       "output stops there"), error
    r = run("parse", "--model", english_pipeline, "--input-format", "lines", text, "-o",
            tmp_path / "out.conllu")  # nothing written: nothing said of it
    assert r.exit_code == 1 and r.output.startswith(f"Error: {text}, sentence 3 (word") and \
        "written out" not in r.output and not (tmp_path / "out.conllu").exists()
