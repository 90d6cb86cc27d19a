"""Model files: a NumPy ``.npz`` archive of arrays plus one JSON header; never pickle.

Layout: the array ``header`` holds the UTF-8 JSON object ``{"format": "arborparse",
"kind": ..., "version": ..., ...}``; every other array is named by its key. A large array
that is mostly zeros (hashed weight vectors: a few percent of their entries are ever
updated) is stored as the positions and values of its non-zero entries (``NAME.nonzero``,
``NAME.values``; its shape in the header's ``"sparse"``) where they take at most half its
bytes, and rebuilt on loading. The header and the arrays of fewer than `SPARSE_SIZE`
entries are deflated; the larger arrays are stored as they are: weights deflate to half
or two thirds of their bytes, and inflating them was most of a model's load (English-EWT's
pipeline: 0.34 of 0.41 CPU s, for a file half the size). Saving writes a temporary file
beside the target and renames it into place, so a crash never leaves a half-written model.
Loading refuses another kind or version with a message that says so.
"""

from __future__ import annotations

import json
import os
import zipfile
import zlib
from pathlib import Path
from tokenize import TokenError

import numpy as np

from arborparse.errors import ArborparseError
from arborparse.io.atomic import atomic_open, check_writable

FORMAT = "arborparse"
_ZIP_MAGIC = b"PK\x03\x04"
# arrays of this many entries or more: stored sparse where that halves them; any member of
# this many entries or more (a sparse array's positions and values go by their own) is
# stored as it is, the smaller ones deflated
SPARSE_SIZE = 1 << 16


class ModelFileError(ArborparseError):
    """A model file is missing, damaged, or of another kind or version."""


class MissingModelError(ModelFileError, FileNotFoundError):
    """A model file is not there (caught by ``except FileNotFoundError`` too)."""


def save(path, kind: str, version: int, header: dict, arrays: dict[str, np.ndarray],
         force: bool = False) -> None:
    """Write a model file atomically; a file there that is not a model file is replaced
    only with `force` (`check_output`)."""
    check_output(path, model=True, force=force)
    path = _path(path)
    meta = {"format": FORMAT, "kind": kind, "version": version, **header}
    payload, sparse = {}, {}
    for name, array in arrays.items():
        array = np.asarray(array)
        nonzero = np.flatnonzero(array) if array.size >= SPARSE_SIZE else None
        index = np.uint32 if array.size < 1 << 32 else np.int64
        if nonzero is not None and 2 * len(nonzero) * (np.dtype(index).itemsize +
                                                       array.itemsize) <= array.nbytes:
            sparse[name] = list(array.shape)
            payload[f"{name}.nonzero"] = nonzero.astype(index)
            payload[f"{name}.values"] = array.ravel()[nonzero]
        else:
            payload[name] = array
    if sparse:
        meta["sparse"] = sparse
    payload["header"] = np.frombuffer(json.dumps(meta).encode("utf-8"), dtype=np.uint8)
    with atomic_open(path, "wb") as handle:
        _write_npz(handle, payload)


def nested(name: str, arrays: dict) -> dict:
    """A part's arrays as the file holding it names them: each under ``name.`` (`inner`
    reads them back)."""
    return {f"{name}.{key}": value for key, value in arrays.items()}


def inner(name: str, arrays: dict) -> dict:
    """The arrays saved under ``name.`` (`nested`), by their own names."""
    prefix = f"{name}."
    return {key[len(prefix):]: value for key, value in arrays.items()
            if key.startswith(prefix)}


def _write_npz(handle, arrays: dict[str, np.ndarray]) -> None:
    """The arrays as an .npz archive (what `np.load` reads) in the open file: those of
    fewer than `SPARSE_SIZE` entries (the header too) deflated at level 1, the others
    stored as they are."""
    with zipfile.ZipFile(handle, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1,
                         allowZip64=True) as archive:
        for name, array in arrays.items():
            array = np.asanyarray(array)
            entry = f"{name}.npy"  # by name: deflated with the archive's level
            if array.size >= SPARSE_SIZE and name != "header":
                entry = zipfile.ZipInfo(entry)
                entry.compress_type = zipfile.ZIP_STORED
            with archive.open(entry, "w", force_zip64=True) as member:
                np.lib.format.write_array(member, array, allow_pickle=False)


def _rebuilt(archive, sparse) -> dict[str, np.ndarray]:
    """The arrays of an open archive, the sparse ones (name -> shape) rebuilt; ValueError
    where the header and the arrays disagree."""
    content = {}
    for name in archive.files:
        if name != "header":
            try:
                content[name] = archive[name]
            except TokenError:  # numpy reading the array's damaged header
                raise ValueError(f"{name}.npy has an unreadable array header") from None
    if not isinstance(sparse, dict):
        raise ValueError("its 'sparse' header is not an object")
    for name, shape in sparse.items():
        nonzero, values = content.pop(f"{name}.nonzero", None), content.pop(f"{name}.values",
                                                                            None)
        if not (isinstance(shape, list) and all(type(d) is int and d >= 0 for d in shape)
                and nonzero is not None and values is not None and nonzero.ndim == 1
                and nonzero.dtype.kind in "ui" and nonzero.shape == values.shape
                and (len(nonzero) == 0 or 0 <= nonzero.min() <= nonzero.max()
                     < np.prod(shape, dtype=np.int64))):
            raise ValueError(f"the stored entries of {name!r} do not fit its shape")
        array = np.zeros(int(np.prod(shape, dtype=np.int64)), dtype=values.dtype)
        array[nonzero] = values
        content[name] = array.reshape(shape)
    return content


