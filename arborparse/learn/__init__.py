"""Trainers for the first-order model: averaged perceptron and MIRA (single-best, k-best,
factored)."""

from arborparse.learn.online import TRAINERS, OnlineTrainer

__all__ = ["TRAINERS", "OnlineTrainer"]
