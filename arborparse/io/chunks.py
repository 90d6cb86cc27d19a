"""Streams read a chunk at a time, without losing what was read before the stream failed."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

T = TypeVar("T")


def chunks(items: Iterable[T], most: int, size: Callable[[T], int] = lambda _: 1
           ) -> Iterator[list[T]]:
    """The items in lists, each ending with the item that brings the sum of their `size`
    to `most` (the last one where the items end). Where the stream fails (a malformed line,
    invalid UTF-8), the items read before it come first, as a list, then its error: what
    reads a chunk at a time still gives all it read."""
    chunk: list[T] = []
    total = 0
    stream = iter(items)
    while True:
        try:
            item = next(stream)
        except StopIteration:
            break
        except Exception:
            if chunk:
                yield chunk
            raise
        chunk.append(item)
        total += size(item)
        if total >= most:
            yield chunk
            chunk, total = [], 0
    if chunk:
        yield chunk
