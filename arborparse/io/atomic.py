"""Writing files safely: atomically where the target is a regular file, straight through
where it is not.

- A regular file (or a new one) is written to a temporary file beside it and renamed into
  place, so a crash never leaves it half-written; an existing file keeps its permissions.
- A symbolic link is followed: its target is replaced, the link stays.
- A device, a pipe or a socket (``/dev/null``, ``/dev/stdout``, a FIFO) is written to
  directly: it is never replaced by a regular file.
- Every failure is an `ArborparseError` of one line: ``cannot write PATH: reason``; the
  temporary file is removed on every exit path Python sees (errors, Ctrl-C, SIGTERM).
"""

from __future__ import annotations

import os
import stat
import tempfile
from contextlib import contextmanager, suppress
from pathlib import Path

from arborparse.errors import ArborparseError


class OutputError(ArborparseError):
    """A file cannot be written."""

    def __init__(self, path, reason: str):
        self.path = str(path)
        super().__init__(f"cannot write {path}: {reason}")


def _stat(path: Path):
    """What is at `path` (symbolic links followed), None for nothing; a directory is
    refused."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    except OSError as err:
        raise OutputError(path, err.strerror) from None
    if stat.S_ISDIR(st.st_mode):
        raise OutputError(path, "Is a directory")
    return st


def check_writable(path) -> None:
    """Raise `OutputError` now, before any work, unless `path` can be written: an existing
    directory, a missing or unwritable folder are refused."""
    path = Path(path)
    st = _stat(path)
    if st is not None and not stat.S_ISREG(st.st_mode):
        if not os.access(path, os.W_OK):
            raise OutputError(path, "Permission denied")
        return
    folder = Path(os.path.realpath(path)).parent
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as err:
        raise OutputError(path, err.strerror) from None
    os.close(fd)
    os.unlink(tmp)


@contextmanager
def atomic_open(path, mode: str = "w", **kwargs):
    """Open `path` for writing as described in the module docstring; yields the handle."""
    path = Path(path)
    st = _stat(path)
    try:
        if st is not None and not stat.S_ISREG(st.st_mode):
            with open(path, mode, **kwargs) as handle:
                yield handle
            return
        target = Path(os.path.realpath(path))
    except OSError as err:
        raise OutputError(path, err.strerror) from None
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.",
                                   suffix=".tmp")
        if st is not None:
            permissions = stat.S_IMODE(st.st_mode)
        else:
            umask = os.umask(0)
            os.umask(umask)
            permissions = 0o666 & ~umask
        os.fchmod(fd, permissions)
        with os.fdopen(fd, mode, **kwargs) as handle:
            yield handle
        os.replace(tmp, target)
    except BaseException as err:
        if tmp is not None:  # made (an interrupt may come just after mkstemp), not renamed
            with suppress(FileNotFoundError):
                os.unlink(tmp)
        if isinstance(err, OSError):
            raise OutputError(path, err.strerror or str(err)) from None
        raise
