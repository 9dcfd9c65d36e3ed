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
. "$here/lib.sh"
build_args local-path-provisioner 9 "$@"
need_go
want="$version $(go env GOVERSION)"
skip_if_built local-path-provisioner "$want" "$version"
echo "==> building local-path-provisioner $version ..."
t0=$(date +%s)
if ! GOFLAGS="${GOFLAGS:-} -p=1" CGO_ENABLED=0 GOBIN="$bin_dir" nice -n 19 \
    go install "github.com/rancher/local-path-provisioner@$version"; then
  echo "error: building local-path-provisioner failed; check that the Go module proxy is reachable (GOPROXY)." >&2
  exit 1
fi
stamp local-path-provisioner "$want" "$t0"
