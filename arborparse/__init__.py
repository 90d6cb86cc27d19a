"""arborparse: dependency parsing built on exact inference over trees.

Two doors: `train(train, dev, family=..., **options)` trains a pipeline
(`arborparse.trainer`), `load(path)` reads any model file (`arborparse.pipeline`).
"""

from arborparse.errors import ArborparseError, TreebankFormatError
from arborparse.pipeline import Pipeline, load
from arborparse.trainer import train

__version__ = "0.2.0"

__all__ = ["ArborparseError", "TreebankFormatError", "Pipeline", "load", "train", "__version__"]
