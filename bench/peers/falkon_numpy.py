#!/usr/bin/python3
"""Peers for bench/fit: a numpy/scipy FALKON and scikit-learn Nystroem + Ridge.

Run by `go run ./bench/fit -mode speed` on the .npy files it writes
(PREFIX_x.npy, n x d float64, and PREFIX_y.npy); prints one JSON object.

--system numpy: FALKON (Rudi, Carratino, Rosasco, NIPS 2017, the MATLAB
listing of its appendix) with numpy/scipy:
    T = chol(K_MM + eps M I),  A = chol(T T^T / M + lam I)   (upper)
    W(b) = A^-T (T^-T K_nM^T K_nM T^-1 A^-1 b / n + lam A^-1 b)
    r    = A^-T T^-T K_nM^T y / n,  beta = CG(W, r, t),  alpha = T^-1 A^-1 beta
K_nM is never formed: each product streams X in row blocks of --block rows
(256 by default, so that the block x M kernel stays in cache: one BLAS GEMM
for the distances, two broadcast adds and np.exp in place, then both GEMVs
while the block is hot), on --threads Python threads over contiguous row
ranges (default: one per CPU in the affinity mask, so `taskset -c 0` runs
one) with OpenBLAS single-threaded. Memory is O(M^2 + threads x block x M)
beyond the data, which is held in RAM. --dtype float32
computes the kernel blocks and both products with them in float32 (the
M x M algebra stays float64), like falkon-ooc --precision float32.

--system sklearn: Nystroem(rbf, gamma = 1/(2 sigma^2), n_components = M)
then Ridge(alpha = lam n). With Phi = K_nM K_MM^{-1/2} and w = K_MM^{1/2} a,
Ridge's ||y - Phi w||^2 + alpha ||w||^2 is n times FALKON's
(1/n)||y - K_nM a||^2 + lam a^T K_MM a, so alpha = lam n is the same
estimator, up to Nystroem's pseudo-inverse (it drops tiny singular values
of K_MM) and Ridge's intercept (it centres Phi as well as y). Phi is n x M
in RAM: this peer is not out-of-core.

Both standardise features with the training mean and population standard
deviation and subtract the training mean of y, as falkon-ooc does. With
--centers (as bench/fit passes it) the numpy FALKON uses falkon-ooc's own
centres, read from its model, so that test errors compare the solvers;
otherwise, and always for sklearn, centres are M rows drawn uniformly
without replacement (test errors then also differ by the sampling noise of
the centres).
"""
import argparse
import json
import os
import sys
import time

# The numpy FALKON runs its own threads over row ranges (--threads), so
# OpenBLAS is single-threaded unless the caller says otherwise; this must
# be set before numpy loads OpenBLAS.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np
import scipy
import scipy.linalg as sla


def gauss_block(xb, c, c2, sigma, out):
    """out[:] = exp(-||xb_i - c_j||^2 / (2 sigma^2)), in out's dtype (reference path: predict, K_MM)."""
    np.matmul(xb, c.T, out=out)
    x2 = np.einsum("ij,ij->i", xb, xb)
    g = out.dtype.type(1.0 / sigma**2)
    h = out.dtype.type(-0.5 / sigma**2)
    out *= g
    out += (h * x2)[:, None]
    out += (h * c2)[None, :]
    np.minimum(out, 0, out=out)
    np.exp(out, out=out)
    return out


def default_threads():
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return 1


