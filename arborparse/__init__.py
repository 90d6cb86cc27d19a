"""arborparse: dependency parsing built on exact inference over trees.

`load(path)` reads any model file and returns its parser (`arborparse.pipeline`).
"""

from arborparse.errors import ArborparseError, TreebankFormatError
from arborparse.pipeline import load

__version__ = "0.1.0"

__all__ = ["ArborparseError", "TreebankFormatError", "load", "__version__"]
