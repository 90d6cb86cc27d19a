"""Two trained parsers as one: each word's head chosen from the mixture of their head
marginals (the tree of the most expected correct heads under it), each label from the
mixture of their label distributions under that tree, the weight chosen on dev data.

- `options`: `EnsembleOptions`, what an ensemble offers when it parses (it is not trained)
- `parser`: `EnsembleParser`, the family's face (parse, save, load)
- `combine`: `combine`, two models made one, the weight chosen on dev (``arborparse
  combine``)
"""
