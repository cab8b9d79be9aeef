#!/usr/bin/env bash
# The float32 preconditioner's set-up (K_MM fill, T, T Tᵀ, A; bench/largem
# -mode setup) of a commit BEFORE against the working tree's, interleaved,
# pinned with taskset to the cores CPUS (default "0,1", both; "0" is one),
# REPS times each (issue #22, round 5). The setup mode is new in round 5:
# it is copied into BEFORE's tree, so BEFORE's preconditioner code runs.
# PRECS (default float32) is the working tree's -precisions, BEFORE_PRECS
# (default PRECS) BEFORE's; nystrom:R times the Nyström preconditioner of
# rank R (issue #23); BEFORE_FLAGS and FLAGS are more flags for each,
# e.g. BEFORE_FLAGS="-mu-precision float64" (ooc's fit before round 8):
#
#   BEFORE_PRECS=nystrom:8000 PRECS=float32,nystrom:8000 BEFORE_FLAGS="-mu-precision float64" \
#     bash bench/largem/setup.sh 8ed3c19 50000 2
#
#   bash bench/largem/setup.sh BEFORE [M] [REPS] [CPUS]
set -euo pipefail
cd "$(dirname "$0")/../.."
BEFORE=$1
M=${2:-20000}
REPS=${3:-2}
CPUS=${4:-0,1}
PRECS=${PRECS:-float32}
BEFORE_PRECS=${BEFORE_PRECS:-$PRECS}
n=$(( ${#CPUS} > 1 ? 2 : 1 ))
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
mkdir "$TMP/before"
git archive "$BEFORE" | tar -x -C "$TMP/before"
cp bench/largem/main.go "$TMP/before/bench/largem/main.go"
(cd "$TMP/before" && go build -o "$TMP/largem-before" ./bench/largem)
go build -o "$TMP/largem-after" ./bench/largem
# The builds raise the load: wait (at most 5 min) until it is below 1.0.
for _ in $(seq 20); do
  awk '{exit !($1 < 1.0)}' /proc/loadavg && break
  sleep 15
done
echo "after $(git rev-parse --short HEAD)  before $BEFORE  M=$M reps=$REPS cpus=$CPUS  $(date -u +%FT%TZ)"
for rep in $(seq "$REPS"); do
  for which in before after; do
    p=$PRECS f=${FLAGS:-}
    [ "$which" = before ] && p=$BEFORE_PRECS f=${BEFORE_FLAGS:-}
    echo "== rep $rep $which cpus $CPUS load $(cut -d' ' -f1-3 /proc/loadavg)"
    taskset -c "$CPUS" env GOMAXPROCS=$n "$TMP/largem-$which" -mode setup -centers "$M" \
      -precisions "$p" -sigma 1 -lambda 1e-7 $f | grep -E '^\| [0-9]'
  done
done
echo "load after $(cut -d' ' -f1-3 /proc/loadavg)"
