"""Corpora parsed on a Dask cluster (``dask.distributed``).

The client reads each input file (plain, ``.gz`` or ``.xz``) and cuts it, at blank lines
only, into partitions of about `partition_bytes`: whole sentences of CoNLL input, whole
paragraphs of raw or tokenized text. A worker parses a partition from its bytes (decoding,
validation and errors with the file's own line numbers happen there) with the model it
loaded once: the model file's bytes are sent to every worker once and loaded on first use.
Each finished partition is written atomically to ``OUTPUT.parts/``; when a file's
partitions are all there, its output is put together in input order (``# sent_id`` of text
input renumbered as one serial run numbers it) and written atomically, so the output is
byte-identical to `arborparse parse` on the file. A worker that dies loses nothing: the
scheduler runs its partitions again. An interrupted job restarted with ``resume=True``
skips the partitions in ``OUTPUT.parts/``. A malformed file is reported with its file and
line and gets no output; the other files go on.
"""

from __future__ import annotations

import glob
import hashlib
import io
import json
import os
import re
import shutil
import sys
import tempfile
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from tqdm import tqdm

from arborparse.errors import (ArborparseError, EncodingError, TreebankFormatError,
                               gathered_warnings, warn)
from arborparse.io.atomic import atomic_open
from arborparse.io import conllu, plain
from arborparse.io.conllu import decoded, open_lines, sniff, uncompressed

FORMATS = conllu.FORMATS + plain.FORMATS
PARTITION_BYTES = 256 << 10  # about 3,000 sentences of raw text: the last round is short
SENT_ID = re.compile(r"^# sent_id = (\d+)$", re.M)


# ---------------------------------------------------------------------- on the workers

_loaded: dict[str, object] = {}  # model digest -> parser, one per worker process
LOADS: Counter = Counter()  # model digest -> times loaded in this process


def _parser(digest: str, model: bytes):
    """The model of `digest`, loaded from its bytes the first time this process needs it."""
    if digest not in _loaded:
        from arborparse.pipeline import load

        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "model.npz"
            path.write_bytes(model)
            _loaded[digest] = load(path)
            LOADS[digest] += 1
    return _loaded[digest]


def parse_partition(digest: str, model: bytes, blob: bytes, name: str, first_line: int,
                    first_byte: int, fmt: str, options: dict):
    """The parsed sentences of one partition (its bytes `blob`, from line `first_line` and
    byte `first_byte` of file `name`) as (CoNLL text, sentence count, warnings), or (None,
    the error's one line, warnings): the warnings arborparse gave while parsing it
    (`arborparse.errors.gathered_warnings`), for the client to give as its own (a worker
    would print them in Python's format, once per process)."""
    with gathered_warnings() as gathered:
        text, count = _parsed(digest, model, blob, name, first_line, first_byte, fmt, options)
    return text, count, gathered


def _parsed(digest: str, model: bytes, blob: bytes, name: str, first_line: int,
            first_byte: int, fmt: str, options: dict) -> tuple[str | None, int | str]:
    """`parse_partition`'s text and count, or None and the error's line."""
    from arborparse.pipeline import iter_parse_source

    try:
        lines = io.BytesIO(blob)
        lines.name = name
        parsed = iter_parse_source(_parser(digest, model), lines, fmt, **options)
        out, count = io.StringIO(), 0
        for sentence in parsed:
            out.write(sentence.to_text())
            count += 1
        return out.getvalue(), count
    except EncodingError as err:
        return None, str(EncodingError(name, err.line + first_line - 1,
                                       err.offset + first_byte, err.encoding,
                                       err.looks_like if first_line == 1 else None))
    except TreebankFormatError as err:
        line = None if err.line is None else err.line + first_line - 1
        return None, str(TreebankFormatError(name, line, err.reason))
    except ArborparseError as err:
        return None, f"{name}: {err}"


