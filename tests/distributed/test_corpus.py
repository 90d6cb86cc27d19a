"""Corpora parsed on a real Dask cluster of processes: the output equals a serial run's byte
for byte (raw text, CoNLL-U, compressed files, several partitions), each worker loads the
model once, a worker killed mid-job loses and duplicates nothing, an interrupted job
resumes, a malformed file is reported without stopping the others."""

import gzip
import io
import os
import signal
import subprocess
import sys
import threading
import time

import pytest
from click.testing import CliRunner

import arborparse
from arborparse.cli import cli
from arborparse.distributed import _ctrl_c_ignored, corpus
from arborparse.distributed.corpus import Parts, parse_bag, parse_corpus
from arborparse.io import iter_conllu, read_conllu, write_conllu

PARTITION = 2000  # bytes: many partitions of a small corpus


@pytest.fixture(scope="module")
def model(english_pipeline):
    return english_pipeline


@pytest.fixture(scope="module")
def texts(ud, tmp_path_factory):
    """Raw text (paragraphs of five sentences) and CoNLL-U, from EWT test."""
    test = ud / "UD_English-EWT" / "en_ewt-ud-test.conllu"
    sentences = read_conllu(test)[:400]
    lines = [s.comments[[c.startswith("# text = ") for c in s.comments].index(True)][9:]
             for s in sentences]
    folder = tmp_path_factory.mktemp("corpus")
    raw = "".join(line + "\n" + ("\n" if i % 5 == 4 else "") for i, line in enumerate(lines))
    (folder / "a.txt").write_text(raw[:len(raw) // 2].rsplit("\n\n", 1)[0] + "\n")
    with gzip.open(folder / "b.txt.gz", "wt") as handle:
        handle.write(raw)
    write_conllu(sentences[:150], folder / "c.conllu")
    return folder


def serial(model, path, fmt) -> bytes:
    parser = arborparse.load(model)
    out = io.StringIO()
    if fmt == "text":
        lines = (line.decode() for line in corpus.open_lines(path)[0])
        write_conllu(parser.iter_parse_text(lines), out)
    else:
        write_conllu(parser.iter_parse(iter_conllu(path, fmt)), out)
    return out.getvalue().encode()


def test_the_output_is_the_serial_output(model, texts, client, tmp_path):
    out = tmp_path / "out"
    errors = parse_corpus(str(texts / "*.txt*"), model, out, client, "text", PARTITION)
    assert errors == []
    assert sorted(os.listdir(out)) == ["a.conllu", "b.conllu"]
    for name, source in (("a", "a.txt"), ("b", "b.txt.gz")):
        assert (out / f"{name}.conllu").read_bytes() == serial(model, texts / source, "text")
    assert not (tmp_path / "out.parts").exists()
    one = tmp_path / "c.conllu"
    assert parse_corpus(texts / "c.conllu", model, one, client, partition_bytes=PARTITION) == []
    assert one.read_bytes() == serial(model, texts / "c.conllu", "auto")
    loads = client.run(lambda: dict(corpus.LOADS))
    assert all(list(counts.values()) == [1] for counts in loads.values())  # once per worker


def test_a_bag_of_parsed_sentences(model, texts, client):
    bag = parse_bag([texts / "a.txt", texts / "b.txt.gz"], model, "text")
    assert bag.npartitions == 2
    assert "".join(bag.compute()).encode() == \
        serial(model, texts / "a.txt", "text") + serial(model, texts / "b.txt.gz", "text")


def test_a_worker_killed_mid_job_loses_and_duplicates_nothing(model, texts, client, tmp_path):
    out, parts = tmp_path / "b.conllu", tmp_path / "b.conllu.parts"
    pids = list(client.run(os.getpid).values())
    killed = []

    def kill_when_started():
        while len(list(parts.glob("*.conllu"))) < 3:
            time.sleep(0.01)
        os.kill(pids[0], signal.SIGKILL)
        killed.append(True)

    threading.Thread(target=kill_when_started, daemon=True).start()
    assert parse_corpus(texts / "b.txt.gz", model, out, client, "text", 500) == []
    assert killed
    assert out.read_bytes() == serial(model, texts / "b.txt.gz", "text")
    client.wait_for_workers(2, timeout=60)


def test_an_interrupted_job_resumes_where_it_stopped(model, texts, client, tmp_path,
                                                      monkeypatch):
    out = tmp_path / "b.conllu"
    write, written = Parts.write, []

    def interrupted(self, *args):
        write(self, *args)
        written.append(args[:2])
        if len(written) == 4:
            raise KeyboardInterrupt

    monkeypatch.setattr(Parts, "write", interrupted)
    with pytest.raises(KeyboardInterrupt):
        parse_corpus(texts / "b.txt.gz", model, out, client, "text", PARTITION)
    assert not out.exists() and len(list((tmp_path / "b.conllu.parts").glob("*.conllu"))) == 4
    with pytest.raises(arborparse.ArborparseError, match="continue it with --resume"):
        parse_corpus(texts / "b.txt.gz", model, out, client, "text", PARTITION)
    with pytest.raises(arborparse.ArborparseError, match="other inputs, model or options"):
        parse_corpus(texts / "b.txt.gz", model, out, client, "text", PARTITION + 1,
                     resume=True)
    first = list(written)
    assert parse_corpus(texts / "b.txt.gz", model, out, client, "text", PARTITION,
                        resume=True) == []
    assert not set(first) & set(written[4:])  # the finished partitions were not parsed again
    assert out.read_bytes() == serial(model, texts / "b.txt.gz", "text")


def test_a_malformed_file_is_reported_and_the_others_go_on(model, texts, client, tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "good.conllu").write_bytes((texts / "c.conllu").read_bytes())
    text = (texts / "c.conllu").read_text().splitlines(keepends=True)
    text[60] = "1\tbroken\n"
    (folder / "bad.conllu").write_text("".join(text))
    data = (texts / "c.conllu").read_bytes()
    at = data.index(b"\tthe\t", 3 * PARTITION) + 3  # not UTF-8 in the fourth partition
    (folder / "latin.conllu").write_bytes(data[:at] + b"\xe9" + data[at + 1:])
    errors = parse_corpus(folder, model, tmp_path / "out", client, partition_bytes=PARTITION)
    assert len(errors) == 2 and errors[0].startswith(f"{folder / 'bad.conllu'}:61: ")
    line = data[:at].count(b"\n") + 1
    assert errors[1] == f"{folder / 'latin.conllu'}:{line}: not valid UTF-8 at byte {at}"
    assert sorted(os.listdir(tmp_path / "out")) == ["good.conllu"]


def test_the_workers_warnings_are_said_once_a_file_on_the_client(model, client, tmp_path):
    """A warning a worker's parse gives (letters the model never read) comes back with the
    partition and is said once for its file, as a warning of the caller's (a worker printed
    it in Python's own format, once per process)."""
    greek = tmp_path / "greek.txt"
    greek.write_text("".join(f"Καλημέρα κόσμε {i}. Αυτό είναι ένα κείμενο.\n\n"
                             for i in range(200)))
    with pytest.warns(UserWarning) as caught:
        assert parse_corpus(greek, model, tmp_path / "out", client, "text", PARTITION) == []
    said = [str(w.message) for w in caught]
    assert len(said) == 1 and said[0].startswith(f"{greek}: ") and "never occur" in said[0]
    assert said[0].endswith("(the figures of one of the 8 parts of the file that gave this)")
    assert caught[0].filename == __file__ and caught[0].category is UserWarning
    with pytest.warns(UserWarning, match="never occur"):  # as the serial parse says it
        assert (tmp_path / "out").read_bytes() == serial(model, greek, "text")


def test_warnings_are_gathered_for_each_thread_alone():
    """A worker running several tasks at once in threads: each task gathers its own
    warnings, and none is lost or given outside the task."""
    from arborparse.errors import gathered_warnings, warn

    both = threading.Barrier(2)
    out = {}

    def task(name):
        with gathered_warnings() as gathered:
            both.wait()
            warn(f"from {name}")
            both.wait()
        out[name] = [message for _, message, _ in gathered]
    threads = [threading.Thread(target=task, args=(name,)) for name in "ab"]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert out == {"a": ["from a"], "b": ["from b"]}
    with pytest.warns(UserWarning, match="^outside$"):
        warn("outside")


def test_the_command_line(model, texts, tmp_path, monkeypatch):
    run = lambda *args: CliRunner().invoke(cli, list(map(str, args)))  # noqa: E731
    out = tmp_path / "out"
    with monkeypatch.context() as patched:  # only the workers load the model
        patched.setattr("arborparse.pipeline.load", lambda path: pytest.fail("loaded here"))
        r = run("parse", "--model", model, "--scheduler", "local", "--workers", 1,
                "--input-format", "text", "--partition-kb", 1, texts / "a.txt", "-o", out)
        assert r.exit_code == 0, r.output
        r = run("parse", "--model", model, "--scheduler", "local", "--beam", 3,
                texts / "a.txt", "-o", tmp_path / "refused")
        assert r.exit_code == 2 and "--beam 3 does not apply to this linear model" in r.output
    assert out.read_bytes() == serial(model, texts / "a.txt", "text")
    r = run("parse", "--model", model, "--scheduler", "local", texts / "a.txt")
    assert r.exit_code == 2 and "not stdin or stdout" in r.output
    r = run("parse", "--model", model, "--resume", texts / "a.txt")
    assert r.exit_code == 2 and "--resume does not apply to a serial parse" in r.output


def test_a_local_clusters_processes_leave_ctrl_c_to_the_command():
    """A terminal's Ctrl-C reaches every process of the command: the processes a local
    cluster starts ignore it (each would print a traceback), and the command has its
    Ctrl-C back once they have started."""
    asked = "import signal; print(signal.getsignal(signal.SIGINT) is signal.SIG_IGN)"
    before = signal.signal(signal.SIGINT, signal.default_int_handler)  # as a command has it
    try:
        with _ctrl_c_ignored():
            started = subprocess.run([sys.executable, "-c", asked], capture_output=True,
                                     text=True, check=True).stdout
        after = signal.getsignal(signal.SIGINT)
    finally:
        signal.signal(signal.SIGINT, before)
    assert started == "True\n" and after is signal.default_int_handler
