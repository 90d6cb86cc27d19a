"""The linear family's training options: one table (`LinearOptions`), read by
`arborparse.train`, the trainers' defaults and the command line."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from arborparse.options import Capabilities, FamilyOptions, option
from arborparse.training import EXTENDED

ONLINE = ("perceptron", "mira", "mira-kbest", "mira-factored")
LATENT = ("latent", "latent-lbfgs")
TRAINERS = ONLINE + ("loglinear", "loglinear-sgd", "eg") + LATENT
DISTRIBUTED = ONLINE + ("loglinear",)
DECODERS = ("mst", "eisner")
SECOND_ORDER = ("siblings", "siblings+grandparents")
SECOND_ORDER_TRAINERS = ("perceptron", "mira", "loglinear", "loglinear-sgd", "eg")
MARGINAL_TRAINERS = ("loglinear", "loglinear-sgd", "eg")  # at order 2: projective training
SMALL = 5000  # training sentences up to which the default is order 2 with grandparents
GRAND_WORDS = 150  # longer sentences are parsed without the grandparent parts (O(n⁴))
SIBLING_WORDS = 400  # longer ones from their arcs alone (the parts take 18 bytes per n³)
DECODER_MARGIN = 0.1  # dev LAS points by which eisner must beat mst to be kept (`OnDev`)


@dataclass(frozen=True)
class LinearOptions(FamilyOptions):
    """The edge-factored linear model (McDonald et al. 2005; Koo et al. 2007; Smith & Smith
    2007) and its trainers."""

    family = "linear"
    components = ("tokenizer", "tagger", "lemmatizer", "parser")
    parses = Capabilities(marginals=True, mbr=True, kbest=True, max_z=True, threads=True,
                          decoders=DECODERS)

    @classmethod
    def by_size(cls, sentences: int, given: dict) -> dict:
        """Order 2 with siblings and grandparents up to `SMALL` training sentences for the
        perceptron and MIRA (the default), where the other options given allow it: there it
        trains in minutes, and its parts add what little data leaves out (dev LAS, the parser
        on gold tags: +0.51 mean over 10 treebanks of 400 to 1,230 sentences against siblings
        alone, 7 of them up; +1.53 and +1.30 on two of 3,400 against order 1); above, order
        1, which trains in a half to a third of the time and parses more than twice as fast
        (and gives k-best trees). The trainers of marginals stay at order 1 (at order 2 they
        train over projective trees)."""
        from arborparse.errors import ArborparseError

        if sentences > SMALL or given.get("order") is not None or \
                given.get("trainer") not in (None, "perceptron", "mira"):
            return {}
        sized = {"order": 2, "second_order": SECOND_ORDER[1]}
        try:
            cls.of({**sized, **{k: v for k, v in given.items() if v is not None}})
        except ArborparseError:  # exact features, or options order 2 refuses
            return {}
        return sized

    @classmethod
    def of(cls, given: dict) -> LinearOptions:
        """As `FamilyOptions.of`; second_order given without order asks for order 2, and an
        option given that the others make idle is refused: second_order at order 1,
        hash_bits with exact_features."""
        from arborparse.errors import ArborparseError

        if given.get("second_order") is not None and given.get("order") is None:
            given = {**given, "order": 2}
        table = super().of(given)
        if given.get("second_order") is not None and table.order == 1:
            raise ArborparseError("second_order applies to order 2 only: give order 2, or "
                                  "leave out second_order")
        if given.get("hash_bits") is not None and table.exact_features:
            raise ArborparseError("hash_bits sizes the hashed features, and exact_features "
                                  "hashes none: leave out one of them")
        return table

    @classmethod
    def offers(cls, header: dict) -> Capabilities:
        """Max-z decoding only with hidden clusters; no k-best trees at order 2."""
        clusters, order = header.get("clusters", 1) > 1, header.get("order", 1) == 1
        why_not = (("kbest", "k-best trees come from order-1 models, and this one is order "
                    "2 (asked for, or arborparse train's default up to 5,000 training "
                    "sentences): train with order 1 for them, arborparse train --order 1"),) \
            * (not order) + \
            (("decode_as=max-z", "max-z decoding needs hidden arc clusters (a model "
              "trained with --trainer latent or latent-lbfgs)"),) * (not clusters)
        return dataclasses.replace(cls.parses, max_z=clusters, kbest=order, why_not=why_not)

    trainer: str = option(
        "mira", str, "Online large-margin trainers; conditional log-linear training "
        "(loglinear: batch L-BFGS; loglinear-sgd: online); eg: max-margin by exponentiated "
        "gradient; latent: log-linear with hidden arc clusters (online; latent-lbfgs: batch).",
        choices=TRAINERS)
    decoder: str | None = option(None, str, "Decoder for parsing (mst: non-projective; "
                                 "eisner: projective). Default: with --dev, the one whose "
                                 "trees score the higher dev LAS after training (mst unless "
                                 f"eisner's is more than {DECODER_MARGIN:g} points higher; "
                                 "chosen_on_dev says which), else mst.", choices=DECODERS)
    train_decoder: str | None = option(None, str, "Decoder during training (default: "
                                       "--decoder, or mst).", choices=DECODERS)
    order: int = option(1, int, "1: arc features; 2: also features of second-order parts "
                        "(--second-order), decoded exactly by eisner (projective) or "
                        "approximately by mst; loglinear and eg then train over "
                        "projective trees (order 2: perceptron, mira, loglinear, "
                        "loglinear-sgd, eg). arborparse train's default: 2 with siblings "
                        "and grandparents up to 5,000 training sentences (perceptron and "
                        "mira, where the other options allow it), else 1.", low=1, high=2)
    second_order: str = option(SECOND_ORDER[0], str, "The parts of --order 2: siblings "
                               "(McDonald & Pereira 2006; with --order 2 given, the default), "
                               "or siblings and grandparents (Koo & Collins 2010; the default "
                               "with the order by size), whose best tree and marginals take "
                               f"O(n⁴) time: a sentence of more than {GRAND_WORDS} words is "
                               "parsed without them (and one of more than "
                               f"{SIBLING_WORDS} from its arcs alone). Given without "
                               "--order, it asks for --order 2.",
                               choices=SECOND_ORDER)
    labeler: bool = option(True, bool, "With --dev: label each decided tree again with a "
                           "second classifier that reads the tree (the word's children, its "
                           "siblings, the labels of its head and of the siblings nearer it), "
                           "its scores added to the model's with a weight chosen on dev (or "
                           "left out where dev says the model's labels do as well).",
                           may_change=True)
    tag_reach: bool = option(True, bool, "Leave out of parsing the arcs whose pair of tags "
                             "(UPOS of the head and of the word) never stood that far apart "
                             "in that direction in the training trees (arcs between "
                             "neighbours never): English-EWT parses in a sixth less time at "
                             "the same accuracy. With --dev, kept unless dev LAS is more "
                             "than 0.1 points higher without it (chosen_on_dev says which).")
    multi_root: bool = option(False, bool, "Allow several words attached to the root "
                              "(default: exactly one).")
    epochs: int = option(10, int, "Passes over the training data (loglinear, latent-lbfgs: "
                         "L-BFGS iterations); with --dev the best one is kept, and the "
                         "perceptron and MIRA may go on past them (--extend; 0: exactly "
                         "these).", low=1,
                         may_change=True)
    extend: int = option(3, int, "With --dev: after --epochs passes, go on while the best "
                         f"dev LAS came in the last N (at most {EXTENDED} times --epochs in "
                         "all; 0: stop at --epochs).", low=0, trainers=(*ONLINE, "eg"),
                         may_change=True)
    seed: int = option(0, int, "Seed of the shuffling (and of the initial weights where "
                       "they are random).", low=0)
    hash_bits: int = option(23, int, "log2 of the hashed weight vector's size.", low=10,
                            high=31)
    exact_features: bool = option(False, bool, "Index the gold trees' features exactly "
                                  "instead of hashing.", trainers=ONLINE)
    k: int = option(5, int, "Constraints of mira-kbest (its k best trees in each update; "
                    "not parse's k best).", low=1, trainers=("mira-kbest",),
                    flags=("-k", "--kbest"))
    C: float | str | None = option(
        None, float, "MIRA: bound on the steps (default: none); log-linear, latent and eg: "
        "weight of the loss against ½‖w‖², or 'auto' (the default with --dev): chosen on dev "
        "among 0.1, 0.3, 1 (eg: 0.001, 0.003, 0.01); without --dev 0.3 (eg: 0.003), the "
        "best of those on three UD treebanks.", low=0.0, auto=True,
        trainers=("mira", "mira-kbest", "mira-factored", "loglinear", "loglinear-sgd", "eg")
        + LATENT, flags=("-C",))
    learning_rate: float | None = option(
        None, float, "Initial learning rate: loglinear-sgd and latent (default 0.1); eg "
        "(default 1/C, as Koo et al.).", low=0.0, trainers=("loglinear-sgd", "eg", "latent"))
    average: bool = option(True, bool, "eg: keep the mean of the weights of every step so "
                           "far (off: the weights at the end of the pass).", trainers=("eg",))
    clusters: int = option(2, int, "Hidden clusters per arc.", low=1, trainers=LATENT)
    init_noise: float = option(0.01, float, "Standard deviation of the initial weights "
                               "(seeded by --seed).", low=0, trainers=LATENT)
    squeeze: bool = option(False, bool, "Drop the arc features pairing both words and the "
                           "POS four-grams.", trainers=LATENT)
    scheduler: str | None = option(
        None, str, "Train on a Dask cluster ('local' or tcp://HOST:PORT), the training data "
        "cut into --shards: the perceptron and MIRA by iterative parameter mixing, loglinear "
        "(L-BFGS) with its gradient summed over the shards (default: none, this process "
        "alone).", trainers=DISTRIBUTED,
        may_change=True)
    shards: int | None = option(None, int, "With --scheduler: parts of the training data "
                                "(default: one per worker).", low=1, trainers=DISTRIBUTED)
    workers: int | None = option(None, int, "With --scheduler local: worker processes "
                                 "(default: one per core).", low=1, trainers=DISTRIBUTED,
                                 may_change=True)

    def __post_init__(self):
        super().__post_init__()
        from arborparse.errors import ArborparseError

        if self.scheduler is None and (self.shards or self.workers):
            raise ArborparseError("shards and workers apply to training on a cluster: give "
                                  "scheduler too")
        if self.workers and self.scheduler not in (None, "local"):
            raise ArborparseError("workers applies to scheduler 'local' only (a running "
                                  "scheduler has its own workers)")
        if self.order == 1 and self.second_order != SECOND_ORDER[0]:
            raise ArborparseError("second_order applies to order 2 only: give order 2")
        if self.order == 2:
            self._check_second_order()
        if self.C == "auto" and self.trainer in ONLINE:
            raise ArborparseError(f"C 'auto' does not apply to the trainer {self.trainer} "
                                  "(give a number, or nothing for no bound)")

    @property
    def calibrated_on_dev(self) -> bool:
        """Every trainer but the log-linear ones, whose models are distributions."""
        return self.trainer not in ("loglinear", "loglinear-sgd") + LATENT

    def _check_second_order(self):
        """Refuse, in one line, what order 2 cannot honour."""
        from arborparse.errors import ArborparseError

        if self.trainer not in SECOND_ORDER_TRAINERS:
            raise ArborparseError(f"order 2 trains with {', '.join(SECOND_ORDER_TRAINERS)}, "
                                  f"not {self.trainer} (k-best and factored MIRA and hidden "
                                  "clusters are first-order)")
        if self.exact_features:
            raise ArborparseError("exact_features is first-order only (order 2 hashes its "
                                  "features)")
        if self.trainer in MARGINAL_TRAINERS and self.train_decoder == "mst":
            raise ArborparseError(f"the {self.trainer} trainer at order 2 trains on projective "
                                  "trees (second-order marginals are projective): leave out "
                                  "train_decoder, or give eisner")
