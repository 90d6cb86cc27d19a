"""Options, declared as data: what a parser can do (`Capabilities`) and what a family's
training takes (`FamilyOptions`, one frozen dataclass per family).

**Capabilities.** Every parser (and a pipeline) has ``kind`` (its model kind) and
``capabilities``: tags, marginals, MBR, k-best, max-z, beam search and the decoders it can
switch to. The keyword options of its `parse` follow from them (`Capabilities.parse_options`:
keyword -> the values accepted, a tuple of choices or `int` for any integer >= 1), and a
call is checked against them (`check_options`): an option the model cannot honour (``beam``
for a linear model, ``decode_as="max-z"`` for one without hidden clusters) is refused with
`OptionError`, one line that names what the model can do.

**Family option tables.** A family's training options are the fields of one frozen
dataclass derived from `FamilyOptions`, each made by `option(...)`: its default, type, range
or choices, help, and the trainers that take it. The table is the one place a default
lives: `arborparse.train`, the trainer classes and the command line (its options and
``--help``) read it. ``Table.of(given)`` checks what a user gave and returns the full table,
defaults included.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import numbers
import os
from dataclasses import dataclass
from typing import Any, ClassVar

from arborparse.errors import ArborparseError


class OptionError(ArborparseError):
    """A parse option that the model does not take, or a value it does not accept."""

    def __init__(self, name: str, value, reason: str, takes: tuple[str, ...] = (),
                 spell=repr, close: str | None = None):
        self.name = name
        self.value = value
        self.reason = reason
        self.takes = takes  # the model's options, when `name` is none of them
        self.close = close  # the option of `takes` that `name` may have meant
        takes_text = f" (its options: {', '.join(takes) or 'none'})" if takes else ""
        guess = f": did you mean {close}?" if close else ""
        super().__init__(f"{name}={spell(value)} {reason}{guess}{takes_text}")

    def renamed(self, names: dict[str, str], others: bool = True, spell=repr) -> OptionError:
        """The same refusal in a caller's names (`names`: option -> the caller's name for
        it; `spell`: how the caller writes a value, such as `json.dumps`); the options it
        has no name for are kept in `takes` as they are, or left out when `others` is
        False."""
        takes = tuple(names.get(t, t) for t in self.takes if others or t in names)
        close = names.get(self.close, self.close) if others or self.close in names else None
        return OptionError(names.get(self.name, self.name), self.value, self.reason, takes,
                           spell, close)


# the options of whatever tags: predict tags for every sentence, or for none
TAGGING = {"retag": (False, True), "keep_tags": (False, True)}


def tagging(options: dict) -> tuple[bool, bool]:
    """Take ``retag`` and ``keep_tags`` out of `options` and return them; the two together
    raise `OptionError`."""
    retag, keep_tags = bool(options.pop("retag", None)), bool(options.pop("keep_tags", None))
    if retag and keep_tags:
        raise OptionError("retag", True, "cannot go with keep_tags")
    return retag, keep_tags


@dataclass(frozen=True)
class Capabilities:
    """What a parser offers, as data: `tags` (it tags and lemmatizes), `marginals` (head and
    label probabilities), `mbr` (minimum Bayes-risk decoding), `kbest` (the k best trees
    with their probabilities), `max_z` (max-z decoding of hidden clusters), `beam` (beam
    search, with width and branching), `threads` (long sentences scored in several
    threads), `decoders` (the decoders ``decoder=`` may pick); `why_not`: why this model
    lacks what its family offers, as (what, reason) pairs, where what is a keyword of
    `parse` or ``keyword=value`` (the refusal says the reason)."""

    tags: bool = False
    marginals: bool = False
    mbr: bool = False
    kbest: bool = False
    max_z: bool = False
    beam: bool = False
    threads: bool = False
    decoders: tuple[str, ...] = ()
    why_not: tuple[tuple[str, str], ...] = ()

    def __or__(self, other: Capabilities) -> Capabilities:
        return Capabilities(**{name: getattr(self, name) or getattr(other, name)
                               for name in self.names(every=True)},
                            decoders=self.decoders or other.decoders,
                            why_not=self.why_not + other.why_not)

    def names(self, every: bool = False) -> list[str]:
        """What is offered, e.g. ``["marginals", "mbr", "kbest"]`` (`every`: all that may
        be)."""
        return [f.name for f in dataclasses.fields(self) if f.type == "bool"
                and (every or getattr(self, f.name))]

    def parse_options(self) -> dict:
        """The keyword options of `parse` that follow: keyword -> accepted values."""
        options: dict[str, Any] = {}
        if self.decoders:
            options["decoder"] = self.decoders
        if self.mbr or self.max_z:
            options["decode_as"] = ("map",) + ("mbr",) * self.mbr + ("max-z",) * self.max_z
        if self.marginals:
            options["marginals"] = (False, True)
        if self.kbest:
            options["kbest"] = int
        if self.tags:
            options.update(TAGGING)
        if self.beam:
            options.update(beam=int, branching=int)
        if self.threads:
            options["threads"] = int
        return options


def check_options(parser, given: dict) -> None:
    """Raise `OptionError` for the first of `given` (keyword -> value) that `parser` does
    not take; None values mean "the model's default" and always pass."""
    accepted = parser.capabilities.parse_options()
    because = {what: f": {reason}" for what, reason in parser.capabilities.why_not}
    kind = getattr(getattr(parser, "parser", None), "kind", parser.kind)  # a pipeline's parser
    for name, value in given.items():
        if value is None:
            continue
        if name not in accepted:
            close = difflib.get_close_matches(name, accepted)  # one taking the value first
            close = [c for c in close if isinstance(accepted[c], tuple) and
                     value in accepted[c]] + close
            raise OptionError(name, value, f"does not apply to this {kind} model" +
                              because.get(name, ""), tuple(accepted),
                              close=close[0] if close and name not in because else None)
        allowed = accepted[name]
        if allowed is int:
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise OptionError(name, value, "must be an integer >= 1")
        elif value not in allowed:
            choices = ", ".join(map(str, allowed))
            raise OptionError(name, value, f"does not apply to this {kind} model"
                              + because.get(f"{name}={value}", "")
                              + f" (choose one of {choices})")


# ---------------------------------------------------------------------- option tables

FILE, DIRECTORY = "file", "directory"  # types of options naming an existing path


def option(default, type, help: str, *, low=None, high=None, choices=None, trainers=None,
           flags=(), may_change: bool = False, auto: bool = False):
    """A field of a family's option table.

    Parameters
    ----------
    default : the default (None: "chosen by the family", which the help says)
    type : int, float, bool, str, `FILE` or `DIRECTORY`
    help : one sentence or two for ``--help``
    low, high : the range of a number (inclusive; a float's `low` is exclusive when the
        value must be positive, written ``low=0.0``)
    choices : the values a str may take
    trainers : the trainers (the table's ``trainer`` field) that take the option; None: all
    flags : the command line's flags (default ``--name-with-dashes``)
    may_change : a resumed training may give another value (epochs, patience, threads)
    auto : the value ``"auto"`` is also accepted (``-C auto``)
    """
    meta = {"type": type, "help": help, "low": low, "high": high, "choices": choices,
            "trainers": trainers, "flags": tuple(flags), "may_change": may_change,
            "auto": auto}
    return dataclasses.field(default=default, metadata=meta)


@dataclass(frozen=True)
class Spec:
    """One row of a table, as the command line and the errors read it."""

    name: str
    default: Any
    type: Any
    help: str
    low: Any
    high: Any
    choices: tuple | None
    trainers: tuple | None
    flags: tuple[str, ...]
    may_change: bool
    auto: bool

    @property
    def flag(self) -> str:
        return max(self.flags, key=len) if self.flags else \
            "--" + self.name.replace("_", "-")

    def check(self, value, family: str) -> None:
        """Raise ArborparseError when `value` is not one this option takes."""
        if value is None or (self.auto and value == "auto"):
            return
        where = f"{family} option {self.name}"
        kind = self.type
        if kind is bool:
            if not isinstance(value, bool):
                raise ArborparseError(f"{where}={value!r}: give True or False")
            return
        if kind in (int, float):
            number = isinstance(value, numbers.Real) and not isinstance(value, bool) and \
                (kind is float or isinstance(value, numbers.Integral))
            if not number:
                what = "an integer" if kind is int else "a number"
                raise ArborparseError(f"{where}={value!r}: give {what}" +
                                      (" or 'auto'" if self.auto else ""))
            if isinstance(value, float) and not math.isfinite(value):
                raise ArborparseError(f"{where}={value!r}: give a finite number")
            low_ok = self.low is None or (value > self.low if isinstance(self.low, float)
                                          else value >= self.low)
            if not low_ok or (self.high is not None and value > self.high):
                raise ArborparseError(f"{where}={value!r}: must be {self.range_text()}")
            return
        if not isinstance(value, (str, os.PathLike)):
            raise ArborparseError(f"{where}={value!r}: give a string")
        if self.choices is not None and value not in self.choices:
            raise ArborparseError(f"{where}={value!r}: choose one of "
                                  f"{', '.join(self.choices)}")
        if kind == FILE and not os.path.isfile(value):
            raise ArborparseError(f"{where}: {value} is not a file")
        if kind == DIRECTORY and not os.path.isdir(value):
            raise ArborparseError(f"{where}: {value} is not a directory")

    def range_text(self) -> str:
        if isinstance(self.low, float):
            low = f"> {self.low:g}"
        else:
            low = None if self.low is None else f">= {self.low}"
        if self.high is None:
            return low or "any"
        if isinstance(self.low, float):
            return f"{low} and <= {self.high}"
        return f"{self.low}..{self.high}" if low else f"<= {self.high}"


@dataclass(frozen=True)
class FamilyOptions:
    """The base of every family's option table (see the module docstring). A subclass sets
    `family` (its name) and `components` (what `arborparse.train` builds by default) and
    declares its fields with `option`; `parses` says what its models can offer when they
    parse (a model may offer less: max-z decoding needs hidden clusters)."""

    family: ClassVar[str] = ""
    components: ClassVar[tuple[str, ...]] = ()
    parses: ClassVar[Capabilities] = Capabilities()

    def __post_init__(self):
        for spec in self.specs():
            spec.check(getattr(self, spec.name), self.family)

    @classmethod
    def offers(cls, header: dict) -> Capabilities:
        """What a model of the family whose model-file header is `header` offers when it
        parses (the family's `parses`, unless the family says otherwise)."""
        return cls.parses

    @classmethod
    def by_size(cls, sentences: int, given: dict) -> dict:
        """The defaults that follow the number of training sentences (name -> value), used
        where the user gives no value of their own (`given`: the options given, name ->
        value or None); none unless the family says so."""
        return {}

    @property
    def calibrated_on_dev(self) -> bool:
        """Whether the parser's marginals (HeadProb, LabelProb) are probabilities only once
        their temperatures are fitted on dev data (a model not trained as a distribution,
        or one that overfits its likelihood); False unless the family says so."""
        return False

    @classmethod
    def specs(cls) -> list[Spec]:
        return [Spec(f.name, f.default, **f.metadata) for f in dataclasses.fields(cls)]

    @classmethod
    def names(cls) -> list[str]:
        return [f.name for f in dataclasses.fields(cls)]

    @classmethod
    def of(cls, given: dict) -> FamilyOptions:
        """The table with `given` (name -> value; None: the default) in place of the
        defaults; an option the family does not take, or one its trainer does not, raises
        ArborparseError naming the family's options."""
        unknown = sorted(set(given) - set(cls.names()))
        if unknown:
            guessed = []
            for name in unknown:
                close = difflib.get_close_matches(name, cls.names())
                guessed.append(f"{name} (did you mean {close[0]}?)" if close else name)
            raise ArborparseError(f"the {cls.family} family takes no option "
                                  f"{', '.join(guessed)}; its options: "
                                  f"{', '.join(cls.names())}")
        plain = {k: v.item() if hasattr(v, "item") else v for k, v in given.items()}
        table = cls(**{k: v for k, v in plain.items() if v is not None})
        trainer = getattr(table, "trainer", None)
        wrong = [spec.name for spec in cls.specs() if plain.get(spec.name) is not None and
                 spec.trainers is not None and trainer not in spec.trainers]
        if wrong:
            raise ArborparseError(f"{', '.join(wrong)} {'does' if len(wrong) == 1 else 'do'} "
                                  f"not apply to the {cls.family} trainer {trainer} "
                                  f"({table.takes_text(wrong[0])})")
        return table

    @classmethod
    def takes_text(cls, name: str) -> str:
        spec = next(s for s in cls.specs() if s.name == name)
        return f"{name}: {', '.join(spec.trainers)}"

    def to_dict(self) -> dict:
        """Every option (defaults included), JSON-ready."""
        return {k: os.fspath(v) if isinstance(v, os.PathLike) else v
                for k, v in dataclasses.asdict(self).items()}

    def differing(self, other: dict) -> list[str]:
        """The options, among those a resumed training must keep, that differ from
        `other` (a `to_dict` of another run)."""
        mine = self.to_dict()
        return sorted(s.name for s in self.specs()
                      if not s.may_change and other.get(s.name) != mine[s.name])
