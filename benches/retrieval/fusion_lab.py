"""Compares fusions of a lexical and a vector list offline, on the candidates the
retrieval bench dumps (`CAIRN_BENCH_DUMP=DIR cargo bench --bench retrieval`): one JSON
line per query, each candidate with its cosine, its BM25 (0 when it matched no word)
and whether it is an exact name. The queries of each set are split by position: the
odd ones (1st, 3rd, ...) choose the weights, the even ones report, so that a choice is
never scored on the queries it was made on.

    python3 benches/retrieval/fusion_lab.py DIR
"""

import json
import math
import sys
from pathlib import Path


def recall_at(ranked, relevant, k):
    top = ranked[:k]
    return sum(1 for r in relevant if r in top) / max(1, min(k, len(relevant)))


def scores(queries, rank):
    n = r1 = r5 = r10 = mrr = 0.0
    for q in queries:
        ranked = rank(q)
        n += 1
        r1 += recall_at(ranked, q["relevant"], 1)
        r5 += recall_at(ranked, q["relevant"], 5)
        r10 += recall_at(ranked, q["relevant"], 10)
        for i, x in enumerate(ranked[:10]):
            if x in q["relevant"]:
                mrr += 1 / (i + 1)
                break
    n = max(n, 1)
    return (r1 / n, r5 / n, r10 / n, mrr / n)


def order(q, score):
    """Candidates by `score(cand, ctx)` (exact names first), ties by cosine then id."""
    c = q["cands"]
    best = max((x[2] for x in c), default=0.0)
    cos_sorted = sorted(c, key=lambda x: (-x[1], x[0]))
    lex_sorted = sorted((x for x in c if x[2] > 0), key=lambda x: (-x[2], x[0]))
    ctx = {
        "best": best,
        "vrank": {x[0]: i for i, x in enumerate(cos_sorted)},
        "lrank": {x[0]: i for i, x in enumerate(lex_sorted)},
        "cmax": cos_sorted[0][1] if cos_sorted else 0.0,
        "cmin": cos_sorted[min(len(cos_sorted), 100) - 1][1] if cos_sorted else 0.0,
    }
    keyed = [((1 if x[3] else 0), score(x, ctx), x[1], x[0]) for x in c]
    keyed.sort(key=lambda k: (-k[0], -k[1], -k[2], k[3]))
    return [k[3] for k in keyed]


def vector(x, ctx):
    return x[1]


def lexical(x, ctx):
    return x[2] if x[2] > 0 else -1.0


def noisy_or(w):
    def f(x, ctx):
        l = x[2] / ctx["best"] if ctx["best"] > 0 else 0.0
        return 1 - (1 - max(0.0, x[1])) * (1 - w * l)

    return f


def rrf(k, wl=1.0):
    def f(x, ctx):
        s = 1 / (k + ctx["vrank"][x[0]] + 1)
        if x[0] in ctx["lrank"]:
            s += wl / (k + ctx["lrank"][x[0]] + 1)
        return s

    return f


def convex(a):
    """a·cosine + (1 − a)·BM25/best (the raw cosine keeps its meaning)."""

    def f(x, ctx):
        l = x[2] / ctx["best"] if ctx["best"] > 0 else 0.0
        return a * max(0.0, x[1]) + (1 - a) * l

    return f


def convex_mm(a):
    """a·min-max(cosine over the pool) + (1 − a)·BM25/best."""

    def f(x, ctx):
        l = x[2] / ctx["best"] if ctx["best"] > 0 else 0.0
        span = ctx["cmax"] - ctx["cmin"]
        v = (x[1] - ctx["cmin"]) / span if span > 0 else 0.0
        return a * v + (1 - a) * l

    return f


def convex_adapt(a_all, a_some):
    """convex, with the cosine's weight a_all for a row holding every query word and
    a_some for one holding only some (a paraphrase's stray word)."""

    def f(x, ctx):
        l = x[2] / ctx["best"] if ctx["best"] > 0 else 0.0
        a = a_all if (len(x) > 4 and x[4]) else a_some
        return a * max(0.0, x[1]) + (1 - a) * l

    return f


def rrf_adapt(k, w_all, w_some):
    def f(x, ctx):
        s = 1 / (k + ctx["vrank"][x[0]] + 1)
        if x[0] in ctx["lrank"]:
            w = w_all if (len(x) > 4 and x[4]) else w_some
            s += w / (k + ctx["lrank"][x[0]] + 1)
        return s

    return f


def main():
    d = Path(sys.argv[1])
    sets = {}
    for p in sorted(d.glob("*.jsonl")):
        qs = [json.loads(l) for l in p.read_text().splitlines() if l.strip()]
        sets[p.stem] = qs
    fusions = [("vector", vector), ("lexical", lexical)]
    fusions += [(f"noisy-or {w}", noisy_or(w)) for w in (0.4,)]
    fusions += [(f"rrf k={k}", rrf(k)) for k in (10, 30, 60)]
    fusions += [(f"rrf k=60 wl={w}", rrf(60, w)) for w in (0.3, 0.5, 0.7)]
    fusions += [(f"convex a={a}", convex(a)) for a in (0.6, 0.7, 0.8, 0.85, 0.9, 0.95)]
    fusions += [(f"convex-mm a={a}", convex_mm(a)) for a in (0.5, 0.6, 0.7, 0.8, 0.9)]
    fusions += [
        (f"convex-adapt all={a} some={b}", convex_adapt(a, b))
        for a in (0.5, 0.6, 0.7, 0.8)
        for b in (0.8, 0.9, 0.95, 1.0)
    ]
    fusions += [
        (f"rrf-adapt k={k} all={a} some={b}", rrf_adapt(k, a, b))
        for k in (20, 60)
        for a in (1.0, 0.7)
        for b in (0.5, 0.3, 0.0)
    ]
    only = sys.argv[2:]
    if only:
        fusions = [f for f in fusions if any(f[0].startswith(o) for o in only)]
    for half, sel in (("tune (odd)", 0), ("report (even)", 1), ("all", None)):
        print(f"\n## {half}: recall@1 / @5 / @10 / MRR")
        header = "| fusion | " + " | ".join(sets) + " |"
        print(header)
        print("|---" * (len(sets) + 1) + "|")
        for name, f in fusions:
            row = [name]
            for qs in sets.values():
                sub = [q for i, q in enumerate(qs) if sel is None or i % 2 == sel]
                s = scores(sub, lambda q: order(q, f))
                row.append(" ".join(f"{x:.2f}" for x in s))
            print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