class Warnings:
    """The workers' warnings, given once for each input file and each place that gives them
    (the first partition's; where the partitions' differ, as a count of words without tags
    does, the message says it gives one partition's figures)."""

    def __init__(self):
        self.said: dict[tuple[str, type, str], list[str]] = {}

    def add(self, name: str, gathered: list[tuple[type[Warning], str, str]]) -> None:
        for category, message, where in gathered:
            self.said.setdefault((name, category, where), []).append(message)

    def give(self) -> None:
        for (name, category, _), messages in self.said.items():
            parts = len(messages)
            one = "" if len(set(messages)) == 1 else \
                f" (the figures of one of the {parts} parts of the file that gave this)"
            warn(f"{name}: {messages[0]}{one}", category)
        self.said.clear()


# ---------------------------------------------------------------------- on the client

def expand(inputs) -> list[tuple[Path, str]]:
    """(file, its name relative to the folder or the glob's fixed part) of every input: a
    file, a folder (its files, recursively, hidden ones left out) or a glob pattern."""
    out = []
    for spec in [inputs] if isinstance(inputs, (str, os.PathLike)) else inputs:
        spec = str(spec)
        if os.path.isdir(spec):
            files = [Path(f) for f in sorted(glob.glob(os.path.join(spec, "**", "*"),
                                                       recursive=True)) if os.path.isfile(f)]
            out += [(f, str(f.relative_to(spec))) for f in files]
        elif glob.has_magic(spec):
            fixed = Path(spec.split("*")[0].split("?")[0].split("[")[0])
            base = fixed if spec.endswith(os.sep) or fixed.is_dir() else fixed.parent
            files = [Path(f) for f in sorted(glob.glob(spec, recursive=True))
                     if os.path.isfile(f)]
            if not files:
                raise ArborparseError(f"{spec}: no file matches")
            out += [(f, str(f.relative_to(base))) for f in files]
        elif os.path.isfile(spec):
            out.append((Path(spec), Path(spec).name))
        else:
            raise ArborparseError(f"{spec}: no such file or folder")
    return out


def output_name(relative: str) -> str:
    """The output's name for an input's relative name: compression dropped, ``.conllu``
    (``.conllx`` kept) for the last suffix."""
    path = uncompressed(relative)
    return str(path if path.suffix.lower() in (".conllu", ".conllx")
               else path.with_suffix(".conllu"))


@dataclass
class Job:
    """One input file: where it goes, its format and what is known of its partitions."""

    target: Path
    fmt: str
    partitions: int | None = None  # known once the file is read to its end
    counts: dict[int, int] = field(default_factory=dict)  # partition -> sentences, done
    error: tuple[int, str] | None = None  # the first failing partition and its error


def partitions(path: Path, size: int) -> Iterator[tuple[int, int, bytes]]:
    """(first line number, first byte, bytes) of the file's partitions (decompressed): cut
    at the first blank line after `size` bytes."""
    lines, _ = open_lines(path)
    chunk, first, start, lineno, used = [], 1, 0, 0, 0
    for lineno, line in enumerate(lines, 1):
        if used >= size and not line.strip():
            yield first, start, b"".join(chunk)
            chunk, first, start, used = [], lineno, start + used, 0
        chunk.append(line)
        used += len(line)
    if chunk or first == 1:
        yield first, start, b"".join(chunk)


def resolve_format(path: Path, fmt: str) -> str:
    """The format of a file: `fmt`, or for ``auto`` CoNLL-U or CoNLL-X by the suffix or
    the first lines (as `iter_conllu` decides)."""
    if fmt != "auto":
        return fmt
    lines, name = open_lines(path)
    head = []
    for _, text in decoded(lines, name):
        if not text.strip():
            if head:
                break
            continue
        head.append(text.rstrip("\r\n"))
    return sniff(name, head)


def _renumbered(text: str, offset: int, first: bool, fmt: str) -> str:
    """A partition's output as a serial run writes it: the ``# sent_id`` numbers that a
    text reader gave continue across partitions; ``# newdoc`` only in the first."""
    if fmt not in plain.FORMATS:
        return text
    if not first:
        text = text.replace("# newdoc\n", "")
    return SENT_ID.sub(lambda m: f"# sent_id = {int(m.group(1)) + offset}", text)


