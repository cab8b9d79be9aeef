#!/bin/sh
# make.sh regenerates the interop fixtures in this directory with DuckDB and
# Polars from the npm registry. The packages go to a cache directory outside
# the repository (INTEROP_NODE_DIR, default /tmp/interop-node); the tests
# need only the committed fixtures, no network.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
cache=${INTEROP_NODE_DIR:-/tmp/interop-node}
mkdir -p "$cache"
if [ ! -f "$cache/package.json" ]; then
	(cd "$cache" && npm init -y >/dev/null)
fi
# Versions pinned so that the fixtures are reproducible. nodejs-polars ships
# its native library as a separate, platform-specific package.
(cd "$cache" && npm install --no-audit --no-fund \
	@duckdb/node-api@1.5.6-r.1 nodejs-polars@0.26.1 \
	"nodejs-polars-$(node -p 'process.platform + "-" + process.arch')-gnu@0.26.1" >/dev/null)
cd "$here"
# ES modules ignore NODE_PATH: run a copy of make.mjs from inside the cache.
cp make.mjs "$cache/make.mjs"
node "$cache/make.mjs"
ls -l "$here"
