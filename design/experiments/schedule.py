#!/usr/bin/env python3
"""Replay stopping schedules of `falkon-ooc tune` on recorded validation curves.

Input: the JSON files of `go run ./bench/accuracy -tune -tune-mode curves`
(every candidate of the 5 sigma x 6 lambda grid run for all iterations, none
stopped). Candidates are independent CG columns, so a schedule only decides
which prefix of each curve is seen; this replays a schedule and reports

  - the pick (lowest validation RMSE seen) and its test RMSE (the candidate's
    test RMSE at its full-run best iteration: exact when the pick's best
    iteration was seen, marked ~ otherwise),
  - its gap to the best of the 30 on test,
  - the kernel work relative to one fit, counted as kernel.FlopsPerElement
    does: a sigma group's pass costs 2d + 24 + 4L per training row and
    element (L live lambdas), 2d + 24 + 2L per validation row; a fit's pass
    2d + 28 per training row. The A factorisations are not counted here.

Usage: schedule.py DIR [DIR...]
"""
import json, math, sys, glob, os

D = {"protein": 9, "kin40k": 8, "elevators": 18, "bike": 17, "california": 8}
VAL = 0.1  # validation fraction


def replay(doc, patience=3, halving=0, groups=(), keep=0.5, margin=None, gstart=2, min_impr=1e-4):
    cands = doc["candidates"]
    iters = max(len(c["validation"]) for c in cands)
    sig = sorted({c["sigma"] for c in cands})
    live = [True] * len(cands)
    best = [math.inf] * len(cands)
    bit = [0] * len(cands)
    since = [0] * len(cands)
    d = D[doc["data"]]
    tr, va = 1 - VAL, VAL
    cost = 0.0
    # RHS pass: every group, 2 columns (y and ones), training rows.
    cost += len(sig) * tr * (2 * d + 24 + 8)
    for it in range(1, iters + 1):
        # the pass of iteration it: kernel products for live candidates,
        # validation of the previous iterate (it > 1).
        for s in sig:
            L = sum(1 for i, c in enumerate(cands) if live[i] and c["sigma"] == s)
            if L:
                cost += tr * (2 * d + 24 + 4 * L)
                if it > 1:
                    cost += va * (2 * d + 24 + 2 * L)
        # validation of iterate it (scored in the next pass; the bookkeeping is the same)
        for i, c in enumerate(cands):
            if not live[i]:
                continue
            v = c["validation"][it - 1]
            if v < best[i] * (1 - min_impr) or math.isinf(best[i]):
                best[i], bit[i], since[i] = v, it, 0
            else:
                since[i] += 1
                if patience > 0 and since[i] >= patience and it < iters:
                    live[i] = False
        if it == iters:
            break
        if halving and it % halving == 0 and ((it // halving) & (it // halving - 1)) == 0:
            lv = sorted([i for i in range(len(cands)) if live[i]], key=lambda i: best[i])
            for i in lv[(len(lv) + 1) // 2:]:
                live[i] = False
        gl = [s for s in sig if any(live[i] and cands[i]["sigma"] == s for i in range(len(cands)))]
        gbest = {s: min(best[i] for i in range(len(cands)) if cands[i]["sigma"] == s) for s in gl}
        if it in groups and len(gl) > 1:
            order = sorted(gl, key=lambda s: gbest[s])
            nkeep = max(1, math.ceil(len(order) * keep))
            for s in order[nkeep:]:
                for i in range(len(cands)):
                    if cands[i]["sigma"] == s:
                        live[i] = False
        if margin is not None and it >= gstart and len(gl) > 1:
            top = min(gbest.values())
            for s in gl:
                if gbest[s] > top * (1 + margin):
                    for i in range(len(cands)):
                        if cands[i]["sigma"] == s:
                            live[i] = False
    # final validation-only pass of the last live iterate
    gl = [s for s in sig if any(live[i] and cands[i]["sigma"] == s for i in range(len(cands)))]
    for s in gl:
        L = sum(1 for i, c in enumerate(cands) if live[i] and c["sigma"] == s)
        cost += va * (2 * d + 24 + 2 * L)
    pick = min(range(len(cands)), key=lambda i: best[i])
    c = cands[pick]
    exact = bit[pick] == c["best_iteration"]
    besttest = min(x["test"] for x in cands)
    fit = (iters + 1) * tr * (2 * d + 28)
    return dict(pick=(c["sigma"], c["lambda"]), val=best[pick], test=c["test"], exact=exact,
                gap=100 * (c["test"] / besttest - 1), ratio=cost / fit)


SCHEDULES = {
    "none": dict(patience=-1),
    "patience3": dict(patience=3),
    "halving4": dict(patience=3, halving=4),
    "groups 2,4,8": dict(patience=3, groups=(2, 4, 8)),
    "groups 3,6,12": dict(patience=3, groups=(3, 6, 12)),
    "groups 2,4": dict(patience=3, groups=(2, 4)),
    "groups 2,4,10 (default from round 4)": dict(patience=3, groups=(2, 4, 10)),
    "groups 2,4,9": dict(patience=3, groups=(2, 4, 9)),
    "groups 2,4,11": dict(patience=3, groups=(2, 4, 11)),
    "groups 2,3,10": dict(patience=3, groups=(2, 3, 10)),
    "groups 1,3,10": dict(patience=3, groups=(1, 3, 10)),
    "groups 3,6,10": dict(patience=3, groups=(3, 6, 10)),
    "groups 1,2,4": dict(patience=3, groups=(1, 2, 4)),
    "margin 5% from 2": dict(patience=3, margin=0.05, gstart=2),
    "margin 2% from 3": dict(patience=3, margin=0.02, gstart=3),
    "margin 1% from 3": dict(patience=3, margin=0.01, gstart=3),
    "margin 2% from 2 + groups 4,8": dict(patience=3, margin=0.02, gstart=2, groups=(4, 8)),
    "margin 5% from 2 + groups 4,8": dict(patience=3, margin=0.05, gstart=2, groups=(4, 8)),
}


def main():
    docs = []
    for d in sys.argv[1:]:
        for p in sorted(glob.glob(os.path.join(d, "*.json"))):
            docs.append(json.load(open(p)))
    print("| schedule | " + " | ".join(f"{d['data']}: gap % / kernel × fit" for d in docs) + " | worst gap | worst × |")
    print("|---" * (len(docs) + 3) + "|")
    for name, kw in SCHEDULES.items():
        rs = [replay(d, **kw) for d in docs]
        cells = [f"{r['gap']:+.2f}{'' if r['exact'] else '~'} / {r['ratio']:.2f}" for r in rs]
        print(f"| {name} | " + " | ".join(cells) + f" | {max(r['gap'] for r in rs):+.2f} | {max(r['ratio'] for r in rs):.2f} |")


if __name__ == "__main__":
    main()
