"""First-order feature templates (McDonald, Crammer & Pereira 2005) hashed into weight indices."""

from arborparse.features.tokens import TokenTable, encode
from arborparse.features.templates import (arc_features, indices, label_features, score_arcs,
                                           score_labels)

__all__ = ["TokenTable", "encode", "arc_features", "indices", "label_features", "score_arcs",
           "score_labels"]