class KnM:
    """Streams products with K_nM over X in row blocks that stay in cache.

    X and C are scaled by 1/sigma once, and -|x|^2/2 (per row) and
    -|c|^2/2 (per centre) are precomputed, so a block costs one GEMM
    (X_b C^T), two broadcast adds and one exp, all in place in a buffer of
    block x M (block = 256 rows: 2 MiB in float64, 1 MiB in float32 at M = 2000; the
    sweep in bench/RESULTS.md picks it), then two GEMVs while the block is
    hot. With threads > 1 the rows are split into that many contiguous
    ranges, each run by a Python thread with its own buffer and partial
    vector (numpy's ufuncs and BLAS release the GIL) and OpenBLAS single-
    threaded; the partials are summed in a fixed order.
    """

    def __init__(self, x, c, sigma, dtype, block=256, threads=1):
        self.dtype = np.dtype(dtype)
        inv = 1.0 / sigma
        self.x = np.ascontiguousarray(x, dtype=self.dtype) * self.dtype.type(inv)
        self.c = np.ascontiguousarray(c * inv, dtype=self.dtype)
        self.hx2 = -0.5 * np.einsum("ij,ij->i", self.x, self.x)
        self.hc2 = (-0.5 * np.einsum("ij,ij->i", self.c, self.c))[None, :]
        self.block, self.threads = block, max(1, threads)
        m, n = c.shape[0], x.shape[0]
        self.bufs = [np.empty((block, m), dtype=self.dtype) for _ in range(self.threads)]
        step = -(-n // self.threads)
        self.ranges = [(lo, min(n, lo + step)) for lo in range(0, n, step)]
        self.pool = None
        if self.threads > 1:
            from concurrent.futures import ThreadPoolExecutor

            self.pool = ThreadPoolExecutor(self.threads)

    def _part(self, t, ud, v):
        lo0, hi0 = self.ranges[t]
        buf = self.bufs[t]
        x, c, hx2, hc2 = self.x, self.c, self.hx2, self.hc2
        w = np.zeros(c.shape[0], dtype=self.dtype)
        for lo in range(lo0, hi0, self.block):
            hi = min(hi0, lo + self.block)
            k = buf[: hi - lo]
            np.matmul(x[lo:hi], c.T, out=k)
            k += hx2[lo:hi, None]
            k += hc2
            np.exp(k, out=k)
            if ud is not None:
                tb = k @ ud
                if v is not None:
                    tb += v[lo:hi]
            else:
                tb = v[lo:hi]
            w += tb @ k
        return w

    def times(self, u, v):
        """K_nM^T (K_nM u + v), u of length M or None, v of length n or None."""
        ud = None if u is None else u.astype(self.dtype)
        vd = None if v is None else v.astype(self.dtype)
        if self.pool is None:
            parts = [self._part(0, ud, vd)]
        else:
            parts = list(self.pool.map(lambda t: self._part(t, ud, vd), range(len(self.ranges))))
        w = np.zeros(self.c.shape[0])
        for p in parts:
            w += p
        return w


def falkon(x, y, c, sigma, lam, iters, dtype, block, threads, jitter=1e-13):
    n, m = x.shape[0], c.shape[0]
    t0 = time.perf_counter()
    c64 = c.astype(np.float64)
    kmm = np.empty((m, m))
    gauss_block(c64, c64, np.einsum("ij,ij->i", c64, c64), sigma, kmm)
    kmm[np.diag_indices(m)] += jitter * m
    T = sla.cholesky(kmm, lower=False, overwrite_a=True)
    tt = T @ T.T / m
    tt[np.diag_indices(m)] += lam
    A = sla.cholesky(tt, lower=False, overwrite_a=True)
    del tt

    def b_apply(u):  # T^-1 A^-1 u
        return sla.solve_triangular(T, sla.solve_triangular(A, u, lower=False), lower=False)

    def bt_apply(u):  # A^-T T^-T u
        return sla.solve_triangular(A, sla.solve_triangular(T, u, trans="T", lower=False), trans="T", lower=False)

    op = KnM(x, c, sigma, dtype, block, threads)
    t_pre = time.perf_counter() - t0
    r = bt_apply(op.times(None, y / n))
    t_rhs = time.perf_counter() - t0 - t_pre

    def W(u):
        au = sla.solve_triangular(A, u, lower=False)
        return bt_apply(op.times(sla.solve_triangular(T, au, lower=False), None) / n) + lam * sla.solve_triangular(A, au, trans="T", lower=False)

    # Conjugate gradient, t iterations, no early stop (as the MATLAB listing).
    beta = np.zeros(m)
    p = r.copy()
    rr = r @ r
    t_cg0 = time.perf_counter()
    c_cg0 = time.process_time()
    for _ in range(iters):
        Ap = W(p)
        a = rr / (p @ Ap)
        beta += a * p
        r -= a * Ap
        rr_new = r @ r
        p = r + (rr_new / rr) * p
        rr = rr_new
    t_cg = time.perf_counter() - t_cg0
    c_cg = time.process_time() - c_cg0
    alpha = b_apply(beta)
    return alpha, time.perf_counter() - t0, t_cg / iters, t_pre, t_rhs, c_cg / iters


def predict(x, c, alpha, sigma, block=8192):
    out = np.empty(x.shape[0])
    c2 = np.einsum("ij,ij->i", c, c)
    buf = np.empty((block, c.shape[0]))
    for lo in range(0, x.shape[0], block):
        hi = min(x.shape[0], lo + block)
        out[lo:hi] = gauss_block(x[lo:hi], c, c2, sigma, buf[: hi - lo]) @ alpha
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--train", required=True, help="prefix of the training .npy files")
    ap.add_argument("--test", required=True, help="prefix of the test .npy files")
    ap.add_argument("--system", choices=["numpy", "sklearn"], default="numpy")
    ap.add_argument("--dtype", choices=["float64", "float32"], default="float64")
    ap.add_argument("--m", type=int, default=2000)
    ap.add_argument("--sigma", type=float, required=True)
    ap.add_argument("--lambda", dest="lam", type=float, default=1e-6)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--centers", help=".npy of M standardised centres to use (default: draw M training rows)")
    ap.add_argument("--block", type=int, default=256, help="rows per kernel block (numpy FALKON)")
    ap.add_argument("--threads", type=int, default=0, help="Python threads over row ranges, OpenBLAS single-threaded (0: one per CPU in the affinity mask)")
    a = ap.parse_args()

    x = np.load(a.train + "_x.npy")
    y = np.load(a.train + "_y.npy")
    xt = np.load(a.test + "_x.npy")
    yt = np.load(a.test + "_y.npy")
    t_start = time.perf_counter()
    mu, sd = x.mean(axis=0), x.std(axis=0)
    sd[sd == 0] = 1
    x -= mu
    x /= sd
    xt = (xt - mu) / sd
    ymean = y.mean()
    n = x.shape[0]
    rng = np.random.default_rng(a.seed)
    versions = "numpy %s, scipy %s, python %s" % (np.__version__, scipy.__version__, sys.version.split()[0])
    res = {"system": "", "iterations": a.iters, "seconds_per_iteration": 0.0}
    if a.system == "numpy":
        if a.dtype == "float32":
            x = x.astype(np.float32)  # halves the data in RAM as well
        if a.centers:
            c = np.load(a.centers)
            assert c.shape == (a.m, x.shape[1]), c.shape
        else:
            c = x[np.sort(rng.choice(n, size=a.m, replace=False))].astype(np.float64)
        threads = a.threads or default_threads()
        alpha, secs, per, t_pre, t_rhs, cpu_per = falkon(x, y - ymean, c, a.sigma, a.lam, a.iters, np.dtype(a.dtype), a.block, threads)
        secs = time.perf_counter() - t_start
        pred = predict(xt, c, alpha, a.sigma) + ymean
        res.update(system="numpy FALKON " + a.dtype, train_seconds=secs, seconds_per_iteration=per,
                   precond_seconds=t_pre, rhs_seconds=t_rhs, block=a.block, threads=threads,
                   cpu_seconds_per_iteration=cpu_per)
    else:
        import sklearn
        from sklearn.kernel_approximation import Nystroem
        from sklearn.linear_model import Ridge

        versions += ", scikit-learn " + sklearn.__version__
        ny = Nystroem(kernel="rbf", gamma=0.5 / a.sigma**2, n_components=a.m, random_state=a.seed)
        phi = ny.fit_transform(x)
        rid = Ridge(alpha=a.lam * n).fit(phi, y)
        secs = time.perf_counter() - t_start
        del phi
        pred = rid.predict(ny.transform(xt))
        res.update(system="sklearn Nystroem+Ridge", train_seconds=secs)
    res["test_rmse"] = float(np.sqrt(np.mean((pred - yt) ** 2)))
    res["versions"] = versions
    json.dump(res, sys.stdout)
    print()


if __name__ == "__main__":
    main()
