"""Whether a sentence's parse fits in the memory free, checked before any array is made.

A parse of n words takes O(n²) memory for its arcs (scores, masks, the decoder's arrays)
and a second-order one O(n³) for its parts; each family measures its bytes per (n+1)² and
(n+1)³ and asks `check_fits` before it parses.
"""

from __future__ import annotations

from arborparse.errors import ArborparseError

CHECKED_FROM = 2 ** 28  # bytes: a parse that takes less is not checked (no file read)


def available_memory() -> int | None:
    """The bytes of memory free for the taking (Linux's MemAvailable), None where unknown."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def check_fits(words: int, arc_bytes: float, part_bytes: float = 0.0, where: str = "",
               model: str = "", instead: str = "", from_text: bool = False) -> None:
    """Refuse (`ArborparseError`, after `where`) a sentence of `words` words whose parse,
    `arc_bytes` per (n+1)² and `part_bytes` per (n+1)³, would not fit in the memory free.
    Where the parts take most of it, the message names the `model` ("this order-2 model")
    and what to parse with `instead`; a sentence of raw text (`from_text`) is told how to
    read one sentence a line."""
    parts = part_bytes * (words + 1) ** 3
    need = parts + arc_bytes * (words + 1) ** 2
    free = available_memory() if need > CHECKED_FROM else None
    if free is None or need <= free:
        return
    if parts > need / 2:
        raise ArborparseError(
            f"{where}a sentence of {words} words is too long for {model}: its parts would "
            f"take about {need / 2 ** 30:.1f} GiB (they grow as n³), more than the "
            f"{free / 2 ** 30:.1f} GiB free; split it, or {instead}")
    raise ArborparseError(
        f"{where}a sentence of {words} words is too long to parse here: its arcs would "
        f"take about {need / 2 ** 30:.1f} GiB (they grow as n²), more than the "
        f"{free / 2 ** 30:.1f} GiB free; split it" + (
            " (raw text without sentence ends is one sentence: --input-format lines reads "
            "one a line)" if from_text else ""))
