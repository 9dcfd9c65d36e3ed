#!/usr/bin/env bash
# Builds Dex, the OIDC issuer of `gryvia sandbox up --oidc`, into the same binary cache as build.sh
# (beside kube-apiserver). `make k8s-bin` runs it after build.sh. It is a script of its own, not a
# fifth module of build.sh, because build.sh's stamps hash build.sh itself: adding Dex there would
# rebuild Kubernetes in every existing cache.
#
# The version is pinned in the wrapper module tools/k8s/dex/go.mod: Dex tags no Go-module
# releases, so the pin is the pseudo-version its master branch resolved to through the module
# proxy. What is built is Dex's server package with the small main.go beside go.mod (its comment
# says why Dex's own cmd/dex cannot be built from the module proxy). Built with CGO_ENABLED=0 (the sandbox uses Dex's memory storage, not SQLite) with Go >= 1.26
# (Dex's go.mod asks for 1.25.8; no GOTOOLCHAIN override is needed). About 3-4 minutes on 2 cores.
# Output: <bin dir>/dex, where <bin dir> is `tools/k8s/build.sh --print-bin-dir`. Idempotent:
# skipped when go.mod, go.sum, main.go, this script and the Go version are unchanged and the
# binary exists.
# Usage: tools/k8s/build-dex.sh [--print-path] [--force]
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bin_dir="$("$here/build.sh" --print-bin-dir)"
force=0
for arg in "$@"; do
  case "$arg" in
    --force) force=1 ;;
    --print-path) echo "$bin_dir/dex"; exit 0 ;;
    -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "build-dex.sh: unknown argument '$arg' (try --help)" >&2; exit 2 ;;
  esac
done
if ! command -v go >/dev/null 2>&1; then
  echo "error: the Go toolchain is not installed (fix: install Go >= 1.26 and put 'go' on PATH)." >&2
  exit 1
fi
version="$(awk '$1 == "github.com/dexidp/dex" { print $2 }' "$here/dex/go.mod")"
stamp_file="$bin_dir/.stamp-dex"
want="$(cat "$here/dex/go.mod" "$here/dex/go.sum" "$here/dex/main.go" "$0" | sha256sum | cut -c1-16) $(go env GOVERSION)"
if [ "$force" = 0 ] && [ -x "$bin_dir/dex" ] && [ "$want" = "$(cat "$stamp_file" 2>/dev/null)" ]; then
  echo "==> dex up to date ($version, $bin_dir/dex)"
  exit 0
fi
echo "==> building dex $version (a few minutes on 2 cores) ..."
mkdir -p "$bin_dir"
t0=$(date +%s)
log="$(mktemp)"
if ! ( cd "$here/dex" && GOFLAGS="${GOFLAGS:-} -mod=mod" CGO_ENABLED=0 go build -trimpath \
    -ldflags "-s -w -X main.version=$version" -o "$bin_dir/dex" \
    . ) >"$log" 2>&1; then
  tail -n 40 "$log" >&2
  if grep -qiE 'dial tcp|no such host|proxy|connection refused|i/o timeout' "$log"; then
    echo "error: could not download Go modules for dex: the Go module proxy is unreachable (check GOPROXY and the network)." >&2
  else
    echo "error: building dex failed (full log: $log)." >&2
  fi
  exit 1
fi
rm -f "$log"
echo "$want" >"$stamp_file"
echo "    dex built in $(( $(date +%s) - t0 ))s: $bin_dir/dex"
