#!/bin/sh
# run.sh DIR NAME — the timing-grade figures of bench/BEAM.md, on the
# binaries and data prep.sh made in DIR. Takes /work/BENCH_RUNNING
# atomically (gives up if it is held), waits for the 1-minute load to
# fall below 1.0, then runs, pinned to both cores (taskset -c 0,1),
# interleaved, 2 repetitions of:
#   ingest: falkon-ooc ingest against falkon-ooc-beam ingest (Prism in
#           process, 16 partitions), of one 2 M × 28 Parquet file and of
#           the same rows as four files;
#   fit:    200 000 × 28, M = 1000, 5 CG iterations: falkon-ooc fit (the
#           local executor), falkon-ooc-beam fit on Prism in process
#           (P = 4), and across processes (Prism its own process, the
#           workers Beam's PROCESS environment, the driver a third).
# Prints one TSV line per run (what, rep, wall s, s/iteration, jobs,
# s in jobs, load at start) to DIR/timing-NAME.tsv; releases the flag.
set -eu
dir=${1:?usage: run.sh DIR NAME}
name=${2:?usage: run.sh DIR NAME}
bin=$dir/bin
flag=/work/BENCH_RUNNING
( set -o noclobber; echo "$name: beam timing $(date -u +%T)" > $flag ) 2>/dev/null || { echo "held: $(cat $flag)" >&2; exit 1; }
prism_pid=
cleanup() {
	[ -n "$prism_pid" ] && kill "$prism_pid" 2>/dev/null || true
	rm -f $flag
}
trap cleanup EXIT INT TERM
while :; do
	load=$(cut -d' ' -f1 /proc/loadavg)
	awk -v l="$load" 'BEGIN { exit !(l < 1.0) }' && break
	echo "load $load: waiting" >&2
	sleep 30
done
out=$dir/timing-$name.tsv
echo "# $(date -u +%FT%TZ) commit $(cd "$(dirname "$0")" && git rev-parse --short HEAD) load-at-start $load nproc $(nproc)" > "$out"
printf 'what\trep\twall_s\ts_per_iter\tjobs\tjob_s\tload\n' >> "$out"
now() { date +%s.%N; }
load1() { cut -d' ' -f1 /proc/loadavg; }
T="taskset -c 0,1"

# Prism as its own process, on a free loopback port.
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
mkdir -p "$dir/prism" "$dir/temp" "$dir/stage"
(cd "$dir/prism" && exec $T "$bin/prism" --job_port=$port --serve_http=false --log_level=warn) > "$dir/prism.log" 2>&1 &
prism_pid=$!
sleep 3

fitflags="--centers 1000 --iters 5 --lambda 1e-6 --sigma 5 --seed 1 --no-checkpoint --json --quiet"
for rep in 1 2; do
	for what in ingest-one-local ingest-one-beam ingest-four-local ingest-four-beam; do
		case $what in *one*) in=$dir/one;; *) in=$dir/four;; esac
		rm -rf "$dir/store-$what"
		l=$(load1); t0=$(now)
		case $what in
		*local) $T "$bin/falkon-ooc" ingest --quiet --out "$dir/store-$what" "$in" > /dev/null;;
		*beam) $T "$bin/falkon-ooc-beam" ingest --quiet --out "$dir/store-$what" "$in" > /dev/null;;
		esac
		t1=$(now)
		printf '%s\t%d\t%.3f\t\t\t\t%s\n' "$what" $rep "$(echo "$t1 - $t0" | bc)" "$l" >> "$out"
		rm -rf "$dir/store-$what"
	done
	for what in fit-local fit-prism fit-processes; do
		l=$(load1); t0=$(now)
		case $what in
		fit-local) j=$($T "$bin/falkon-ooc" fit $fitflags --out "$dir/m-$what" "$dir/fit.store");;
		fit-prism) j=$($T "$bin/falkon-ooc-beam" fit $fitflags --partitions 4 --out "$dir/m-$what" "$dir/fit.store");;
		fit-processes) j=$(cd "$dir/prism" && $T "$bin/falkon-ooc-beam" fit $fitflags --partitions 4 --out "$dir/m-$what" \
			--runner universal --endpoint localhost:$port --temp "$dir/temp" \
			--job-opts "environment_type=PROCESS,environment_config={\"command\":\"$bin/boot.sh\"},worker_binary=$bin/falkon-ooc-beam" \
			"$dir/fit.store");;
		esac
		t1=$(now)
		spi=$(printf '%s' "$j" | python3 -c 'import json,sys; print(json.load(sys.stdin)["seconds_per_iteration"])')
		jobs=$(printf '%s' "$j" | python3 -c 'import json,sys; d=json.load(sys.stdin); b=d.get("beam") or {}; print(b.get("jobs",""), b.get("job_seconds",""))')
		printf '%s\t%d\t%.3f\t%s\t%s\t%s\t%s\n' "$what" $rep "$(echo "$t1 - $t0" | bc)" "$spi" "${jobs% *}" "${jobs#* }" "$l" >> "$out"
	done
done
echo "# end $(date -u +%T) load $(load1)" >> "$out"
# The boot program copies the worker binary to a new /tmp/bin* per worker
# per job (Beam v2.77.0): remove those of this run.
find /tmp -maxdepth 1 -name 'bin*' -newer "$dir/prism.log" -type d -exec sh -c '[ -f "$1/worker" ] && rm -rf "$1"' _ {} \; 2>/dev/null || true
cat "$out"
