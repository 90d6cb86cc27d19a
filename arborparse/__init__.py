"""arborparse: dependency parsing built on exact inference over trees."""

from arborparse.errors import ArborparseError, TreebankFormatError

__version__ = "0.1.0"

__all__ = ["ArborparseError", "TreebankFormatError", "__version__"]
