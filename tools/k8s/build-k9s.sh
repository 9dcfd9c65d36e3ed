#!/usr/bin/env bash
# Builds k9s into the same binary cache as build.sh (beside kubectl), for the console benchmark
# (`make bench` runs Gryvia's console side by side with it); nothing else builds it: it is large.
#
# The version is pinned in the wrapper module tools/k8s/k9s/go.mod. Output: <bin dir>/k9s, where
# <bin dir> is `tools/k8s/build.sh --print-bin-dir`. Idempotent: skipped when go.mod, go.sum,
# this script and the Go version are unchanged and the binary exists.
# Usage: tools/k8s/build-k9s.sh [--print-path] [--force]
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bin_dir="$("$here/build.sh" --print-bin-dir)"
force=0
for arg in "$@"; do
  case "$arg" in
    --force) force=1 ;;
    --print-path) echo "$bin_dir/k9s"; exit 0 ;;
    -h|--help) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "build-k9s.sh: unknown argument '$arg' (try --help)" >&2; exit 2 ;;
  esac
done
if ! command -v go >/dev/null 2>&1; then
  echo "error: the Go toolchain is not installed (fix: install Go >= 1.26 and put 'go' on PATH)." >&2
  exit 1
fi
version="$(awk '$1 == "github.com/derailed/k9s" { print $2 }' "$here/k9s/go.mod")"
stamp_file="$bin_dir/.stamp-k9s"
want="$(cat "$here/k9s/go.mod" "$here/k9s/go.sum" "$0" | sha256sum | cut -c1-16) $(go env GOVERSION)"
if [ "$force" = 0 ] && [ -x "$bin_dir/k9s" ] && [ "$want" = "$(cat "$stamp_file" 2>/dev/null)" ]; then
  echo "==> k9s up to date ($version, $bin_dir/k9s)"
  exit 0
fi
echo "==> building k9s $version (several minutes on 2 cores) ..."
mkdir -p "$bin_dir"
t0=$(date +%s)
log="$(mktemp)"
if ! ( cd "$here/k9s" && GOFLAGS="${GOFLAGS:-} -mod=mod" CGO_ENABLED=0 go build -trimpath \
    -ldflags "-s -w -X github.com/derailed/k9s/cmd.version=$version" -o "$bin_dir/k9s" \
    github.com/derailed/k9s ) >"$log" 2>&1; then
  tail -n 40 "$log" >&2
  if grep -qiE 'dial tcp|no such host|proxy|connection refused|i/o timeout' "$log"; then
    echo "error: could not download Go modules for k9s: the Go module proxy is unreachable (check GOPROXY and the network)." >&2
  else
    echo "error: building k9s failed (full log: $log)." >&2
  fi
  exit 1
fi
rm -f "$log"
echo "$want" >"$stamp_file"
echo "    k9s built in $(( $(date +%s) - t0 ))s: $bin_dir/k9s"
