"""arborparse: dependency parsing built on exact inference over trees.

Two doors: `train(train, dev, family=..., **options)` trains a pipeline
(`arborparse.trainer`), `load(path)` reads any model file (`arborparse.pipeline`);
`combine(first, second, dev)` makes two trained models one (`arborparse.ensemble`).
"""

from arborparse.errors import ArborparseError, TreebankFormatError
from arborparse.pipeline import Pipeline, load

__version__ = "0.2.0"

__all__ = ["ArborparseError", "TreebankFormatError", "Pipeline", "load", "train", "combine",
           "__version__"]


def __getattr__(name: str):
    """`train`, and the subpackages (`arborparse.document`, `arborparse.render`, ...),
    imported when they are first asked for: the trainer's imports (the progress bars among
    them) are a tenth of a second that parsing does not need."""
    if name == "train":
        from arborparse.trainer import train

        return train
    if name == "combine":
        from arborparse.ensemble.combine import combine

        return combine
    if not name.startswith("_"):
        import importlib

        try:
            return importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as e:
            if e.name != f"{__name__}.{name}":  # the subpackage needs what is not installed
                raise
    raise AttributeError(f"module 'arborparse' has no attribute {name!r}")


def __dir__():
    return sorted([*globals(), "train", "combine"])
