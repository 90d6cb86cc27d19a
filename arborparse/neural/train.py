"""`NeuralTrainer`: the network trained with a tree objective and the tagging heads' cross
entropy, by Adam (β = 0.9, 0.9; the rate decays by 0.75 every `decay_steps`, 5,000 by
default, as Dozat & Manning's), with dropout and word dropout, gradient clipping, batches of
sentences of similar length, early stopping on development LAS and the best epoch kept as
soon as it is best.

After every epoch a checkpoint (`checkpoint`: weights, Adam's state, the step, the best
epoch so far and its weights) is written atomically; ``resume=True`` continues from it
exactly where it stopped: every epoch seeds its own shuffling and dropout from the seed and
its number, so a resumed run gives, on the same machine, the same model bit for bit. The
checkpoint is removed when training ends.

Data-parallel training: started by ``torchrun`` (which sets ``WORLD_SIZE`` and ``RANK``),
every process joins the process group (gloo on the CPU, NCCL on GPUs), the network is
wrapped in `DistributedDataParallel`, and the processes take turns through the same
shuffled batches (the batches of an epoch that do not divide evenly among them are left
for later epochs), their gradients averaged at every step. Process 0 alone evaluates on
dev, prints, writes checkpoints and saves the model; it tells the others when to stop.
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import replace

import numpy as np
import torch
from tqdm import tqdm

from arborparse.errors import ArborparseError, warn
from arborparse.eval import evaluate
from arborparse.io.conllu import Sentence
from arborparse.io.validate import MULTI_ROOT, check_tree
from arborparse.neural.network import HEADS, Batch, Network
from arborparse.neural.objectives import OBJECTIVES, arc_loss, word_mask
from arborparse.neural.options import PROJECTIVE, NeuralOptions
from arborparse.neural.parser import NeuralParser
from arborparse.neural.vocab import ROOT, UNKNOWN, Vocabulary
from arborparse.training import Loop, keeps_best, save_parser
from arborparse.transforms import projectivize

CLIP = 5.0
SIB_DIM = 50  # the sibling MLPs of crf2o (SuPar: 100; smaller keeps the CPU time near crf's)
D = NeuralOptions()  # the defaults


def read_vectors(path, vocab: Vocabulary) -> tuple[int, dict[int, np.ndarray]]:
    """(dimension, word id -> vector) from a word-vector file in the common text format
    (``word v1 ... vd`` per line, an optional ``count dimension`` first line); words are
    matched lowercased, the first vector of a word wins."""
    index = {w: i for i, w in enumerate(vocab.words)}
    found, dim = {}, None
    with open(path, encoding="utf-8", errors="replace") as handle:
        for lineno, line in enumerate(handle, 1):
            parts = line.rstrip("\n").rstrip().split(" ")
            if lineno == 1 and len(parts) == 2 and all(p.isdigit() for p in parts):
                continue
            try:
                vector = np.array(parts[1:], dtype=np.float32)
            except ValueError:
                raise ArborparseError(f"{path}:{lineno}: not a word vector line (a word and "
                                      "numbers separated by spaces)") from None
            if dim is None:
                dim = len(vector)
            if len(vector) != dim or dim == 0:
                raise ArborparseError(f"{path}:{lineno}: {len(vector)} numbers, the file's "
                                      f"vectors have {dim}")
            i = index.get(parts[0].lower())
            if i is not None and i not in found:
                found[i] = vector
    if dim is None:
        raise ArborparseError(f"{path}: no word vectors in the file")
    return dim, found


class _Loss(torch.nn.Module):
    """The training loss as a module's forward, as DistributedDataParallel needs it."""

    def __init__(self, trainer: NeuralTrainer, net: Network):
        super().__init__()
        self.trainer, self.net = trainer, net

    def forward(self, batch: Batch):
        return self.trainer.loss(self.net, batch)


def _device() -> torch.device:
    """Where this process trains: GPU number LOCAL_RANK where this machine has a GPU for
    each of its processes (torchrun's LOCAL_WORLD_SIZE; one without torchrun), else the
    CPU."""
    processes = int(os.environ.get("LOCAL_WORLD_SIZE", "1"))
    if not torch.cuda.is_available():
        return torch.device("cpu")
    if torch.cuda.device_count() >= processes:
        return torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0")))
    warn(f"training on the CPU: {processes} processes on this machine and "
         f"{torch.cuda.device_count()} GPU(s) for them; start at most one process "
         "per GPU to train on the GPUs")
    return torch.device("cpu")


