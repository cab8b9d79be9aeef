#!/bin/sh
# make.sh regenerates the Hive-partitioned fixture in this directory with
# DuckDB from the npm registry (cached outside the repository, as in
# ../make.sh). The tests need only the committed files, no network.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
cache=${INTEROP_NODE_DIR:-/tmp/interop-node}
mkdir -p "$cache"
if [ ! -f "$cache/package.json" ]; then
	(cd "$cache" && npm init -y >/dev/null)
fi
(cd "$cache" && npm install --no-audit --no-fund @duckdb/node-api@1.5.6-r.1 >/dev/null)
cp "$here/make.mjs" "$cache/make-hive.mjs"
cd "$here"
node "$cache/make-hive.mjs"
find data -type f | sort
