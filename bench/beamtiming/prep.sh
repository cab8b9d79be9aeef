#!/bin/sh
# prep.sh DIR — builds the binaries and writes the data that run.sh times
# (bench/BEAM.md "Timing-grade figures"). Builds: run it while
# /work/BENCH_RUNNING is free, never during a timing run.
#
#   DIR/bin/{falkon-ooc,falkon-ooc-beam,prism,boot,boot.sh}
#   DIR/fit.store            200 000 rows × 28 features + target (falkon-ooc ingest of a CSV)
#   DIR/one/bench.parquet    2 000 000 × 28 float64 Parquet (bench/ingest's writer), one file
#   DIR/four/part-{0..3}.parquet   the same rows as four files of 500 000
set -eu
dir=${1:?usage: prep.sh DIR}
repo=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$dir/bin" "$dir/one" "$dir/four"
bin=$dir/bin
(cd "$repo" && go build -o "$bin/falkon-ooc" ./cmd/falkon-ooc)
(cd "$repo/beam" && go build -o "$bin/falkon-ooc-beam" ./cmd/falkon-ooc-beam &&
	go build -o "$bin/prism" github.com/apache/beam/sdks/v2/go/cmd/prism &&
	go build -o "$bin/boot" github.com/apache/beam/sdks/v2/go/container)
# Prism's PROCESS environment passes --id='ID' with the quotes (Beam
# v2.77.0); the boot program needs them stripped (see
# beam/cmd/falkon-ooc-beam/multiprocess_test.go).
cat > "$bin/boot.sh" <<EOS
#!/bin/sh
for a in "\$@"; do
  case "\$a" in
    --id=\\'*\\') a="--id=\$(printf '%s' "\$a" | sed "s/^--id='\\(.*\\)'\\\$/\\1/")";;
  esac
  set -- "\$@" "\$a"
  shift
done
exec $bin/boot "\$@" --semi_persist_dir=$dir/stage
EOS
chmod +x "$bin/boot.sh"

if [ ! -d "$dir/fit.store" ]; then
	awk 'BEGIN { srand(7); printf "y"; for (j = 0; j < 28; j++) printf ",x%d", j; print "";
		for (i = 0; i < 200000; i++) { s = 0; line = "";
			for (j = 0; j < 28; j++) { v = rand() * 4 - 2; s += v * (j % 3 - 1); line = line "," v }
			print s * s / 4 line } }' > "$dir/fit.csv"
	"$bin/falkon-ooc" ingest --quiet --out "$dir/fit.store" --target y "$dir/fit.csv"
	rm "$dir/fit.csv"
fi
if [ ! -f "$dir/one/bench.parquet" ]; then
	(cd "$repo" && go run ./bench/ingest -dir "$dir/gen" -rows 2000000 -codecs s2 >/dev/null)
	mv "$dir/gen/bench-2000000-snappy.parquet" "$dir/one/bench.parquet"
	(cd "$repo" && go run ./bench/ingest -dir "$dir/gen" -rows 500000 -codecs s2 >/dev/null)
	for k in 0 1 2 3; do cp "$dir/gen/bench-500000-snappy.parquet" "$dir/four/part-$k.parquet"; done
	rm -rf "$dir/gen"
fi
echo "prepared $dir" >&2
