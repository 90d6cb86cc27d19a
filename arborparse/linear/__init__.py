"""Family 1: the edge-factored linear model of McDonald et al. (2005) and its trainers.

`tokens` and `templates` (MSTParser's first-order feature templates, compiled and hashed),
`model` (`LinearModel`: scores, expectations, model files), `parser` (`LinearParser`: parse,
marginals, MBR), and the trainers: `online` (perceptron, MIRA single-best, k-best and
factored; `hildreth` solves MIRA's k-constraint QP), `loglinear` (conditional log-linear
model by L-BFGS or SGD, with hidden arc clusters: Koo et al. 2007; Smith & Smith 2007),
`eg` (max-margin by exponentiated gradient, Koo et al. 2007); `common` holds what the
trainers share (gold data, epochs, the best-epoch bookkeeping).
"""
