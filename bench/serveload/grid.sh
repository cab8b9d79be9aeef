#!/usr/bin/env bash
# grid.sh build DIR   build falkon-ooc and serveload into DIR and write the two
#                     models of bench/SERVE.md (run it under /work/bin/slot)
# grid.sh run DIR     the grid: the server on CPU 0, the load generator on CPU 1,
#                     2 interleaved repetitions of 3 s a cell (run it under
#                     /work/bin/quiet; about 6 minutes)
# It prints the commit, the machine, and the load at the start and the end.
set -euo pipefail
mode=${1:?usage: grid.sh build|run DIR}
dir=${2:?usage: grid.sh build|run DIR}
root=$(cd "$(dirname "$0")/../.." && pwd)
case $mode in
build)
	mkdir -p "$dir"
	cd "$root"
	go build -o "$dir/falkon-ooc" ./cmd/falkon-ooc
	go build -o "$dir/serveload" ./bench/serveload
	git rev-parse --short HEAD >"$dir/commit"
	"$dir/serveload" model -m 2000 -d 28 -out "$dir/m2000.falkon"
	"$dir/serveload" model -m 10000 -d 28 -out "$dir/m10000.falkon"
	;;
run)
	echo "commit $(cat "$dir/commit"); $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); $(uname -sr); $(go version | cut -d' ' -f3)"
	echo "start $(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg)"
	"$dir/serveload" grid -bin "$dir/falkon-ooc" -models "$dir/m2000.falkon,$dir/m10000.falkon" -reps 2 -duration 3s
	echo "end $(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg)"
	;;
*)
	echo "usage: grid.sh build|run DIR" >&2
	exit 2
	;;
esac
