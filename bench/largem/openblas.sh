#!/usr/bin/env bash
# Dense algebra of the one-buffer preconditioner against OpenBLAS (issue
# #14): T = chol(K), S = T Tᵀ/M + λI, A = chol(S) on the packed layout
# (internal/dense BenchmarkPacked) against dpotrf/dlauum/dpotrf (and the
# s* routines for float32) from scipy's LAPACK, at M = 10⁴ by default.
# Interleaved, pinned with taskset to one core and to both, -reps times;
# take the minimum of each. Needs python3-scipy (Debian, OpenBLAS).
#
#   bash bench/largem/openblas.sh [M] [reps]
#
# Environment (issue #22, round 5):
#   PRECS="float64 float32"  the precisions to run (default both)
#   BEFORE=<commit>          also run that commit's BenchmarkPacked, interleaved
#   OPS32=1                  also the float32 building blocks: BenchmarkOps32
#                            (potrf, lauum, syrk, trsm) against spotrf, slauum,
#                            ssyrk and strsm (lapack_bench.py --ops chol,lauum,syrk,trsmk)
set -euo pipefail
cd "$(dirname "$0")/../.."
M=${1:-10000}
REPS=${2:-2}
PRECS=${PRECS:-float64 float32}
PY=/usr/bin/python3
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
BIN=$TMP/dense.test
go test -c -o "$BIN" ./internal/dense
if [ -n "${BEFORE:-}" ]; then
  mkdir "$TMP/before"
  git archive "$BEFORE" | tar -x -C "$TMP/before"
  (cd "$TMP/before" && go test -c -o "$TMP/before.test" ./internal/dense)
fi
echo "commit $(git rev-parse --short HEAD)${BEFORE:+  before $BEFORE}  M=$M reps=$REPS  $(date -u +%FT%TZ)"
for rep in $(seq "$REPS"); do
  for cpus in 0 0,1; do
    n=$(( ${#cpus} > 1 ? 2 : 1 ))
    for prec in $PRECS; do
      echo "== rep $rep cpus $cpus $prec load $(cut -d' ' -f1-3 /proc/loadavg)"
      if [ -n "${BEFORE:-}" ]; then
        echo -n "before: "
        taskset -c "$cpus" env GOMAXPROCS=$n "$TMP/before.test" -test.run XXX \
          -test.bench "Packed/prec=$prec/M=$M\$" -test.benchtime 1x | grep -E '^Benchmark'
      fi
      taskset -c "$cpus" env GOMAXPROCS=$n "$BIN" -test.run XXX \
        -test.bench "Packed/prec=$prec/M=$M\$" -test.benchtime 1x | grep -E '^Benchmark'
      taskset -c "$cpus" env OPENBLAS_NUM_THREADS=$n "$PY" internal/dense/testdata/lapack_bench.py \
        --ops precond --dtype "$prec" --reps 1 "$M"
    done
    if [ -n "${OPS32:-}" ]; then
      echo "== rep $rep cpus $cpus ops32 load $(cut -d' ' -f1-3 /proc/loadavg)"
      taskset -c "$cpus" env GOMAXPROCS=$n "$BIN" -test.run XXX \
        -test.bench "Ops32/op=.*/M=$M\$" -test.benchtime 1x | grep -E '^Benchmark'
      taskset -c "$cpus" env OPENBLAS_NUM_THREADS=$n "$PY" internal/dense/testdata/lapack_bench.py \
        --ops chol,lauum,syrk,trsmk --dtype float32 --reps 1 "$M"
    fi
  done
done
echo "load after $(cut -d' ' -f1-3 /proc/loadavg)"
