"""The options of a parser's `parse`: what every family's parser declares and how a call is
checked against it.

Every parser has ``kind`` (its model kind) and ``options``, a mapping from the keyword of
`parse` to the values it accepts: a tuple of choices, or `int` for any integer >= 1.
Options a model does not take (``beam`` for a linear model, ``decode_as="max-z"`` for one
without hidden clusters) are refused with `OptionError`.
"""

from __future__ import annotations

from arborparse.errors import ArborparseError


class OptionError(ArborparseError):
    """A parse option that the model does not take, or a value it does not accept."""

    def __init__(self, name: str, value, reason: str, takes: tuple[str, ...] = ()):
        self.name = name
        self.value = value
        self.reason = reason
        self.takes = takes  # the model's options, when `name` is none of them
        takes_text = f" (its options: {', '.join(takes) or 'none'})" if takes else ""
        super().__init__(f"{name}={value!r} {reason}{takes_text}")


# the options of whatever tags: predict tags for every sentence, or for none
TAGGING = {"retag": (False, True), "keep_tags": (False, True)}


def tagging(options: dict) -> tuple[bool, bool]:
    """Take ``retag`` and ``keep_tags`` out of `options` and return them; the two together
    raise `OptionError`."""
    retag, keep_tags = bool(options.pop("retag", None)), bool(options.pop("keep_tags", None))
    if retag and keep_tags:
        raise OptionError("retag", True, "cannot go with keep_tags")
    return retag, keep_tags


def check_options(parser, given: dict) -> None:
    """Raise `OptionError` for the first of `given` (keyword -> value) that `parser` does
    not take; None values mean "the model's default" and always pass."""
    for name, value in given.items():
        if value is None:
            continue
        if name not in parser.options:
            raise OptionError(name, value, f"does not apply to this {parser.kind} model",
                              tuple(parser.options))
        allowed = parser.options[name]
        if allowed is int:
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise OptionError(name, value, "must be an integer >= 1")
        elif value not in allowed:
            choices = ", ".join(map(str, allowed))
            raise OptionError(name, value, f"does not apply to this {parser.kind} model "
                                           f"(choose one of {choices})")
