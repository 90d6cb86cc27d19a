"""Model files: a NumPy ``.npz`` archive of arrays plus one JSON header; never pickle.

Layout: the array ``header`` holds the UTF-8 JSON object ``{"format": "arborparse",
"kind": ..., "version": ..., ...}``; every other array is named by its key. Saving writes a
temporary file beside the target and renames it into place, so a crash never leaves a
half-written model. Loading refuses another kind or version with a message that says so.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import numpy as np

from arborparse.errors import ArborparseError
from arborparse.io.atomic import atomic_open

FORMAT = "arborparse"


class ModelFileError(ArborparseError):
    """A model file is missing, damaged, or of another kind or version."""


def save(path, kind: str, version: int, header: dict, arrays: dict[str, np.ndarray]) -> None:
    """Write a model file atomically."""
    path = Path(path)
    meta = {"format": FORMAT, "kind": kind, "version": version, **header}
    payload = {"header": np.frombuffer(json.dumps(meta).encode("utf-8"), dtype=np.uint8)}
    payload.update(arrays)
    with atomic_open(path, "wb") as handle:
        np.savez_compressed(handle, **payload)


def kind_of(path) -> str:
    """The kind of model a file holds (raises ModelFileError for anything else)."""
    path = Path(path)
    try:
        with np.load(path, allow_pickle=False) as archive:
            meta = json.loads(archive["header"].tobytes().decode("utf-8"))
    except FileNotFoundError:
        raise ModelFileError(f"{path}: no such model file") from None
    except (OSError, KeyError, ValueError, zipfile.BadZipFile, EOFError,
            json.JSONDecodeError) as err:
        raise ModelFileError(f"{path}: not a readable arborparse model file ({err})") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise ModelFileError(f"{path}: not an arborparse model file")
    return str(meta.get("kind"))


def load(path, kind: str, version: int) -> tuple[dict, dict[str, np.ndarray]]:
    """Read a model file: (header, arrays). Raises ModelFileError with what is wrong."""
    path = Path(path)
    try:
        with np.load(path, allow_pickle=False) as archive:
            if "header" not in archive.files:
                raise ModelFileError(f"{path}: not an arborparse model file (no header)")
            meta = json.loads(archive["header"].tobytes().decode("utf-8"))
            arrays = {name: archive[name] for name in archive.files if name != "header"}
    except FileNotFoundError:
        raise ModelFileError(f"{path}: no such model file") from None
    except (OSError, ValueError, zipfile.BadZipFile, EOFError, json.JSONDecodeError) as err:
        raise ModelFileError(f"{path}: not a readable arborparse model file ({err})") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise ModelFileError(f"{path}: not an arborparse model file")
    if meta.get("kind") != kind:
        raise ModelFileError(f"{path}: a model of kind {meta.get('kind')!r}, "
                             f"expected {kind!r}")
    if meta.get("version") != version:
        raise ModelFileError(f"{path}: model file version {meta.get('version')}, this arborparse "
                             f"reads version {version}; retrain the model with this version")
    return meta, arrays
