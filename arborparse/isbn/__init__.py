"""The latent-variable generative parser of Titov & Henderson (2007): an Incremental Sigmoid
Belief Network over arc-eager decisions.

`transitions` (the arc-eager system, masks, oracle), `vocab` (what is generated and read),
`history` (the states of a derivation: relations and explicit inputs), `network` (the ISBN
under the feed-forward or mean-field approximation, in PyTorch), `search` (beam search),
`train` (`ISBNTrainer`), `parser` (`ISBNParser`: parse, probabilities, model files).
"""
