"""Family 3: a neural scorer trained with the papers' tree objectives.

An encoder (word embeddings, a character CNN per word, a multi-layer BiLSTM over the
sentence) feeds biaffine arc and label scorers (Dozat & Manning 2017) and joint heads for
UPOS, XPOS, FEATS and lemma edit scripts, so that one model tags and parses. The arc scores
are trained with the non-projective tree CRF (Matrix-Tree log Z and marginals from
`arborparse.trees.batch`), the projective tree CRF (inside-outside), structured max-margin
(cost-augmented MST) or local head selection; see `objectives`.

- `vocab`: the words, characters, tags, edit scripts and relations of a treebank
- `network`: the encoder, the scorers and the tagging heads (a torch module)
- `transformer`: a frozen pretrained transformer from a local directory, as word vectors
- `objectives`: the arc losses and decoding
- `parser`: `NeuralParser`, the family's face (parse, save, load)
- `train`: `NeuralTrainer` (Adam, early stopping, checkpoints that resume bit for bit)
"""
