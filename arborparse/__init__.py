"""arborparse: dependency parsing built on exact inference over trees.

Two doors: `train(train, dev, family=..., **options)` trains a pipeline
(`arborparse.trainer`), `load(path)` reads any model file (`arborparse.pipeline`).
"""

from arborparse.errors import ArborparseError, TreebankFormatError
from arborparse.pipeline import Pipeline, load

__version__ = "0.2.0"

__all__ = ["ArborparseError", "TreebankFormatError", "Pipeline", "load", "train", "__version__"]


def __getattr__(name: str):
    """`train`, imported when it is first asked for: the trainer's imports (the progress
    bars among them) are a tenth of a second that parsing does not need."""
    if name == "train":
        from arborparse.trainer import train

        return train
    raise AttributeError(f"module 'arborparse' has no attribute {name!r}")


def __dir__():
    return sorted([*globals(), "train"])
