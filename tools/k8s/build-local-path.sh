#!/usr/bin/env bash
# Builds Rancher's local-path-provisioner (a Go module, v0.0.30) into the same binary cache as
# build.sh (beside kubectl): the sandbox's dynamic volume provisioner (`gryvia sandbox up
# --storage`, gryvia_cli/sandbox/storage.py). Niced, one package at a time (-p=1): other work
# shares the cores. Time and size: see the README.
#
# Output: <bin dir>/local-path-provisioner, where <bin dir> is `tools/k8s/build.sh --print-bin-dir`.
# Idempotent: skipped when the binary of the pinned version is there.
# Usage: tools/k8s/build-local-path.sh [--print-path] [--force]
set -euo pipefail

version="v0.0.30"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bin_dir="$("$here/build.sh" --print-bin-dir)"
force=0
for arg in "$@"; do
  case "$arg" in
    --force) force=1 ;;
    --print-path) echo "$bin_dir/local-path-provisioner"; exit 0 ;;
    -h|--help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "build-local-path.sh: unknown argument '$arg' (try --help)" >&2; exit 2 ;;
  esac
done
if ! command -v go >/dev/null 2>&1; then
  echo "error: the Go toolchain is not installed (fix: install Go >= 1.26 and put 'go' on PATH)." >&2
  exit 1
fi
stamp_file="$bin_dir/.stamp-local-path-provisioner"
want="$version $(go env GOVERSION)"
if [ "$force" = 0 ] && [ -x "$bin_dir/local-path-provisioner" ] && [ "$want" = "$(cat "$stamp_file" 2>/dev/null)" ]; then
  echo "==> local-path-provisioner up to date ($version, $bin_dir/local-path-provisioner)"
  exit 0
fi
echo "==> building local-path-provisioner $version ..."
mkdir -p "$bin_dir"
t0=$(date +%s)
if ! GOFLAGS="${GOFLAGS:-} -p=1" CGO_ENABLED=0 GOBIN="$bin_dir" nice -n 19 \
    go install "github.com/rancher/local-path-provisioner@$version"; then
  echo "error: building local-path-provisioner failed; check that the Go module proxy is reachable (GOPROXY)." >&2
  exit 1
fi
echo "$want" >"$stamp_file"
echo "    local-path-provisioner built in $(( $(date +%s) - t0 ))s: $bin_dir/local-path-provisioner"
