#!/usr/bin/env bash
# The large-M CLI fits of bench/RESULTS.md ("M = 5·10⁴ (float32) and
# 4·10⁴ (float64) on 10⁶ rows"): each fit runs in a cgroup v1 memory child
# (limit 16 GiB) under /usr/bin/time -v for its peak RSS, then predicts the
# test store. Needs root (cgroup), and the stores of
#   go run ./bench/largem -mode gen -dir DATA -n 1000000
# Usage: bash bench/largem/cli_runs.sh BIN DATA OUT [M:precision …]
# (default list: 50000:float32 40000:float64 20000:float32 10000:float32
#  5000:float32 2000:float32 1000:float32). Results: OUT/NAME.json (fit),
# OUT/NAME.predict.json (test RMSE), OUT/NAME.err (progress and time -v),
# OUT/log (start, end, load and the cgroup's max usage of each run).
set -uo pipefail
BIN=${1:?falkon-ooc binary}; DATA=${2:?data dir}; OUT=${3:?output dir}; shift 3
RUNS=("$@")
[ ${#RUNS[@]} -gt 0 ] || RUNS=(50000:float32 40000:float64 20000:float32 10000:float32 5000:float32 2000:float32 1000:float32)
CG=/sys/fs/cgroup/memory$(awk -F: '$2=="memory"{print $3}' /proc/self/cgroup)/falkon-largem
mkdir -p "$OUT" "$CG"
echo $((16 << 30)) > "$CG/memory.limit_in_bytes"
for r in "${RUNS[@]}"; do
  m=${r%%:*}; prec=${r##*:}; name=m$m-$prec
  echo 0 > "$CG/memory.max_usage_in_bytes"
  echo "== $name start $(date -u +%T) load $(cat /proc/loadavg)" >> "$OUT/log"
  bash -c "echo \$\$ > $CG/cgroup.procs; exec /usr/bin/time -v $BIN fit --out $OUT/$name.falkon \
    --sigma 0.7 --lambda 1e-7 --iters 10 --no-checkpoint --max-memory 15GiB --json \
    --centers $m --precond-precision $prec $DATA/train.store" > "$OUT/$name.json" 2> "$OUT/$name.err"
  echo "== $name end $(date -u +%T) rc=$? load $(cat /proc/loadavg) cgroup max_usage $(cat $CG/memory.max_usage_in_bytes)" >> "$OUT/log"
  "$BIN" predict --model "$OUT/$name.falkon" --json "$DATA/test.store" > "$OUT/$name.predict.json" 2> "$OUT/$name.predict.err"
done
echo "== all done $(date -u +%T)" >> "$OUT/log"
