"""The one epoch loop every trainer runs (`Loop`), and what an interrupted training says.

A trainer's ``fit(train, dev=None, save_best=None)`` supplies "one epoch" and the parser it
gives; `Loop` supplies the rest: the progress bar of each epoch, the dev scores after it and
one line on stderr, the trainer's ``history_`` and ``best_epoch_`` (best dev score, or the
last epoch without dev), early stopping after `patience` epochs without a better score,
more epochs than asked while the best is one of the last `extend` (at most `EXTENDED` times
as many),
the best parser kept as the trainer's ``parser_`` and saved to `save_best` as soon as it is
best (a path, or a callable taking
the parser and the epoch's record: inside a pipeline, say), and, with a `checkpoint` path,
the trainer's state written after every epoch so that ``resume`` continues where it
stopped (refusing other options, naming them). Decorated with `keeps_best`, an interrupt
(Ctrl-C, SIGTERM) becomes `TrainingInterrupted`, which names the epoch the file holds (and
the checkpoint to resume from).

    loop = Loop(self, dev, save_best, checkpoint=..., settings=options.to_dict())
    state = loop.resume()          # the trainer's saved (header, arrays), or None
    for epoch in loop:             # from the first unfinished epoch; stops early on patience
        for item in loop.bar(epoch, items):
            ...                    # one epoch of training
        loop.end(epoch, record, "12.3s  loss 0.41", parser, state=self._state)
    loop.finish()                  # the checkpoint is removed
"""

from __future__ import annotations

import functools
import math
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable
from contextlib import contextmanager
from contextvars import ContextVar

from arborparse.errors import ArborparseError, warn

CHECKPOINT = "checkpoint"
CHECKPOINT_VERSION = 1
# settings that say which code wrote a checkpoint (the linear features): a checkpoint without
# one was written before it, by an earlier arborparse (other settings a checkpoint lacks
# were at their defaults)
VERSIONED = ("features",)
WHY_NOTHING = "a model is written when an epoch ends with the best score so far"
EXTENDED = 3  # `Loop`'s extend: at most this many times the epochs asked for
# the checkpoints `Loop.finish` leaves to the `checkpoints_kept` around it, if any
_KEPT: ContextVar[list | None] = ContextVar("kept_checkpoints", default=None)
# the seconds a training has taken so far, all its runs together (`training_clock`)
_CLOCK: ContextVar[Callable[[], float] | None] = ContextVar("training_clock", default=None)


class TrainingInterrupted(KeyboardInterrupt):
    """Training was interrupted; `epoch` (or None) is the best finished epoch, saved in
    `path` when one was given; `message`, when given, says what happened instead (a
    pipeline's stage before or after the parser's epochs). A KeyboardInterrupt, as the
    Ctrl-C it stands for: a caller's ``except Exception`` does not swallow it."""

    def __init__(self, epoch: int | None, path, checkpoint=None, message: str | None = None):
        self.epoch = epoch
        self.path = path
        if message is None and epoch is None:
            message = ("training interrupted before the first epoch ended: nothing was "
                       f"written ({WHY_NOTHING})")
        elif message is None and path is None:
            message = (f"training interrupted; the best epoch so far was {epoch}, saved "
                       "nowhere: give arborparse.train a path (a trainer's fit, save_best) "
                       "to keep the best epoch in a file")
        elif message is None:
            message = f"training interrupted; {path} holds epoch {epoch}, the best so far"
        if checkpoint is not None:
            message += (f"; {checkpoint} holds the last finished epoch: continue with resume "
                        "(--resume)")
        super().__init__(message)


class Diverged(ArborparseError):
    """Training diverged (its loss or scores became infinite or NaN) in `epoch`."""

    def __init__(self, epoch: int, what: str):
        self.epoch = epoch
        super().__init__(f"training diverged in epoch {epoch}: {what}; start again with a "
                         "smaller learning rate (nothing of this epoch was saved)")


COMPILING_SAID = 1.0  # seconds of compiling in an epoch from which its line says so


