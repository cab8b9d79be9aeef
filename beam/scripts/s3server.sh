#!/bin/sh
# s3server.sh — an S3 server on a loopback port for falkon-ooc-beam's
# object-storage test (TestS3ServerProcess in cmd/falkon-ooc-beam).
#
#   beam/scripts/s3server.sh install      installs gofakes3 into $GOBIN (or $(go env GOPATH)/bin)
#   beam/scripts/s3server.sh test         installs it if missing, then runs the test against it
#   beam/scripts/s3server.sh run [PORT]   serves bucket "bucket" on 127.0.0.1:PORT (default 9000), in memory
#
# The server is gofakes3 v1.2.0 (Apache-2.0): a small S3 implementation in
# Go, not a production server. The test starts it as its own process on
# a free loopback port, points the AWS SDK at it with AWS_ENDPOINT_URL and
# test credentials, and stops it at the end. SeaweedFS (weed, Apache-2.0)
# would be a real server, but `go install` of it is refused: its go.mod
# has replace directives.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
version=v1.2.0
bindir=${GOBIN:-$(go env GOPATH)/bin}
bin=$bindir/gofakes3

install() {
	GOBIN=$bindir go install "github.com/johannesboyne/gofakes3/cmd/gofakes3@$version"
	echo "installed $bin" >&2
}

case ${1:-} in
install)
	install
	;;
test)
	[ -x "$bin" ] || install
	cd "$here"
	FALKON_OOC_S3_SERVER=$bin go test -count=1 -run 'TestS3ServerProcess' -v ./cmd/falkon-ooc-beam/
	;;
run)
	[ -x "$bin" ] || install
	port=${2:-9000}
	echo "serving s3://bucket on http://127.0.0.1:$port; use:" >&2
	echo "  AWS_ENDPOINT_URL=http://127.0.0.1:$port AWS_REGION=us-east-1 AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test falkon-ooc-beam ingest --out s3://bucket/STORE …" >&2
	exec "$bin" -backend memory -initialbucket bucket -host "127.0.0.1:$port"
	;;
*)
	sed -n '2,15p' "$0" >&2
	exit 2
	;;
esac
