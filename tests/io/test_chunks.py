"""Streams read a chunk at a time (`arborparse.io.chunks`): every item once, in order, in
lists that end where their sizes reach the bound; what was read before a failure comes
first, then the failure."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arborparse.io.chunks import chunks


@given(st.lists(st.integers(0, 9)), st.integers(1, 20))
def test_every_item_once_in_lists_that_end_at_the_bound(items, most):
    found = list(chunks(items, most, size=lambda item: item))
    assert [item for chunk in found for item in chunk] == items
    for chunk in found[:-1]:
        assert sum(chunk[:-1]) < most <= sum(chunk)
    if found:
        assert sum(found[-1][:-1]) < most
    assert [len(c) for c in chunks(items, 3)] == [3] * (len(items) // 3) + (
        [len(items) % 3] if len(items) % 3 else [])


def test_what_was_read_before_a_failure_comes_first():
    def stream():
        yield from range(7)
        raise ValueError("line 8: malformed")

    read = chunks(stream(), 3)
    assert next(read) == [0, 1, 2] and next(read) == [3, 4, 5] and next(read) == [6]
    with pytest.raises(ValueError, match="line 8"):
        next(read)
    failing_at_once = chunks(stream(), 10)
    assert next(failing_at_once) == list(range(7))
    with pytest.raises(ValueError):
        next(failing_at_once)
