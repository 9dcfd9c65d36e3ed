#!/usr/bin/env bash
# Builds Kueue's controller manager into the same binary cache as build.sh (beside kubectl), with
# the CRDs and webhook manifests of the same release, for `gryvia sandbox up --kueue` and the
# Kueue integration tests; nothing else builds it (make install and build.sh do not), so runs
# that do not need Kueue do not pay for it.
#
# The version is pinned in the wrapper module tools/k8s/kueue/go.mod. Output: <bin dir>/kueue and
# <bin dir>/kueue-manifests/{crds/*.yaml,webhooks.yaml,VERSION}, where <bin dir> is
# `tools/k8s/build.sh --print-bin-dir`. Idempotent: skipped when go.mod, go.sum, this script and
# the Go version are unchanged and the outputs exist.
# Usage: tools/k8s/build-kueue.sh [--print-path] [--force]
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bin_dir="$("$here/build.sh" --print-bin-dir)"
force=0
for arg in "$@"; do
  case "$arg" in
    --force) force=1 ;;
    --print-path) echo "$bin_dir/kueue"; exit 0 ;;
    -h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "build-kueue.sh: unknown argument '$arg' (try --help)" >&2; exit 2 ;;
  esac
done
if ! command -v go >/dev/null 2>&1; then
  echo "error: the Go toolchain is not installed (fix: install Go >= 1.26 and put 'go' on PATH)." >&2
  exit 1
fi
version="$(awk '$1 == "sigs.k8s.io/kueue" { print $2 }' "$here/kueue/go.mod")"
manifests="$bin_dir/kueue-manifests"
stamp_file="$bin_dir/.stamp-kueue"
want="$(cat "$here/kueue/go.mod" "$here/kueue/go.sum" "$0" | sha256sum | cut -c1-16) $(go env GOVERSION)"
if [ "$force" = 0 ] && [ -x "$bin_dir/kueue" ] && [ -f "$manifests/webhooks.yaml" ] \
    && [ "$want" = "$(cat "$stamp_file" 2>/dev/null)" ]; then
  echo "==> kueue up to date ($version, $bin_dir/kueue)"
  exit 0
fi
echo "==> building kueue $version (several minutes on 2 cores) ..."
mkdir -p "$bin_dir"
t0=$(date +%s)
log="$(mktemp)"
export GOFLAGS="${GOFLAGS:-} -mod=mod" CGO_ENABLED=0
if ! ( cd "$here/kueue" && go build -trimpath \
    -ldflags "-s -w -X sigs.k8s.io/kueue/pkg/version.GitVersion=$version" -o "$bin_dir/kueue" \
    sigs.k8s.io/kueue/cmd/kueue ) >"$log" 2>&1; then
  tail -n 40 "$log" >&2
  if grep -qiE 'dial tcp|no such host|proxy|connection refused|i/o timeout' "$log"; then
    echo "error: could not download Go modules for kueue: the Go module proxy is unreachable (check GOPROXY and the network)." >&2
  else
    echo "error: building kueue failed (full log: $log)." >&2
  fi
  exit 1
fi
rm -f "$log"
# The manifests of the same release, from the module's source in the Go module cache.
src="$(cd "$here/kueue" && go list -m -f '{{.Dir}}' sigs.k8s.io/kueue)"
rm -rf "$manifests"
mkdir -p "$manifests/crds"
cp "$src"/config/components/crd/bases/*.yaml "$manifests/crds/"
cp "$src/config/components/webhook/manifests.yaml" "$manifests/webhooks.yaml"
chmod -R u+w "$manifests"
echo "$version" >"$manifests/VERSION"
echo "$want" >"$stamp_file"
echo "    kueue built in $(( $(date +%s) - t0 ))s: $bin_dir/kueue"
