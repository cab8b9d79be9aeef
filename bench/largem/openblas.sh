#!/usr/bin/env bash
# Dense algebra of the one-buffer preconditioner against OpenBLAS (issue
# #14): T = chol(K), S = T Tᵀ/M + λI, A = chol(S) on the packed layout
# (internal/dense BenchmarkPacked) against dpotrf/dlauum/dpotrf (and the
# s* routines for float32) from scipy's LAPACK, at M = 10⁴ by default.
# Interleaved, pinned with taskset to one core and to both, -reps times;
# take the minimum of each. Needs python3-scipy (Debian, OpenBLAS).
#
#   bash bench/largem/openblas.sh [M] [reps]
set -euo pipefail
cd "$(dirname "$0")/../.."
M=${1:-10000}
REPS=${2:-2}
PY=/usr/bin/python3
BIN=$(mktemp -d)/dense.test
go test -c -o "$BIN" ./internal/dense
echo "commit $(git rev-parse --short HEAD)  M=$M reps=$REPS  $(date -u +%FT%TZ)"
for rep in $(seq "$REPS"); do
  for cpus in 0 0,1; do
    n=$(( ${#cpus} > 1 ? 2 : 1 ))
    for prec in float64 float32; do
      echo "== rep $rep cpus $cpus $prec load $(cut -d' ' -f1-3 /proc/loadavg)"
      taskset -c "$cpus" env GOMAXPROCS=$n "$BIN" -test.run XXX \
        -test.bench "Packed/prec=$prec/M=$M\$" -test.benchtime 1x | grep -E '^Benchmark'
      taskset -c "$cpus" env OPENBLAS_NUM_THREADS=$n "$PY" internal/dense/testdata/lapack_bench.py \
        --ops precond --dtype "$prec" --reps 1 "$M"
    done
  done
done
echo "load after $(cut -d' ' -f1-3 /proc/loadavg)"
rm -rf "$(dirname "$BIN")"
