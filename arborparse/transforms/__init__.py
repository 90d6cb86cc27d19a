"""Tree transformations: projectivization (closest projective tree) and pseudo-projective
lifting with its inverse."""

from arborparse.transforms.projectivize import is_projective, projectivize
from arborparse.transforms.pseudo_projective import ENCODINGS, lift, lower

__all__ = ["is_projective", "projectivize", "lift", "lower", "ENCODINGS"]