@contextmanager
def stopwatch():
    """Time a stretch of training (an epoch): yields a dict that holds, once the stretch
    ends, its wall ``seconds`` and, of them, the seconds numba spent ``compiling`` kernels
    (their first use on this install: later runs load them from numba's cache), so that
    a first epoch's line can say why it was slow and give its rate without them."""
    from numba.core.event import TimingListener, install_listener  # numba: for training

    took = {}
    start = time.perf_counter()
    with install_listener("numba:compile", TimingListener()) as compiling:
        yield took
    took["seconds"] = time.perf_counter() - start
    took["compiling"] = compiling.duration if compiling.done else 0.0


def compiling_said(took: dict) -> str:
    """What an epoch's line says of `stopwatch`'s compiling seconds: nothing below
    `COMPILING_SAID`."""
    return f" ({took['compiling']:.1f}s of it compiling, once per install)" \
        if took["compiling"] >= COMPILING_SAID else ""


@contextmanager
def interrupt_says(message: str, epoch: int | None = None, path=None):
    """An interrupt (Ctrl-C, SIGTERM) inside the block becomes `TrainingInterrupted` with
    `message` (`epoch` and `path`: the best epoch and where it is saved, if any; the
    checkpoint kept for resuming, `kept_checkpoint`, named too); one already said (a
    trainer's, which `interrupt_of` would also see) passes unchanged."""
    try:
        yield
    except TrainingInterrupted:
        raise
    except BaseException as err:
        if interrupt_of(err) is not None:
            raise TrainingInterrupted(epoch, path, kept_checkpoint(), message=message) \
                from None
        raise


@contextmanager
def checkpoints_kept():
    """Inside the block a training whose epochs end keeps its checkpoint (`Loop.finish`
    adds it to the list this yields) until the block ends: removed then, also where an
    error ends it, and kept where an interrupt does, so that what a pipeline does after the
    parser's epochs (the decoder and labeler chosen, the sentence ends weighed) is resumed
    too. Each thread and task has its own."""
    kept: list = []
    token = _KEPT.set(kept)
    interrupted = False
    try:
        yield kept
    except BaseException as err:
        interrupted = interrupt_of(err) is not None
        raise
    finally:
        _KEPT.reset(token)
        for path in kept if not interrupted else ():
            if os.path.exists(path):
                os.remove(path)


@contextmanager
def training_clock(seconds: Callable[[], float]):
    """Inside the block each checkpoint records `seconds()`, the seconds the training has
    taken up to its epoch (the runs before a resume's too), for a resumed run to go on
    from (`checkpoint_seconds`)."""
    token = _CLOCK.set(seconds)
    try:
        yield
    finally:
        _CLOCK.reset(token)


def checkpoint_seconds(path) -> float | None:
    """The training's seconds up to the last finished epoch of the checkpoint at `path`, as
    `training_clock` had it; None where the checkpoint records none."""
    from arborparse.io import model_files

    loop = model_files.header(path).get("loop")
    seconds = loop.get("seconds") if isinstance(loop, dict) else None  # else refused later
    return float(seconds) if isinstance(seconds, (int, float)) and \
        not isinstance(seconds, bool) and math.isfinite(seconds) and seconds >= 0 else None


def kept_checkpoint() -> str | None:
    """The checkpoint a finished training keeps for `checkpoints_kept`, if any."""
    return next((path for path in _KEPT.get() or () if os.path.exists(path)), None)


def save_parser(parser, save_best, record: dict | None = None) -> None:
    """Save `parser` to `save_best`: a path, or a callable taking the parser and the
    record of the epoch it comes from."""
    if callable(save_best):
        save_best(parser, record or {})
    else:
        parser.save(save_best)


@contextmanager
def _uninterrupted():
    """Ctrl-C and SIGTERM held back until the block ends (POSIX, the main thread; elsewhere
    nothing is held back)."""
    if not hasattr(signal, "pthread_sigmask") or \
            threading.current_thread() is not threading.main_thread():
        yield
        return
    held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)


def interrupt_of(err: BaseException) -> KeyboardInterrupt | None:
    """The KeyboardInterrupt that `err` is, or that compiled code it interrupted wrapped in
    another error (numba turns it into a SystemError); None for any other error."""
    while err is not None:
        if isinstance(err, KeyboardInterrupt):
            return err
        err = err.__cause__ or err.__context__
    return None


