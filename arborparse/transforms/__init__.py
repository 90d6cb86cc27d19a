"""Tree transformations: projectivization (closest projective tree) and pseudo-projective
lifting with its inverse."""

from arborparse.transforms.projectivize import projectivize
from arborparse.transforms.pseudo_projective import ENCODINGS, lift, lower

__all__ = ["projectivize", "lift", "lower", "ENCODINGS"]
