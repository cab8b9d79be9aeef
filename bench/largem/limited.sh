#!/usr/bin/env bash
# One fit with default flags and --centers 20000 under a memory cgroup (v1, default 1 GiB), then predict.
# The default --max-memory is then 80 % of the cgroup's limit: the memory plan chooses the preconditioner.
# Usage: bench/largem/limited.sh BIN DATA OUT NAME [extra fit flags...]
#   DATA holds train.store and test.store (go run ./bench/largem -mode gen -dir DATA -n 1000000 -ntest 100000,
#   then falkon-ooc ingest); LIMIT=bytes overrides the cgroup's limit. Needs root.
set -eu
BIN=$1 DATA=$2 OUT=$3 NAME=$4
shift 4
LIMIT=${LIMIT:-$((1 << 30))}
CG=/sys/fs/cgroup/memory/falkon-limited
mkdir -p "$CG" "$OUT"
echo "$LIMIT" > "$CG/memory.limit_in_bytes"
echo 0 > "$CG/memory.max_usage_in_bytes" 2>/dev/null || true
echo "== $NAME start $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg) bin $BIN flags $*" >> "$OUT/log"
rc=0
bash -c "echo \$\$ > $CG/cgroup.procs; exec /usr/bin/time -v $BIN fit --out $OUT/$NAME.falkon --centers 20000 --json $* $DATA/train.store" \
	> "$OUT/$NAME.json" 2> "$OUT/$NAME.err" || rc=$?
echo "== $NAME end $(date -u +%T) rc=$rc load $(cut -d' ' -f1-3 /proc/loadavg) cgroup max_usage $(cat "$CG/memory.max_usage_in_bytes")" >> "$OUT/log"
"$BIN" predict --model "$OUT/$NAME.falkon" --json "$DATA/test.store" > "$OUT/$NAME.predict.json"
