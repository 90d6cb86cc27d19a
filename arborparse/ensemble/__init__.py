"""Two trained parsers as one: each word's head chosen from the mixture of their head
marginals (the tree of the most expected correct heads under it), each label from the
mixture of their label distributions under that tree, the weight chosen on dev data.

- `options`: `EnsembleOptions`, what its training takes and what an ensemble offers when
  it parses
- `train`: `train`, a linear pipeline and a neural parser trained and combined (``arborparse
  train --model-type ensemble``)
- `parser`: `EnsembleParser`, the family's face (parse, save, load)
- `combine`: `combine`, two models made one, the weight chosen on dev (``arborparse
  combine``)
"""
