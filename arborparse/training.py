"""What every family's trainer shares: the best model is kept as soon as it is best, and an
interrupted training (Ctrl-C, SIGTERM) says what it kept.

A trainer's ``fit(train, dev=None, save_best=None)`` updates ``best_epoch_`` whenever an
epoch is the best so far and, given `save_best` (a path, or a callable with a ``path``
that saves a parser its own way: inside a pipeline, say), saves that epoch's parser at
once (atomically; `save_parser`). Decorated with `keeps_best`, an interrupt becomes
`TrainingInterrupted`, which names the epoch kept and the file (and a trainer's
``checkpoint``, when it wrote one, to resume from).
"""

from __future__ import annotations

import functools
import os

from arborparse.errors import ArborparseError


class TrainingInterrupted(ArborparseError):
    """Training was interrupted; `epoch` (or None) is the best finished epoch, saved in
    `path` when one was given."""

    def __init__(self, epoch: int | None, path, checkpoint=None):
        self.epoch = epoch
        self.path = path
        if epoch is None:
            message = "training interrupted before the first epoch ended: no model was saved"
        elif path is None:
            message = f"training interrupted; the best epoch so far was {epoch}"
        else:
            message = f"training interrupted; {path} holds epoch {epoch}, the best so far"
        if checkpoint is not None:
            message += f"; {checkpoint} holds the last finished epoch: continue with --resume"
        super().__init__(message)


def save_parser(parser, save_best) -> None:
    """Save `parser` to `save_best`: a path, or a callable taking the parser."""
    if callable(save_best):
        save_best(parser)
    else:
        parser.save(save_best)


def is_interrupt(err: BaseException) -> bool:
    """True for KeyboardInterrupt, also when compiled code it interrupted wrapped it in
    another error (numba turns it into a SystemError)."""
    while err is not None:
        if isinstance(err, KeyboardInterrupt):
            return True
        err = err.__cause__ or err.__context__
    return False


def keeps_best(fit):
    """Decorate a trainer's ``fit(self, train, dev=None, save_best=None)``."""

    @functools.wraps(fit)
    def wrapper(self, train, dev=None, save_best=None):
        self.best_epoch_ = None
        try:
            return fit(self, train, dev, save_best)
        except BaseException as err:
            if is_interrupt(err):
                path = getattr(save_best, "path", save_best)
                checkpoint = getattr(self, "checkpoint", None)
                if checkpoint is not None and not os.path.exists(checkpoint):
                    checkpoint = None
                raise TrainingInterrupted(self.best_epoch_, path, checkpoint) from None
            raise

    return wrapper
