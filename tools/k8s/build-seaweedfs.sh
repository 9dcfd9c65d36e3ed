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
bin_dir="$("$here/build.sh" --print-bin-dir)"
force=0
for arg in "$@"; do
  case "$arg" in
    --force) force=1 ;;
    --print-path) echo "$bin_dir/weed"; exit 0 ;;
    -h|--help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "build-seaweedfs.sh: unknown argument '$arg' (try --help)" >&2; exit 2 ;;
  esac
done
if ! command -v go >/dev/null 2>&1; then
  echo "error: the Go toolchain is not installed (fix: install Go >= 1.26 and put 'go' on PATH)." >&2
  exit 1
fi
version="$(awk '$1 == "github.com/seaweedfs/seaweedfs" { print $2 }' "$here/seaweedfs/go.mod")"
stamp_file="$bin_dir/.stamp-weed"
want="$(cat "$here/seaweedfs/go.mod" "$here/seaweedfs/go.sum" | sha256sum | cut -c1-16) $(go env GOVERSION)"
if [ "$force" = 0 ] && [ -x "$bin_dir/weed" ] && [ "$want" = "$(cat "$stamp_file" 2>/dev/null)" ]; then
  echo "==> weed up to date ($version, $bin_dir/weed)"
  exit 0
fi
echo "==> building SeaweedFS (weed) $version (several minutes on 2 cores) ..."
mkdir -p "$bin_dir"
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
echo "$want" >"$stamp_file"
echo "    weed built in $(( $(date +%s) - t0 ))s: $bin_dir/weed"
