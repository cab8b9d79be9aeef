#!/usr/bin/env python3
"""Times LAPACK/OpenBLAS on the same M x M workloads as the Go benchmarks
in internal/dense (Cholesky, U U^T, triangular solves), for comparison only.

Not a dependency of the module. Needs python3-scipy (Debian links it to
OpenBLAS). Usage:

    OPENBLAS_NUM_THREADS=2 [OPENBLAS_CORETYPE=SkylakeX] python3 lapack_bench.py 1000 2000 5000 10000
    python3 lapack_bench.py --ops precond --dtype float32 --reps 1 10000

--ops limits the operations (comma-separated: chol, lauum, precond, trsm,
and syrk and trsmk, the peers of BenchmarkOps32: C = X Xᵀ with X M × M/4
and Uᵀ X = B with B M × M/4);
--dtype float32 uses spotrf/slauum/strsm (the peer of the float32
preconditioner); --reps sets the repetitions (default 3, 1 above M = 5000).

Prints one line per operation: wall seconds, CPU seconds, GFLOP/s and
GFLOP per CPU-second (the machine is shared, so CPU time is the steadier
measure).

Every routine runs in place on operands prepared before its timer starts,
as the Go benchmarks do: scipy's wrappers otherwise copy their input (or
allocate the output) inside the call, which added 3.5-7 % to spotrf,
slauum, ssyrk and strsm at M = 10^4 (round 10; before that round the
peer carried those copies).
"""
import argparse
import ctypes
import time

import numpy as np
from scipy.linalg import blas, lapack


def kernel_matrix(n, d=5, seed=1, dtype=np.float64):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, d))
    sq = (x * x).sum(1)
    k = np.exp(-(sq[:, None] + sq[None, :] - 2 * x @ x.T) / (2 * d))
    k[np.diag_indices(n)] += 1e-3
    return np.asfortranarray(k, dtype=dtype)


def timed(name, n, flops, fn, reps, prep=None):
    """Times fn(prep()) (fn() without prep), prep outside the timer."""
    best = None
    for _ in range(reps):
        arg = prep() if prep else None
        w0, c0 = time.perf_counter(), time.process_time()
        fn(arg) if prep else fn()
        w, c = time.perf_counter() - w0, time.process_time() - c0
        if best is None or w < best[0]:
            best = (w, c)
    w, c = best
    print(f"{name:<12} M={n:<6} wall {w:8.3f} s  cpu {c:8.3f} s  "
          f"{flops / w / 1e9:7.2f} GFLOP/s  {flops / c / 1e9:7.2f} GFLOP/cpu-s", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ops", default="chol,lauum,precond,trsm")
    ap.add_argument("--dtype", default="float64", choices=["float64", "float32"])
    ap.add_argument("--reps", type=int, default=0)
    ap.add_argument("sizes", nargs="*", type=int, default=[1000, 2000])
    args = ap.parse_args()
    ops = set(args.ops.split(","))
    f32 = args.dtype == "float32"
    potrf = lapack.spotrf if f32 else lapack.dpotrf
    lauum_ = lapack.slauum if f32 else lapack.dlauum
    trsm = blas.strsm if f32 else blas.dtrsm
    syrk = blas.ssyrk if f32 else blas.dsyrk
    p = "s" if f32 else "d"
    try:
        from scipy.linalg import _fblas
        core = ctypes.CDLL(_fblas.__file__).openblas_get_corename
        core.restype = ctypes.c_char_p
        print("OpenBLAS core:", core().decode(), flush=True)
    except (ImportError, OSError, AttributeError):
        pass
    for n in args.sizes:
        a = kernel_matrix(n, dtype=np.float32 if f32 else np.float64)
        reps = args.reps or (3 if n <= 5000 else 1)
        # Column-major lower factor = the row-major upper factor the Go code computes.
        out = {}

        def chol(c):
            c, info = potrf(c, lower=1, clean=0, overwrite_a=1)
            assert info == 0, info
            out["l"] = c

        def copy_a():
            return a.copy(order="F")

        if ops & {"chol", "lauum", "trsm", "trsmk"}:
            timed(p + "potrf", n, n**3 / 3, chol, reps, copy_a)
            l = out["l"]

        def lauum(c):
            c, info = lauum_(c, lower=1, overwrite_c=1)
            assert info == 0, info

        if "lauum" in ops:
            timed(p + "lauum", n, n**3 / 3, lauum, reps, lambda: l.copy(order="F"))

        def precond(t):
            t, info = potrf(t, lower=1, clean=0, overwrite_a=1)
            assert info == 0, info
            s, info = lauum_(t, lower=1, overwrite_c=1)
            assert info == 0, info
            s /= n
            s[np.diag_indices(n)] += 1e-6
            _, info = potrf(s, lower=1, clean=0, overwrite_a=1)
            assert info == 0, info

        if "precond" in ops:
            timed("precond", n, n**3, precond, reps, copy_a)
        q = n // 4
        if "syrk" in ops:
            x = np.asfortranarray(a[:, :q])
            c = np.ones((n, n), dtype=a.dtype, order="F")  # touched: no page faults in the timer
            timed(p + "syrk k=M/4", n, n * n * q,
                  lambda: syrk(1.0, x, beta=0.0, c=c, lower=1, trans=0, overwrite_c=1), reps)
        if "trsmk" in ops:
            bq = np.asfortranarray(a[:, :q])
            timed(p + "trsm k=M/4", n, n * n * q,
                  lambda b: trsm(1.0, l, b, lower=1, trans_a=0, overwrite_b=1), reps,
                  lambda: bq.copy(order="F"))
        if "trsm" not in ops:
            continue
        for k in (1, 10):
            b1 = np.asfortranarray(np.ones((n, k), dtype=a.dtype))
            for trans in (0, 1):
                timed(f"{p}trsm k={k} T={trans}", n, n * n * k,
                      lambda b: trsm(1.0, l, b, lower=1, trans_a=trans, overwrite_b=1), reps,
                      lambda: b1.copy(order="F"))


if __name__ == "__main__":
    main()
