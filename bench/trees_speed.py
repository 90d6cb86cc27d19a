"""Speed of arborparse.trees against the references a user would otherwise pick.

    python bench/trees_speed.py [--sentences 200] [--sizes 10 20 40 80]

One thread, the same random score matrices for every implementation, in one run; the
log Z + marginals implementations, and Eisner's decoder with projective inside-outside, are
timed interleaved, fastest of 15 runs each.
Prints Markdown tables of sentences/second and ratios (ours / reference).
"""

import os

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ[var] = "1"

import argparse  # noqa: E402
import datetime  # noqa: E402
import sys  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402
from common import best_time, best_times, machine  # noqa: E402

from arborparse import trees  # noqa: E402
from arborparse.trees import batch  # noqa: E402
from arborparse.trees.scores import tree_score  # noqa: E402

torch.set_num_threads(1)

# Figures quoted in the issue for SuPar on this machine class (sentences/second).
SUPAR = {"mst": {40: 200, 80: 49}, "eisner": {40: 516, 80: 55}, "inside": {40: 378, 80: 51}}


def optional(name):
    try:
        return __import__(name, fromlist=["_"])
    except Exception as err:  # a reference that cannot be imported is reported, not fatal
        print(f"<!-- {name} unavailable: {err} -->")
        return None


def rate(count, seconds):
    return count / seconds


def row(cells):
    return "| " + " | ".join(str(c) for c in cells) + " |"


def bench_mst(mats, ufal, nx):
    n = mats[0].shape[0] - 1
    ours = best_time(lambda: [trees.mst(S) for S in mats])
    out = {"ours": rate(len(mats), ours)}
    if ufal is not None:
        prepared = []
        for S in mats:
            T = S.T.copy()  # ufal: T[m, h] is the score of m having head h
            penalty = n * (S.max() - S.min()) + 1.0
            T[:, 0] -= penalty  # the root-penalty reduction makes the MST single-rooted
            np.fill_diagonal(T, np.nan)
            T[0, :] = np.nan
            prepared.append(T)
        heads_ufal = [np.asarray(ufal.chu_liu_edmonds(T)[0]) for T in prepared]
        for S, h in zip(mats, heads_ufal):  # same optimum, or the comparison is void
            assert abs(tree_score(S, h) - tree_score(S, trees.mst(S))) < 1e-6
        t = best_time(lambda: [ufal.chu_liu_edmonds(T) for T in prepared])
        out["ufal"] = rate(len(mats), t)
    if nx is not None and n <= 40:
        few = mats[:20]

        def run_nx():
            for S in few:
                G = nx.DiGraph()
                G.add_weighted_edges_from((h, m, S[h, m]) for h in range(n + 1)
                                          for m in range(1, n + 1) if h != m)
                nx.maximum_spanning_arborescence(G)

        out["networkx (multi-root)"] = rate(len(few), best_time(run_nx, repeat=1))
    return out


def bench_nonprojective_crf(mats, torch_struct):
    n = mats[0].shape[0] - 1
    S = torch.from_numpy(np.stack(mats))
    eye = torch.eye(n, dtype=S.dtype).expand(len(mats), n, n)

    def lu_reference():
        # the dense bound: one batched LU factorization and solve of the plain matrix
        LU, piv = torch.linalg.lu_factor(torch.exp(S[:, 1:, 1:]))
        return torch.linalg.lu_solve(LU, piv, eye)

    An = np.exp(np.stack(mats)[:, 1:, 1:])
    fns = {"ours (batched torch)": lambda: batch.log_partition_and_marginals(S),
           "ours (numpy, per sentence)": lambda: [trees.marginals(x) for x in mats],
           "torch lu_factor + lu_solve": lu_reference,
           "numpy slogdet + inv": lambda: (np.linalg.slogdet(An), np.linalg.inv(An))}
    if torch_struct is not None:
        T = S[:, 1:, 1:].clone()
        idx = torch.arange(n)
        T[:, idx, idx] = S[:, 0, 1:]

        def run_ts():
            dist = torch_struct.NonProjectiveDependencyCRF(T)
            return dist.partition, dist.marginals

        try:
            run_ts()
            fns["torch-struct NonProjectiveDependencyCRF"] = run_ts
        except Exception as err:
            print(f"<!-- torch-struct NonProjectiveDependencyCRF failed: {err} -->")
    return {name: rate(len(mats), t) for name, t in best_times(fns).items()}


