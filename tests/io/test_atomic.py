"""Writing outputs: atomically for regular files, straight through for devices and pipes,
symbolic links followed, permissions kept, one-line errors, no temporary file left."""

import os
import stat
import threading

import pytest

from arborparse.io.atomic import OutputError, atomic_open, check_writable


def test_regular_file_keeps_its_mode(tmp_path):
    path = tmp_path / "out.txt"
    path.write_text("old")
    os.chmod(path, 0o640)
    with atomic_open(path) as handle:
        handle.write("new")
    assert path.read_text() == "new" and stat.S_IMODE(path.stat().st_mode) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.txt"]


def test_symbolic_link_is_followed(tmp_path):
    target, link = tmp_path / "target.txt", tmp_path / "link.txt"
    target.write_text("old")
    link.symlink_to(target)
    with atomic_open(link) as handle:
        handle.write("new")
    assert link.is_symlink() and target.read_text() == "new"
    dangling = tmp_path / "dangling.txt"
    dangling.symlink_to(tmp_path / "created.txt")
    with atomic_open(dangling) as handle:
        handle.write("x")
    assert dangling.is_symlink() and (tmp_path / "created.txt").read_text() == "x"


def test_devices_are_written_through():
    with atomic_open("/dev/null") as handle:
        handle.write("nothing")
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    with pytest.raises(OutputError, match="cannot write /dev/full: No space left on device"):
        with atomic_open("/dev/full") as handle:
            handle.write("x" * 100000)
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)


def test_fifo_is_written_through(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(open(fifo).read()))
    reader.start()
    with atomic_open(fifo) as handle:
        handle.write("through the pipe")
    reader.join(10)
    assert received == ["through the pipe"] and stat.S_ISFIFO(os.stat(fifo).st_mode)


@pytest.mark.parametrize("name, reason", [("nodir/x.conllu", "No such file or directory"),
                                          (".", "Is a directory")])
def test_unwritable_paths_are_found_first(tmp_path, name, reason):
    with pytest.raises(OutputError, match=f"cannot write .*: {reason}"):
        check_writable(tmp_path / name)
    with pytest.raises(OutputError, match=reason):
        with atomic_open(tmp_path / name) as handle:
            handle.write("x")
    with pytest.raises(OutputError, match="cannot write /proc/foo"):
        check_writable("/proc/foo")


def test_error_and_interrupt_leave_no_temporary_file(tmp_path):
    path = tmp_path / "out.txt"
    for error in (RuntimeError, KeyboardInterrupt):
        with pytest.raises(error):
            with atomic_open(path) as handle:
                handle.write("partial")
                raise error
    assert list(tmp_path.iterdir()) == []
