"""The latent-variable generative parser of Titov & Henderson (2007): an Incremental Sigmoid
Belief Network over arc-eager decisions (`transitions`)."""