def keeps_best(fit):
    """Decorate a trainer's ``fit(self, train, dev=None, save_best=None)``."""

    @functools.wraps(fit)
    def wrapper(self, train, dev=None, save_best=None):
        import numpy as np

        self.best_epoch_, self.history_ = None, []
        caught = {}  # numpy's floating-point warnings, given after the training: a
        # training that diverges says so in one line, without them before it (numpy's
        # errstate holds in this thread: a pool's threads, or Dask's workers, warn as ever)
        try:
            with np.errstate(over="call", divide="call", invalid="call",
                             call=lambda kind, _: caught.setdefault(kind)):
                trained = fit(self, train, dev, save_best)
            for kind in caught:
                warn(f"{kind} encountered in training", RuntimeWarning)
            return trained
        except BaseException as err:
            if interrupt_of(err) is not None:
                path = getattr(save_best, "path", save_best)
                checkpoint = getattr(self, "checkpoint", None)
                if checkpoint is not None and not os.path.exists(checkpoint):
                    checkpoint = None
                raise TrainingInterrupted(self.best_epoch_, path, checkpoint) from None
            if isinstance(err, ValueError):
                from arborparse.trees.scores import NonFiniteScores  # numba: not at start-up

                if isinstance(err, NonFiniteScores):
                    history = self.history_
                    err = Diverged(history[-1]["epoch"] + 1 if history else 1,
                                   "its scores became infinite or NaN")
            if isinstance(err, Diverged):  # resuming would diverge again: nothing to resume
                checkpoint = getattr(self, "checkpoint", None)
                if checkpoint is not None and os.path.exists(checkpoint):
                    os.remove(checkpoint)
                raise err from None
            raise

    return wrapper


