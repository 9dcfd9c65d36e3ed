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
bin_dir="$("$here/build.sh" --print-bin-dir)"
force=0
for arg in "$@"; do
  case "$arg" in
    --force) force=1 ;;
    --print-path) echo "$bin_dir/stripe-mock"; exit 0 ;;
    -h|--help) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "build-stripe-mock.sh: unknown argument '$arg' (try --help)" >&2; exit 2 ;;
  esac
done
if ! command -v go >/dev/null 2>&1; then
  echo "error: the Go toolchain is not installed (fix: install Go >= 1.26 and put 'go' on PATH)." >&2
  exit 1
fi
stamp_file="$bin_dir/.stamp-stripe-mock"
want="$version $(go env GOVERSION)"
if [ "$force" = 0 ] && [ -x "$bin_dir/stripe-mock" ] && [ "$want" = "$(cat "$stamp_file" 2>/dev/null)" ]; then
  echo "==> stripe-mock up to date ($version, $bin_dir/stripe-mock)"
  exit 0
fi
echo "==> building stripe-mock $version ..."
mkdir -p "$bin_dir"
t0=$(date +%s)
if ! CGO_ENABLED=0 GOBIN="$bin_dir" go install "github.com/stripe/stripe-mock@$version"; then
  echo "error: building stripe-mock failed; check that the Go module proxy is reachable (GOPROXY)." >&2
  exit 1
fi
echo "$want" >"$stamp_file"
echo "    stripe-mock built in $(( $(date +%s) - t0 ))s: $bin_dir/stripe-mock"
