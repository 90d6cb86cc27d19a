"""First-order feature templates (McDonald, Crammer & Pereira 2005) hashed into weight indices."""

from arborparse.features.templates import (
                                           arc_features,
                                           label_features,
                                           labeled_arc_indices,
                                           score_arcs,
                                           score_labels,
)
from arborparse.features.tokens import TokenTable, encode

__all__ = ["TokenTable", "encode", "arc_features", "label_features", "labeled_arc_indices",
           "score_arcs", "score_labels"]