class Loop:
    """The epoch loop's bookkeeping for `trainer` (see the module docstring).

    Parameters
    ----------
    trainer : has ``epochs`` and ``progress``; gets ``history_`` and ``best_epoch_``
    dev : development sentences (None or False: the last epoch is kept; True: the caller
        gives each epoch's `scores` itself)
    save_best : a path or a callable (see `save_parser`)
    metric : the dev score that picks the best epoch; `report`: the scores in the line
    evaluate : the dev scores of a parser (default: `arborparse.eval.evaluate` of its parse)
    patience : stop after this many epochs without a better score (None: never)
    extend : with dev, go on past the trainer's epochs while the best epoch is one of the
        last `extend` (0: never), up to `EXTENDED` times the epochs
    on_best : called with a new best parser and its record (its dev scores); returns
        entries for the record (a temperature fitted on dev, say)
    checkpoint, settings : where the trainer's state goes after every epoch, and the
        options a resumed run must share (`FamilyOptions.to_dict`); `may_change` names
        those it may change
    resume : continue from `checkpoint`
    name : prefixes the lines (``upos epoch 3/10 ...``); `unit`: what the bar counts
    lead : False in the other processes of a data-parallel run: they neither evaluate,
        print, save nor checkpoint, and `agree` (process 0's decision to stop) is asked
    """

    def __init__(self, trainer, dev=None, save_best=None, *, metric: str = "LAS",
                 report: tuple[str, ...] = ("UAS", "LAS"), evaluate: Callable | None = None,
                 patience: int | None = None, extend: int = 0,
                 on_best: Callable | None = None,
                 checkpoint=None, settings: dict | None = None, may_change=(),
                 resume: bool = False, name: str = "", unit: str = "sent", lead: bool = True,
                 agree: Callable[[bool], bool] = bool):
        self.trainer = trainer
        self.epochs = trainer.epochs
        self.progress = trainer.progress and lead
        self.dev = dev
        self.save_best = save_best
        self.metric, self.report = metric, report
        self._evaluate = evaluate
        self.patience = patience
        self.extend = extend
        self.on_best = on_best
        self.checkpoint = checkpoint
        self.settings = settings or {}
        self.may_change = set(may_change)
        self.resuming = resume
        self.name = f"{name} " if name else ""
        self.unit = unit
        self.lead, self.agree = lead, agree
        self.first, self.best_score, self.waited = 1, -float("inf"), 0
        trainer.history_, trainer.best_epoch_ = [], None
        if resume and checkpoint is None:
            raise ArborparseError("resume needs a checkpoint path")

    @property
    def history(self) -> list[dict]:
        return self.trainer.history_

    # ------------------------------------------------------------------ the loop

    def __iter__(self):
        epoch = self.first
        while epoch <= self.epochs or self.extend:  # past the epochs: process 0 decides
            more = epoch <= self.epochs or (self.dev and self.waited < self.extend and
                                            epoch <= EXTENDED * self.epochs)
            stop = not more or (self.dev is not None and self.patience is not None and
                                self.waited >= self.patience)
            if self.agree(stop):
                return
            yield epoch
            epoch += 1

    def _of(self, epoch: int) -> str:
        """``3/10``, or past the epochs asked for, ``12 (past 10: a best in the last 3)``."""
        return f"{epoch}/{self.epochs}" if epoch <= self.epochs else \
            f"{epoch} (past {self.epochs}: a best in the last {self.extend})"

    def bar(self, epoch: int, items: Iterable) -> Iterable:
        """`items` with a progress bar (on a terminal, when progress is on)."""
        from tqdm import tqdm  # here: the command line imports this module to parse too

        bar = tqdm(items, desc=f"{self.name}epoch {self._of(epoch)}", unit=self.unit,
                   disable=None if self.progress else True, file=sys.stderr, leave=False)
        if self.history and self.metric in self.history[-1]:
            last = self.history[-1]
            bar.set_postfix_str("dev " + "  ".join(f"{k} {last[k]:.2f}" for k in self.report
                                                   if k in last))
        return bar

    def scores(self, parser) -> dict:
        """The dev scores of `parser`."""
        if self._evaluate is not None:
            return self._evaluate(parser)
        from arborparse.eval import evaluate

        # a parser of several roots is scored on dev as it parses (the official script
        # refuses CoNLL-U trees of several roots)
        return evaluate(self.dev, parser.parse(self.dev),
                        multi_root=getattr(parser, "single_root", True) is False)

    def end(self, epoch: int, record: dict, summary: str, parser=None, scores=None,
            keep: Callable[[], None] | None = None,
            state: Callable[[], tuple[dict, dict]] | None = None) -> bool:
        """The epoch is over: score `parser` on dev (or take `scores`); if it is the best
        so far, call `keep` (the trainer keeps what it needs of this epoch) and save the
        parser; append the record to the history, write the checkpoint (`state` gives the
        trainer's (header, arrays)), print one line (with the seconds all this took, which
        the epoch's own in `summary` do not count). True when this epoch is best."""
        began = time.perf_counter()
        for key, value in record.items():
            if isinstance(value, float) and not math.isfinite(value):
                raise Diverged(epoch, f"its {key.replace('_', ' ')} is {value}")
        best = False
        if self.lead:
            score = epoch
            if self.dev:
                scores = self.scores(parser) if scores is None else scores
                record.update({k: scores[k] for k in self.report if k in scores})
                score = scores[self.metric]
            best = score > self.best_score
            if best:
                self.best_score, self.waited = score, 0
                if self.on_best is not None and self.dev:
                    record.update(self.on_best(parser, record))
                    # the parser kept may score otherwise (a tag reach dropped): later
                    # epochs must beat what is kept
                    self.best_score = record.get(self.metric, score)
            else:
                self.waited += 1
        self.history.append({"epoch": epoch, **record})
        if best:
            if keep is not None:
                keep()
            if parser is not None:
                self.trainer.parser_ = parser
            with _uninterrupted():  # the file and the epoch said to be in it change together
                if self.save_best is not None:
                    save_parser(parser, self.save_best, self.history[-1])
                self.trainer.best_epoch_ = epoch
        if self.checkpoint is not None and state is not None and self.lead:
            with _uninterrupted():  # written whole, its temporary file gone, then stop
                self._save_checkpoint(epoch, *state())
        if self.progress:
            line = f"{self.name}epoch {self._of(epoch)}  {summary}"
            if self.dev:
                line += "  dev " + "  ".join(f"{k} {record[k]:.2f}" for k in self.report
                                             if k in record)
                line += "  (best)" if best else ""
                if best and "temperature" in record:
                    line += f"  temperatures: heads {record['temperature']:.3g}" + (
                        f", labels {record['label_temperature']:.3g}"
                        if "label_temperature" in record else "")
                if best and record.get("tag_reach_dropped"):  # a linear parser's
                    line += "  (tag reach dropped: dev LAS higher without it)"
            after = time.perf_counter() - began
            if after >= 0.1:  # dev scored, temperatures fitted, files written
                line += f"  (+{after:.1f}s: dev, files)"
            say(line)
        return best

    def finish(self) -> None:
        """Training is over: the checkpoint goes (or waits for the end of
        `checkpoints_kept`); past the epochs asked for, a line says why it stopped where
        it did."""
        if self.checkpoint is not None and self.lead and os.path.exists(self.checkpoint):
            kept = _KEPT.get()
            if kept is None:
                os.remove(self.checkpoint)
            else:
                kept.append(self.checkpoint)
        last = self.history[-1]["epoch"] if self.history else 0
        if self.progress and self.extend and last > self.epochs:
            say(f"{self.name}went on past epoch {self.epochs} while the best dev "
                f"{self.metric} came in the last {self.extend} epochs: " +
                (f"stopped at epoch {last}, {self.waited} epochs after the best"
                 if self.waited >= self.extend else
                 f"stopped at epoch {last}, {EXTENDED} times the epochs asked for, with the "
                 "best still recent (give more epochs to go on)"))

    # ------------------------------------------------------------------ checkpoints

    def _save_checkpoint(self, epoch: int, header: dict, arrays: dict) -> None:
        from arborparse.io import model_files

        loop = {"epoch": epoch, "best_score": self.best_score, "waited": self.waited,
                "best_epoch": self.trainer.best_epoch_, "history": self.history}
        clock = _CLOCK.get()
        if clock is not None:
            loop["seconds"] = round(clock(), 1)
        model_files.save(self.checkpoint, CHECKPOINT, CHECKPOINT_VERSION,
                         {"settings": self.settings, "loop": loop, "trainer": header},
                         arrays, force=True)  # the training's own file

    def resume(self):
        """With ``resume``: the trainer's (header, arrays) from the checkpoint, the loop
        set to go on after its last epoch; refuses a checkpoint of other settings, naming
        them. Without: None."""
        if not self.resuming:
            return None
        from arborparse.io import model_files

        if not os.path.exists(self.checkpoint):
            raise ArborparseError(f"{self.checkpoint}: no checkpoint to resume from (one is "
                                  "written after every epoch and removed when training "
                                  "ends)")
        header, arrays = model_files.load(self.checkpoint, CHECKPOINT, CHECKPOINT_VERSION)
        theirs = header.get("settings") or {}
        differ = sorted(k for k in set(theirs) | set(self.settings)
                        if k not in self.may_change and theirs.get(k) != self.settings.get(k))
        absent = [k for k in differ if k in VERSIONED and k not in theirs]
        if absent:
            raise ArborparseError(f"{self.checkpoint}: the checkpoint was written by an earlier "
                                  f"arborparse, without {', '.join(absent)}: train again "
                                  "without resume")
        if differ:
            shown = ", ".join(f"{k} {theirs.get(k)!r} (now {self.settings.get(k)!r})"
                              for k in differ)
            raise ArborparseError(f"{self.checkpoint}: the checkpoint was trained with other "
                                  f"options: {shown}; resume with the same ones")
        try:
            loop = header["loop"]
            self.first = int(loop["epoch"]) + 1
            self.best_score, self.waited = float(loop["best_score"]), int(loop["waited"])
            self.trainer.history_[:] = loop["history"]
            self.trainer.best_epoch_ = loop["best_epoch"]
            trainer = header["trainer"]
        except (KeyError, TypeError, ValueError) as err:
            raise ArborparseError(f"{self.checkpoint}: a damaged checkpoint ({err}); start "
                                  "again without resuming") from None
        reach = EXTENDED if self.extend and self.dev else 1  # how far past the epochs
        if self.first - 1 > reach * self.epochs:  # nothing would run, and the model would
            # record fewer epochs than it passed
            raise ArborparseError(f"{self.checkpoint}: the interrupted training finished "
                                  f"{self.first - 1} epochs, more than epochs "
                                  f"{self.epochs} allows: resume with epochs (--epochs) of at "
                                  f"least {-(-(self.first - 1) // reach)}, or keep the model "
                                  "file as it is")
        if self.lead:
            say(f"{self.name}resuming after epoch {self.first - 1} (the best so far: "
                f"epoch {self.trainer.best_epoch_})")
        return trainer, arrays


def say(line: str) -> None:
    """Write a line on stderr above the progress bars, in one write with its newline (an
    interrupt cannot fall between line and newline)."""
    from tqdm import tqdm

    tqdm.write(line + "\n", file=sys.stderr, end="")
