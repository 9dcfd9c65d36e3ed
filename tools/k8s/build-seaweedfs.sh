#!/usr/bin/env bash
# Builds SeaweedFS's `weed` (its S3 gateway is the sandbox's S3-compatible server, `gryvia
# sandbox up --s3`, gryvia_cli/sandbox/s3.py) from the Go module proxy at the pseudo-version
# pinned in the wrapper module tools/k8s/seaweedfs/go.mod, into the same binary cache as
# build.sh. Niced, one package at a time (-p=1): other work shares the cores. Time and size:
# see the README.
#
# Output: <bin dir>/weed, where <bin dir> is `tools/k8s/build.sh --print-bin-dir`.
# Idempotent: skipped when the binary of the pinned version is there.
# Usage: tools/k8s/build-seaweedfs.sh [--print-path] [--force]
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$here/lib.sh"
build_args weed 10 "$@"
need_go
version="$(awk '$1 == "github.com/seaweedfs/seaweedfs" { print $2 }' "$here/seaweedfs/go.mod")"
want="$(cat "$here/seaweedfs/go.mod" "$here/seaweedfs/go.sum" | sha256sum | cut -c1-16) $(go env GOVERSION)"
skip_if_built weed "$want" "$version"
echo "==> building SeaweedFS (weed) $version (several minutes on 2 cores) ..."
t0=$(date +%s)
log="$(mktemp)"
export GOFLAGS="${GOFLAGS:-} -mod=mod -p=1" CGO_ENABLED=0
if ! ( cd "$here/seaweedfs" && nice -n 19 go build -trimpath -ldflags "-s -w" -o "$bin_dir/weed" \
    github.com/seaweedfs/seaweedfs/weed ) >"$log" 2>&1; then
  tail -n 40 "$log" >&2
  if grep -qiE 'dial tcp|no such host|proxy|connection refused|i/o timeout' "$log"; then
    echo "error: could not download Go modules for SeaweedFS: the Go module proxy is unreachable (check GOPROXY and the network)." >&2
  else
    echo "error: building SeaweedFS failed (full log: $log)." >&2
  fi
  exit 1
fi
rm -f "$log"
stamp weed "$want" "$t0"
