"""Tree transformations: projectivization."""

from arborparse.transforms.projectivize import is_projective, projectivize

__all__ = ["is_projective", "projectivize"]
