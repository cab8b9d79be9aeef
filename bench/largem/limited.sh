#!/usr/bin/env bash
# One fit with default flags and --centers 20000 under a memory cgroup (v1, default 1 GiB), then predict.
# The default --max-memory is then 80 % of the cgroup's limit: the memory plan chooses the preconditioner.
# Usage: bench/largem/limited.sh BIN DATA OUT NAME [extra fit flags...]
#   DATA holds train.store and test.store (go run ./bench/largem -mode gen -dir DATA -n 1000000 -ntest 100000,
#   then falkon-ooc ingest); LIMIT=bytes overrides the cgroup's limit. Needs root.
#   TIMEOUT=seconds stops the fit with SIGINT after that long (it keeps its checkpoint of the last
#   iteration), and RESUME=1 continues it (--resume): a long fit in pieces of under 10 minutes.
#   The predictions are made only when the fit ends by itself.
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
PART=${RESUME:+.resume$(date +%s)}
RES=${RESUME:+--resume}
TO=${TIMEOUT:+timeout -s INT $TIMEOUT}
bash -c "echo \$\$ > $CG/cgroup.procs; exec /usr/bin/time -v $TO $BIN fit --out $OUT/$NAME.falkon --centers 20000 --json $RES $* $DATA/train.store" \
	> "$OUT/$NAME$PART.json" 2> "$OUT/$NAME$PART.err" || rc=$?
echo "== $NAME end $(date -u +%T) rc=$rc load $(cut -d' ' -f1-3 /proc/loadavg) cgroup max_usage $(cat "$CG/memory.max_usage_in_bytes")" >> "$OUT/log"
[ "$rc" = 0 ] || exit "$rc"
"$BIN" predict --model "$OUT/$NAME.falkon" --json "$DATA/test.store" > "$OUT/$NAME.predict.json"