class Parts:
    """The folder of finished partitions of a job, ``OUTPUT.parts``, with the manifest
    that a resumed job must match."""

    def __init__(self, folder: Path, manifest: dict, resume: bool, force: bool):
        self.folder = folder
        path = folder / "manifest.json"
        if folder.exists() and not resume:
            if not force:
                raise ArborparseError(f"{folder} holds the finished partitions of an "
                                      "interrupted job: continue it with --resume, or start "
                                      "again with --force")
            shutil.rmtree(folder)
        if resume:
            if not path.exists():
                raise ArborparseError(f"--resume: there is no {path} (an interrupted job "
                                      "keeps its finished partitions there)")
            if json.loads(path.read_text()) != manifest:
                raise ArborparseError(f"{folder}: the interrupted job had other inputs, model "
                                      "or options; resume it with the same ones")
        folder.mkdir(parents=True, exist_ok=True)
        with atomic_open(path, "w") as handle:
            json.dump(manifest, handle, indent=1)

    def name(self, job: int, part: int, count: int) -> Path:
        return self.folder / f"{job:06d}-{part:07d}-{count}.conllu"

    def finished(self) -> set[int]:
        """The jobs whose output is written."""
        return {int(p.stem) for p in self.folder.glob("*.done")}

    def done(self) -> dict[tuple[int, int], int]:
        """(job, partition) -> sentence count of the partitions written."""
        out = {}
        for path in self.folder.glob("*-*-*.conllu"):
            job, part, count = path.stem.split("-")
            out[int(job), int(part)] = int(count)
        return out

    def write(self, job: int, part: int, count: int, text: str) -> None:
        with atomic_open(self.name(job, part, count), "w", encoding="utf-8",
                         newline="\n") as handle:
            handle.write(text)

    def complete(self, index: int, job: Job) -> None:
        """Write the job's output once all its partitions are in and none failed."""
        if job.error is None and job.partitions == len(job.counts):
            self.assemble(index, job)

    def assemble(self, index: int, job: Job) -> None:
        """Write the job's output from its partitions, in order, atomically; drop them."""
        names = [self.name(index, k, job.counts[k]) for k in range(job.partitions)]
        offset = 0
        job.target.parent.mkdir(parents=True, exist_ok=True)
        with atomic_open(job.target, "w", encoding="utf-8", newline="\n") as handle:
            for k, path in enumerate(names):
                handle.write(_renumbered(path.read_text(encoding="utf-8"), offset, k == 0,
                                         job.fmt))
                offset += job.counts[k]
        (self.folder / f"{index:06d}.done").touch()
        for path in names:
            path.unlink()


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _plan(inputs, output) -> list[tuple[Path, Path]]:
    """(input file, output file) pairs: one file to `output`, several into the folder
    `output`."""
    files = expand(inputs)
    output = Path(output)
    single = len(files) == 1 and isinstance(inputs, (str, os.PathLike)) and \
        os.path.isfile(inputs)
    if single:
        return [(files[0][0], output)]
    if output.exists() and not output.is_dir():
        raise ArborparseError(f"{output}: several inputs need a folder for their outputs")
    pairs = [(f, output / output_name(rel)) for f, rel in files]
    seen = {}
    for f, target in pairs:
        if target in seen:
            raise ArborparseError(f"{seen[target]} and {f} would both be written to {target}")
        seen[target] = f
    return pairs