def _process_group(device: torch.device):
    """(rank, world size), joining the process group when started by torchrun (NCCL
    between GPUs, else gloo), `device` this process's (`_device`)."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world == 1:
        return 0, 1
    import torch.distributed as dist

    if not dist.is_initialized():
        if device.type == "cuda":
            torch.cuda.set_device(device)
        dist.init_process_group("nccl" if device.type == "cuda" else "gloo")
    return dist.get_rank(), world


def _agree(flag: bool, world: int, device: torch.device) -> bool:
    """Process 0's `flag`, the same in every process."""
    if world == 1:
        return bool(flag)
    import torch.distributed as dist

    value = torch.tensor([int(bool(flag))], device=device)  # NCCL needs it on the GPU
    dist.broadcast(value, 0)
    return bool(value.item())


class NeuralTrainer:
    """The defaults are `NeuralOptions`' (the family's option table).

    Parameters
    ----------
    objective : one of `objectives.OBJECTIVES`
    epochs : at most this many passes; patience: stop after this many without a better
        development LAS
    batch_size : sentences per step
    learning_rate : Adam's initial rate
    decay_steps : the rate falls by a quarter every this many steps
    hidden, layers, word_dim, dropout : the network (`Network`)
    word_dropout : in training, each word's id replaced by the unknown word's at this rate
        (the characters are read as they are)
    embeddings : a word-vector file (text format) to initialize the word embeddings
    transformer : a pretrained transformer's directory (`transformer`), whose frozen word
        vectors join the encoder's input
    decoder : parsing's default decoder (default: eisner for ``crf-projective`` and
        ``crf2o``, which takes no other, else mst)
    single_root : exactly one word attached to the root, in training and parsing
    checkpoint : where the checkpoint is written after every epoch (None: nowhere)
    resume : continue from `checkpoint`
    threads : CPU threads of training (torch's intra-op threads); one by default: on this
        network's small matrices two threads trained 2.4 times slower than one on a
        2-core machine (bench/RESULTS.md)
    """

    def __init__(self, objective: str = D.objective, epochs: int = D.epochs,
                 patience: int = D.patience, batch_size: int = D.batch_size,
                 learning_rate: float = D.learning_rate, hidden: int = D.hidden,
                 layers: int = D.layers, word_dim: int = D.word_dim,
                 dropout: float = D.dropout, word_dropout: float = D.word_dropout,
                 decay_steps: int = D.decay_steps, embeddings=D.embeddings,
                 transformer=D.transformer, decoder: str | None = D.decoder,
                 single_root: bool = not D.multi_root, seed: int = D.seed,
                 progress: bool = True, checkpoint=None, resume: bool = False,
                 threads: int = D.threads):
        if objective not in OBJECTIVES:
            raise ArborparseError(f"objective: one of {', '.join(OBJECTIVES)}")
        if min(epochs, patience, batch_size, hidden, layers, word_dim, decay_steps) < 1:
            raise ArborparseError("epochs, patience, batch size, hidden, layers, word "
                                  "dimension and decay steps must be >= 1")
        if not 0 <= word_dropout < 1:
            raise ArborparseError(f"word dropout: a rate in [0, 1), not {word_dropout}")
        if resume and checkpoint is None:
            raise ArborparseError("resume needs a checkpoint path")
        if objective == "crf2o" and decoder not in (None, "eisner"):
            raise ArborparseError("objective crf2o decodes projective trees from its "
                                  "second-order marginals: decoder eisner (the default), "
                                  f"not {decoder}")
        self.objective, self.epochs, self.patience = objective, epochs, patience
        self.batch_size, self.learning_rate = batch_size, learning_rate
        self.hidden, self.layers, self.word_dim, self.dropout = hidden, layers, word_dim, dropout
        self.word_dropout, self.decay_steps = word_dropout, decay_steps
        self.embeddings = embeddings
        self.transformer = None
        if transformer is not None:
            from arborparse.neural.transformer import record
            self.transformer = record(transformer)
        self.decoder = decoder or ("eisner" if objective in PROJECTIVE else "mst")
        self.single_root, self.seed, self.progress = single_root, seed, progress
        self.checkpoint, self.resume, self.threads = checkpoint, resume, threads

    @classmethod
    def from_options(cls, options: NeuralOptions, *, dev: bool = False, progress: bool = True,
                     checkpoint=None, resume: bool = False, client=None) -> NeuralTrainer:
        """The trainer an option table describes (the family's trainer in
        `arborparse.registry`; `dev` and `client` change nothing here)."""
        given = options.to_dict()
        return cls(single_root=not given.pop("multi_root"), progress=progress,
                   checkpoint=checkpoint, resume=resume, **given)

    def settings(self) -> dict:
        """What a checkpoint must agree on to be resumed (word dropout and the decay's
        steps only where not their defaults, so that checkpoints written before them
        resume)."""
        later = {"word_dropout": (self.word_dropout, D.word_dropout),
                 "decay_steps": (self.decay_steps, D.decay_steps)}
        return {"objective": self.objective, "batch_size": self.batch_size,
                "learning_rate": self.learning_rate, "hidden": self.hidden,
                "layers": self.layers, "word_dim": self.word_dim, "dropout": self.dropout,
                "decoder": self.decoder, "single_root": self.single_root, "seed": self.seed,
                "transformer": self.transformer,
                **{name: value for name, (value, default) in later.items()
                   if value != default}}

    # ------------------------------------------------------------------ the pieces

    def _network(self, vocab: Vocabulary) -> Network:
        torch.manual_seed(self.seed)
        vectors = {}
        word_dim = self.word_dim
        if self.embeddings is not None:
            word_dim, vectors = read_vectors(self.embeddings, vocab)
        net = Network(vocab.sizes(), word_dim=word_dim, hidden=self.hidden, layers=self.layers,
                      sib_dim=SIB_DIM if self.objective == "crf2o" else 0,
                      dropout=self.dropout, transformer=self.transformer)
        with torch.no_grad():
            for i, v in vectors.items():
                net.words.weight[i] = torch.from_numpy(v)
        return net

    def _batches(self, sentences: list[Sentence], epoch: int) -> list[list[int]]:
        """Indices in batches of similar length, their order shuffled; each epoch its own."""
        rng = np.random.default_rng([self.seed, epoch])
        noise = rng.random(len(sentences))
        order = sorted(range(len(sentences)), key=lambda i: (len(sentences[i]), noise[i]))
        groups = [order[k:k + self.batch_size] for k in range(0, len(order), self.batch_size)]
        return [groups[k] for k in rng.permutation(len(groups))]

    def loss(self, net: Network, batch: Batch) -> tuple[torch.Tensor, int]:
        """(the summed loss of the batch, its words)."""
        gold = batch.targets
        if self.word_dropout and net.training:
            drop = torch.rand(batch.words.shape, device=batch.words.device) < self.word_dropout
            batch = replace(batch, words=batch.words.masked_fill(drop & (batch.words > ROOT),
                                                                 UNKNOWN))
        states = net.encode(batch)
        sib = net.sibling_scores(states) if self.objective == "crf2o" else None
        total = arc_loss(self.objective, net.arc_scores(states), gold["heads"], batch.lengths,
                         self.single_root, sib)
        ce = torch.nn.functional.cross_entropy
        words = word_mask(batch.lengths, states.shape[1])
        labels = net.label_scores(states, gold["heads"], words)
        total = total + ce(labels, gold["labels"][words], ignore_index=-1, reduction="sum")
        for name, scores in net.tag_scores(states, words).items():
            target = gold[name][words]
            if (target >= 0).any():
                total = total + ce(scores, target, ignore_index=-1, reduction="sum")
        return total, int(batch.lengths.sum())

    # ------------------------------------------------------------------ checkpoints

    @staticmethod
    def _state(net, optimizer, vocab, step: int, best_weights) -> tuple[dict, dict]:
        """(header, arrays) of a checkpoint: weights, Adam's state, the step, the best
        epoch's weights."""
        opt = optimizer.state_dict()
        cpu = lambda t: t.detach().cpu().numpy()  # noqa: E731
        arrays = {f"param.{k}": cpu(v) for k, v in net.state_dict().items()}
        if best_weights is not None:
            arrays.update({f"best.{k}": cpu(v) for k, v in best_weights.items()})
        for i, entry in opt["state"].items():
            arrays.update({f"adam.{i}.{k}": cpu(v) for k, v in entry.items()})
        header = {"vocabulary": vocab.to_json(), "network": net.config,
                  "param_groups": opt["param_groups"], "step": step}
        return header, arrays

    def _restore(self, net, optimizer, header: dict, arrays: dict):
        """Put a checkpoint's weights and Adam's state in place: (step, best weights)."""
        try:
            net.load_state_dict({k[6:]: torch.from_numpy(v) for k, v in arrays.items()
                                 if k.startswith("param.")})
            names = {k[5:] for k in arrays if k.startswith("best.")}
            best_weights = {k: torch.from_numpy(arrays[f"best.{k}"]) for k in names} or None
            adam = {}
            for key, value in arrays.items():
                if key.startswith("adam."):
                    _, i, name = key.split(".", 2)
                    adam.setdefault(int(i), {})[name] = torch.from_numpy(value)
            optimizer.load_state_dict({"state": adam, "param_groups": header["param_groups"]})
            return int(header["step"]), best_weights
        except (KeyError, TypeError, ValueError, RuntimeError) as err:
            raise ArborparseError(f"{self.checkpoint}: a damaged checkpoint ({err}); start "
                                  "again without resuming") from None

    # ------------------------------------------------------------------ training

    @keeps_best
    def fit(self, train: list[Sentence], dev: list[Sentence] | None = None,
            save_best=None) -> NeuralTrainer:
        """Train on `train`, select on `dev` (without dev: the last epoch); return self.
        `save_best`: a path (or a saver) where the best parser is saved as soon as it is
        best."""
        if not train:
            raise ArborparseError("the training data holds no sentences")
        for s in train:
            check_tree(s, self.single_root, MULTI_ROOT)
        if self.objective in PROJECTIVE:
            train = [projectivize(s, self.single_root) for s in train]
        torch.set_num_threads(self.threads)
        device = _device()
        rank, world = _process_group(device)
        lead = rank == 0

        def tags_and_tree(parser):
            scores = evaluate(dev, parser.parse(dev, retag=True),
                              multi_root=not parser.single_root)
            return {k: scores[k] for k in ("UAS", "LAS", "UPOS", "XPOS", "UFeats", "Lemmas")}

        loop = Loop(self, dev, save_best, report=("UPOS", "UFeats", "Lemmas", "UAS", "LAS"),
                    evaluate=tags_and_tree, patience=self.patience,
                    checkpoint=self.checkpoint, settings=self.settings(), resume=self.resume,
                    unit="batch", lead=lead, agree=lambda stop: _agree(stop, world, device))
        saved = loop.resume()
        if saved is not None:
            vocab = Vocabulary.from_json(saved[0]["vocabulary"])
            net = Network(vocab.sizes(), **saved[0]["network"])
        else:
            vocab = Vocabulary.build(train)
            net = self._network(vocab)
        net.to(device)
        step_loss = self.loss
        if world > 1:
            from torch.nn.parallel import DistributedDataParallel

            wrapped = DistributedDataParallel(_Loss(self, net), find_unused_parameters=True)
            step_loss = lambda _, batch: wrapped(batch)  # noqa: E731
        optimizer = torch.optim.Adam(net.parameters(), lr=self.learning_rate,
                                     betas=(0.9, 0.9))
        parser = NeuralParser(vocab, net, self.objective, self.decoder, self.single_root)
        step, best_weights = 0, None
        if saved is not None:
            step, best_weights = self._restore(net, optimizer, *saved)
        targets = [vocab.targets(s) for s in train]  # edit scripts are slow to find
        began = time.perf_counter() - (self.history_[-1]["elapsed"] if self.history_ else 0)
        for epoch in loop:
            torch.manual_seed(self.seed * 100003 + epoch)
            net.train()
            start, total_loss, words = time.perf_counter(), 0.0, 0
            groups = self._batches(train, epoch)
            bar = loop.bar(epoch, groups[rank:len(groups) - len(groups) % world:world])
            for group in bar:
                batch = Batch.of(vocab, [train[i] for i in group],
                                 [targets[i] for i in group]).to(device)
                for g in optimizer.param_groups:
                    g["lr"] = self.learning_rate * 0.75 ** (step / self.decay_steps)
                optimizer.zero_grad()
                loss, n = step_loss(net, batch)
                (loss / n).backward()
                torch.nn.utils.clip_grad_norm_(net.parameters(), CLIP)
                optimizer.step()
                step += 1
                total_loss += float(loss.detach())
                words += n
                bar.set_postfix(loss=f"{total_loss / words:.3f}",
                                words_per_s=f"{words / (time.perf_counter() - start):.0f}")
            seconds = time.perf_counter() - start
            record = {"seconds": seconds, "loss": total_loss / words,
                      "words_per_second": words / seconds,
                      "elapsed": time.perf_counter() - began}

            def keep():
                nonlocal best_weights
                best_weights = {k: v.detach().clone() for k, v in net.state_dict().items()}

            loop.end(epoch, record, f"{seconds:.1f}s  loss {record['loss']:.3f}  "
                     f"[{record['elapsed'] / 60:.1f} min]", parser, keep=keep,
                     state=lambda: self._state(net, optimizer, vocab, step, best_weights))
        if best_weights is not None:
            net.load_state_dict(best_weights)
        net.eval()
        loop.finish()
        if dev:  # the kept network's marginals made to mean what they say
            record = {**next((r for r in self.history_ if r.get("epoch") == self.best_epoch_),
                             {}), **parser.calibrate(dev)}
            if save_best is not None and lead:
                save_parser(parser, save_best, record)
        self.parser_ = parser
        return self
