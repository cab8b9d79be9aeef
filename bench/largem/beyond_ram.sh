#!/usr/bin/env bash
# Issue #23's M = 10⁵ fit (bench/RESULTS.md, "Beyond RAM"): a fit on the
# 10⁶-row store of
#   go run ./bench/largem -mode gen -dir DATA -n 1000000
# with the Nyström preconditioner, in a cgroup v1 memory child with a
# limit of 20 GiB, under /usr/bin/time -v for its peak RSS, then predict on
# the test store. Needs root (cgroup).
# Usage: bash bench/largem/beyond_ram.sh BIN DATA OUT [M:rank:iters …]
# (default 100000:4000:10). Results: OUT/NAME.json (fit --json),
# OUT/NAME.predict.json (test RMSE), OUT/NAME.err (progress and time -v),
# OUT/log (start, end, load and the cgroup's max usage of each run).
set -uo pipefail
BIN=${1:?falkon-ooc binary}; DATA=${2:?data dir}; OUT=${3:?output dir}; shift 3
RUNS=("$@")
[ ${#RUNS[@]} -gt 0 ] || RUNS=(100000:4000:10)
CG=/sys/fs/cgroup/memory$(awk -F: '$2=="memory"{print $3}' /proc/self/cgroup)/falkon-beyond-ram
mkdir -p "$OUT" "$CG"
echo $((20 << 30)) > "$CG/memory.limit_in_bytes"
for run in "${RUNS[@]}"; do
  IFS=: read -r m r it <<< "$run"; name=m$m-r$r-it$it
  echo 0 > "$CG/memory.max_usage_in_bytes"
  echo "== $name start $(date -u +%T) load $(cat /proc/loadavg)" >> "$OUT/log"
  bash -c "echo \$\$ > $CG/cgroup.procs; exec /usr/bin/time -v $BIN fit --out $OUT/$name.falkon \
    --sigma 0.7 --lambda 1e-7 --iters $it --precision float32 --max-memory 19GiB --json \
    --centers $m --precond nystrom --precond-rank $r $DATA/train.store" > "$OUT/$name.json" 2> "$OUT/$name.err"
  echo "== $name end $(date -u +%T) rc=$? load $(cat /proc/loadavg) cgroup max_usage $(cat $CG/memory.max_usage_in_bytes)" >> "$OUT/log"
  "$BIN" predict --model "$OUT/$name.falkon" --json "$DATA/test.store" > "$OUT/$name.predict.json" 2> "$OUT/$name.predict.err"
done
echo "== all done $(date -u +%T)" >> "$OUT/log"