def parse_corpus(inputs, model, output, client=None, fmt: str = "auto",
                 partition_bytes: int = PARTITION_BYTES, resume: bool = False,
                 force: bool = False, progress: bool = True, **options) -> list[str]:
    """Parse `inputs` (a file, a folder, a glob, or a list of them) with the model file
    `model` on the Dask `client` (None: the current one); write one output per input
    file (`output`: a file for one input file, else a folder). Options as in `parse`.
    Returns the errors of the files that could not be parsed (they get no output)."""
    from distributed import as_completed, get_client

    if fmt not in FORMATS:
        raise ArborparseError(f"format: one of {', '.join(FORMATS)}")
    client = client or get_client()
    pairs = _plan(inputs, output)
    data = Path(model).read_bytes()
    digest = _digest(data)
    folder = Path(f"{output}.parts")
    manifest = {"inputs": [[str(s.resolve()), os.path.getsize(s), os.path.getmtime(s)]
                           for s, _ in pairs], "model": digest, "format": fmt,
                "partition_bytes": partition_bytes, "options": options}
    parts = Parts(folder, manifest, resume, force)
    done, finished = parts.done(), parts.finished()
    for index, (source, target) in enumerate(pairs):
        if index not in finished and target.exists() and not force:
            raise ArborparseError(f"{target} exists; use --force to replace it")
    model_ref = client.scatter(data, broadcast=True, hash=False)
    jobs = []
    total = sum(os.path.getsize(s) for s, _ in pairs)
    bar = tqdm(total=total, unit="B", unit_scale=True, desc="parsing", file=sys.stderr,
               disable=None if progress else True)
    running, info, told = as_completed(), {}, Warnings()
    window = 4 * max(1, len(client.scheduler_info().get("workers", {})))

    def finish(future):
        index, k, share = info.pop(future.key)
        job = jobs[index]
        text, count, gathered = future.result()
        told.add(str(pairs[index][0]), gathered)
        bar.update(share)
        if text is None:
            job.error = min(job.error or (k, count), (k, count))
            return
        if job.error is not None:
            return
        parts.write(index, k, count, text)
        job.counts[k] = count
        parts.complete(index, job)

    def drain(limit):
        while running.count() > limit:
            finish(next(running))

    try:
        for index, (source, target) in enumerate(pairs):
            job = Job(target, fmt)
            jobs.append(job)
            size = max(1, os.path.getsize(source))
            if index in finished:
                bar.update(size)
                continue
            try:
                job.fmt = resolve_format(source, fmt)
                k = -1
                read = 0
                for k, (first, start, blob) in enumerate(partitions(source, partition_bytes)):
                    share = min(len(blob), size - read)
                    read += share
                    if (index, k) in done:
                        job.counts[k] = done[index, k]
                        bar.update(share)
                        continue
                    future = client.submit(parse_partition, digest, model_ref, blob,
                                           str(source), first, start, job.fmt, options,
                                           pure=False)
                    info[future.key] = (index, k, share)
                    running.add(future)
                    drain(window)
                job.partitions = k + 1
                bar.update(size - read)
            except TreebankFormatError as err:
                job.error = (-1, str(err))
                continue
            parts.complete(index, job)
        drain(0)
    finally:
        bar.close()
    told.give()  # below the finished bar
    shutil.rmtree(folder)
    return [job.error[1] for job in jobs if job.error is not None]


def _parse_files(files: list[str], digest: str, model: bytes, fmt: str,
                 options: dict) -> list[str]:
    """The CoNLL text of each parsed sentence of `files` (a bag partition), in order."""
    out = []
    for name in files:
        blob = b"".join(open_lines(name)[0])
        text, count, gathered = parse_partition(digest, model, blob, name, 1, 0,
                                                resolve_format(Path(name), fmt), options)
        told = Warnings()  # given in the worker: a bag's partition returns sentences
        told.add(name, gathered)
        told.give()
        if text is None:
            raise ArborparseError(count)
        out += [block + "\n\n" for block in text.split("\n\n") if block]
    return out


def parse_bag(inputs, model, fmt: str = "auto", **options):
    """A `dask.bag.Bag` of the parsed sentences of `inputs` (as in `parse_corpus`), each
    the CoNLL text of one sentence, in input order; one bag partition per input file,
    read by the workers from the shared file system. The model file's bytes travel in
    the graph once."""
    import dask
    import dask.bag as db

    if fmt not in FORMATS:
        raise ArborparseError(f"format: one of {', '.join(FORMATS)}")
    files = [str(f) for f, _ in expand(inputs)]
    data = Path(model).read_bytes()
    return db.from_sequence(files, npartitions=len(files)).map_partitions(
        _parse_files, _digest(data), dask.delayed(data), fmt, options)
