#!/usr/bin/env bash
# Builds stripe-mock (Stripe's own offline API server, a Go module) into the same binary cache as
# build.sh (beside kubectl), for the Stripe test-mode integration test (docs/billing.md, "Stripe
# test mode"). About 13 s on 2 cores with a cold module cache.
#
# Output: <bin dir>/stripe-mock, where <bin dir> is `tools/k8s/build.sh --print-bin-dir`.
# Idempotent: skipped when the binary of the pinned version is there.
# Usage: tools/k8s/build-stripe-mock.sh [--print-path] [--force]
set -euo pipefail

version="v0.203.0"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$here/lib.sh"
build_args stripe-mock 8 "$@"
need_go
want="$version $(go env GOVERSION)"
skip_if_built stripe-mock "$want" "$version"
echo "==> building stripe-mock $version ..."
t0=$(date +%s)
if ! CGO_ENABLED=0 GOBIN="$bin_dir" go install "github.com/stripe/stripe-mock@$version"; then
  echo "error: building stripe-mock failed; check that the Go module proxy is reachable (GOPROXY)." >&2
  exit 1
fi
stamp stripe-mock "$want" "$t0"
