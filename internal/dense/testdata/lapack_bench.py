#!/usr/bin/env python3
"""Times LAPACK/OpenBLAS on the same M x M workloads as the Go benchmarks
in internal/dense (Cholesky, U U^T, triangular solves), for comparison only.

Not a dependency of the module. Needs python3-scipy (Debian links it to
OpenBLAS). Usage:

    OPENBLAS_NUM_THREADS=2 [OPENBLAS_CORETYPE=SkylakeX] python3 lapack_bench.py 1000 2000 5000 10000

Prints one line per operation: wall seconds, CPU seconds, GFLOP/s and
GFLOP per CPU-second (the machine is shared, so CPU time is the steadier
measure).
"""
import sys
import time

import numpy as np
from scipy.linalg import blas, lapack


def kernel_matrix(n, d=5, seed=1):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, d))
    sq = (x * x).sum(1)
    k = np.exp(-(sq[:, None] + sq[None, :] - 2 * x @ x.T) / (2 * d))
    k[np.diag_indices(n)] += 1e-3
    return np.asfortranarray(k)


def timed(name, n, flops, fn, reps):
    best = None
    for _ in range(reps):
        w0, c0 = time.perf_counter(), time.process_time()
        fn()
        w, c = time.perf_counter() - w0, time.process_time() - c0
        if best is None or w < best[0]:
            best = (w, c)
    w, c = best
    print(f"{name:<12} M={n:<6} wall {w:8.3f} s  cpu {c:8.3f} s  "
          f"{flops / w / 1e9:7.2f} GFLOP/s  {flops / c / 1e9:7.2f} GFLOP/cpu-s", flush=True)


def main():
    for n in map(int, sys.argv[1:] or ["1000", "2000"]):
        a = kernel_matrix(n)
        reps = 3 if n <= 5000 else 1
        # Column-major lower factor = the row-major upper factor the Go code computes.
        out = {}

        def chol():
            c, info = lapack.dpotrf(a, lower=1, clean=0, overwrite_a=0)
            assert info == 0, info
            out["l"] = c

        timed("dpotrf", n, n**3 / 3, chol, reps)
        l = out["l"]

        def lauum():
            c, info = lapack.dlauum(l, lower=1, overwrite_c=0)
            assert info == 0, info

        timed("dlauum", n, n**3 / 3, lauum, reps)

        def precond():
            t, info = lapack.dpotrf(a, lower=1, clean=0, overwrite_a=0)
            assert info == 0, info
            s, info = lapack.dlauum(t, lower=1, overwrite_c=0)
            assert info == 0, info
            s /= n
            s[np.diag_indices(n)] += 1e-6
            _, info = lapack.dpotrf(s, lower=1, clean=0, overwrite_a=1)
            assert info == 0, info

        timed("precond", n, n**3, precond, reps)
        for k in (1, 10):
            b = np.asfortranarray(np.ones((n, k)))
            for trans in (0, 1):
                timed(f"dtrsm k={k} T={trans}", n, n * n * k,
                      lambda: blas.dtrsm(1.0, l, b, lower=1, trans_a=trans), reps)


if __name__ == "__main__":
    main()