def _read(path: Path, arrays: bool) -> tuple[dict, dict[str, np.ndarray]]:
    """The header of a model file and, if asked, its arrays; ModelFileError otherwise."""
    try:
        with open(path, "rb") as handle:
            magic = handle.read(4)
    except FileNotFoundError:
        raise MissingModelError(f"{path}: no such model file") from None
    except OSError as err:
        raise ModelFileError(f"{path}: cannot read the model file ({err.strerror})") from None
    if magic != _ZIP_MAGIC:
        raise ModelFileError(f"{path}: not an arborparse model file (not an .npz archive)")
    try:
        with np.load(path, allow_pickle=False) as archive:
            if "header" not in archive.files:
                raise ModelFileError(f"{path}: not an arborparse model file (no header)")
            meta = json.loads(archive["header"].tobytes().decode("utf-8"))
            if not isinstance(meta, dict) or meta.get("format") != FORMAT:
                raise ModelFileError(f"{path}: not an arborparse model file")
            sparse = meta.pop("sparse", {})
            content = _rebuilt(archive, sparse) if arrays else {}
    except TokenError:  # numpy reading a damaged array header (of the header itself)
        raise ModelFileError(f"{path}: a damaged model file (the header's array header is "
                             "unreadable)") from None
    except (OSError, ValueError, MemoryError, zipfile.BadZipFile, EOFError, zlib.error) as err:
        raise ModelFileError(f"{path}: a damaged model file ({err})") from None
    return meta, content


def check_whole(path) -> None:
    """Read every byte of the model file at `path` against its checksums (what `header`
    alone does not): ModelFileError naming the first damaged array."""
    try:
        with zipfile.ZipFile(_path(path)) as archive:
            for member in archive.infolist():
                try:
                    with archive.open(member) as stream:
                        while stream.read(1 << 24):
                            pass
                except (zipfile.BadZipFile, EOFError, zlib.error) as err:
                    why = "fails its CRC-32 check" if "CRC" in str(err) else f"{err}"
                    raise ModelFileError(f"{path}: a damaged model file ({member.filename} "
                                         f"{why})") from None
    except (OSError, ValueError, zipfile.BadZipFile, EOFError) as err:
        raise ModelFileError(f"{path}: a damaged model file ({err})") from None


def _path(path) -> Path:
    """`path` as a Path; TypeError, in one line, for anything that is not a path."""
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"a model file is named by a path (a str or pathlib.Path), not "
                        f"{type(path).__name__}")
    return Path(path)


def is_model(path) -> bool:
    """True when `path` holds a model file of ours (whatever its kind or version)."""
    try:
        _read(_path(path), arrays=False)
    except ModelFileError:
        return False
    return True


def check_output(path, inputs=(), model: bool = False, force: bool = False) -> None:
    """Before any work, refuse (`ArborparseError`, one line) to write `path` where it is one
    of the `inputs` (paths read by the same work), cannot be written, or holds a file of
    the other kind (a model file where `model` is False, anything else where it is True)
    unless `force`: nothing the user owns is overwritten by surprise."""
    if path is None or str(path) == "-":
        return
    for other in inputs:
        if other is not None and str(other) != "-" and os.path.exists(other) and \
                os.path.exists(path) and os.path.samefile(path, other):
            raise ArborparseError(f"{path} is also an input of this command; write the "
                                  "output elsewhere")
    check_writable(path)
    if not force and os.path.isfile(path) and os.path.getsize(path) > 0 and \
            is_model(path) != model:
        what = "is not an arborparse model file" if model else "is an arborparse model file"
        raise ArborparseError(f"{path} exists and {what}; use --force (force=True) to "
                              "replace it")


def kind_of(path) -> str:
    """The kind of model a file holds (raises ModelFileError for anything else)."""
    return str(header(path).get("kind"))


def header(path) -> dict:
    """The JSON header of a model file, its arrays left unread (ModelFileError for
    anything that is not a model file of ours)."""
    return _read(_path(path), arrays=False)[0]


def load(path, kind: str, version: int, old_kinds: tuple[str, ...] = (),
         oldest: int | None = None) -> tuple[dict, dict[str, np.ndarray]]:
    """Read a model file of a version from `oldest` (default: `version`) to `version`:
    (header, arrays); `old_kinds` are earlier names of `kind`. Raises ModelFileError with
    what is wrong."""
    path = _path(path)
    meta, arrays = _read(path, arrays=True)
    if meta.get("kind") != kind and meta.get("kind") not in old_kinds:
        raise ModelFileError(f"{path}: a model of kind {meta.get('kind')!r}, "
                             f"expected {kind!r}" + (" (arborparse.load reads it)" if
                                                     meta.get("kind") == "pipeline" else ""))
    found, oldest = meta.get("version"), version if oldest is None else oldest
    if type(found) is not int:
        raise ModelFileError(f"{path}: the model file's version is {found!r}, not a number "
                             f"(this arborparse reads {versions(oldest, version)}); the file "
                             "was edited or written by another program")
    if not oldest <= found <= version:
        raise ModelFileError(f"{path}: model file version {found}, this arborparse "
                             f"reads {versions(oldest, version)}; {what_to_do(found, version)}")
    return meta, arrays


def versions(oldest: int, version: int) -> str:
    """The versions this arborparse reads, in words: "version 3", "versions 2 to 3"."""
    return f"version {version}" if oldest == version else f"versions {oldest} to {version}"


def what_to_do(found, version: int) -> str:
    """The advice for a model (or a part of one) of version `found` where this arborparse
    reads `version`: retrain an older one, upgrade arborparse for a newer one."""
    if type(found) is int and found > version:
        return "it was written by a newer arborparse: upgrade arborparse to read it"
    return "retrain the model with this version"