def bench_projective(mats, torch_struct):
    n = mats[0].shape[0] - 1
    S = torch.from_numpy(np.stack(mats))
    fns = {"eisner (ours)": lambda: [trees.eisner(x) for x in mats],
           "inside-outside (ours, batched torch)":
               lambda: batch.log_partition_and_marginals(S, projective=True),
           "inside-outside (ours, numpy)":
               lambda: [trees.marginals(x, projective=True) for x in mats]}
    out = {name: rate(len(mats), t) for name, t in best_times(fns).items()}
    if torch_struct is not None:
        T = S[:, 1:, 1:].clone()
        idx = torch.arange(n)
        T[:, idx, idx] = S[:, 0, 1:]
        try:
            torch_struct.DependencyCRF(T).marginals  # noqa: B018 (fails on current torch)
            out["torch-struct DependencyCRF"] = rate(len(mats), best_time(
                lambda: torch_struct.DependencyCRF(T).marginals, repeat=3))
        except Exception as err:
            print(f"<!-- torch-struct DependencyCRF failed: {type(err).__name__}: {err} -->")
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sentences", type=int, default=200)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 20, 40, 80])
    args = parser.parse_args()
    ufal = optional("ufal.chu_liu_edmonds")
    nx = optional("networkx")
    torch_struct = optional("torch_struct")
    print(f"Command: `python {' '.join(sys.argv)}` — {datetime.date.today()} — {machine()}, "
          f"1 thread, torch {torch.__version__}, {args.sentences} random N(0,1) matrices per n\n")
    rng = np.random.default_rng(0)
    results = {}
    for n in args.sizes:
        mats = [rng.normal(size=(n + 1, n + 1)) for _ in range(args.sentences)]
        trees.mst(mats[0]), trees.eisner(mats[0]), trees.marginals(mats[0])  # compile
        trees.marginals(mats[0], projective=True)
        results[n] = {"mst": bench_mst(mats, ufal, nx),
                      "crf": bench_nonprojective_crf(mats, torch_struct),
                      "proj": bench_projective(mats, torch_struct)}
    sizes = args.sizes
    for key, title, ours, quoted in (
            ("mst", "Single-root MST decoding", "ours", "mst"),
            ("crf", "Non-projective log Z + marginals", "ours (batched torch)", None),
            ("proj", "Projective decoding and inside-outside", None, None)):
        print(f"### {title} (sentences/second)\n")
        print(row(["implementation"] + [f"n={n}" for n in sizes]))
        print(row(["---"] * (len(sizes) + 1)))
        names = list(dict.fromkeys(k for n in sizes for k in results[n][key]))
        for name in names:
            print(row([name] + [f"{results[n][key][name]:,.0f}" if name in results[n][key]
                                else "—" for n in sizes]))
        if quoted:
            print(row(["SuPar (quoted)"] + [SUPAR[quoted].get(n, "—") for n in sizes]))
        if ours:
            for name in names:
                if name != ours:
                    print(row([f"ratio ours / {name}"] + [
                        f"{results[n][key][ours] / results[n][key][name]:.2f}"
                        if name in results[n][key] else "—" for n in sizes]))
            if quoted:
                print(row(["ratio ours / SuPar"] + [
                    f"{results[n][key][ours] / SUPAR[quoted][n]:.1f}" if n in SUPAR[quoted]
                    else "—" for n in sizes]))
        if key == "proj":  # the same DP in two passes against one
            for name in ("inside-outside (ours, batched torch)", "inside-outside (ours, numpy)"):
                print(row([f"ratio {name} / eisner (ours)"] + [
                    f"{results[n][key][name] / results[n][key]['eisner (ours)']:.2f}"
                    for n in sizes]))
            for name, q in (("eisner (ours)", "eisner"),
                            ("inside-outside (ours, batched torch)", "inside"),
                            ("inside-outside (ours, numpy)", "inside")):
                print(row([f"SuPar {q} (quoted)"] + [SUPAR[q].get(n, "—") for n in sizes]))
                print(row([f"ratio {name} / SuPar"] + [
                    f"{results[n][key][name] / SUPAR[q][n]:.1f}" if n in SUPAR[q] else "—"
                    for n in sizes]))
        print()


if __name__ == "__main__":
    main()
