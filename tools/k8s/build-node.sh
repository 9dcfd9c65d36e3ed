#!/usr/bin/env bash
# Builds and installs what the real node of `gryvia sandbox up --real-node` runs beside the kubelet
# (build.sh builds the kubelet):
#   containerd, containerd-shim-runc-v2, ctr   from the Go module proxy, at the tag pinned in the
#                                             wrapper module tools/k8s/containerd/go.mod
#   pause                                     Kubernetes' own pause.c (from the pinned
#                                             k8s.io/kubernetes module), a static binary for the
#                                             pod sandbox image
#   runc, the CNI plugins, iptables           Debian's packages (runc, containernetworking-plugins,
#                                             iptables): /usr/sbin/runc, /usr/lib/cni
# Run as root when a Debian package is missing (apt). Output: <bin dir>, where <bin dir> is
# `tools/k8s/build.sh --print-bin-dir`, and <bin dir>/node-versions.env. Idempotent: containerd
# is skipped when go.mod, go.sum, this script and the Go version are unchanged and its binaries
# exist; pause when pause.c, this script and gcc are unchanged and it exists.
# Usage: tools/k8s/build-node.sh [--force]
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
bin_dir="$("$here/build.sh" --print-bin-dir)"
force=0
for arg in "$@"; do
  case "$arg" in
    --force) force=1 ;;
    -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "build-node.sh: unknown argument '$arg' (try --help)" >&2; exit 2 ;;
  esac
done
start_all=$(date +%s)

# 1. Debian's packages. runc 1.1.5 works with containerd's `restrict_oom_score_adj = true`; the
# CNI plugins are bridge, host-local and loopback; iptables for the sandbox's DNAT rule.
export PATH="$PATH:/usr/sbin:/sbin"
cni_dir=/usr/lib/cni
missing_debs=""
command -v runc >/dev/null 2>&1 || missing_debs="$missing_debs runc"
[ -x "$cni_dir/bridge" ] && [ -x "$cni_dir/host-local" ] && [ -x "$cni_dir/loopback" ] \
  || missing_debs="$missing_debs containernetworking-plugins"
command -v iptables >/dev/null 2>&1 || missing_debs="$missing_debs iptables"
command -v gcc >/dev/null 2>&1 || missing_debs="$missing_debs gcc"
if [ -n "$missing_debs" ] && [ "$(id -u)" != 0 ]; then
  cat >&2 <<EOF
error: Debian packages missing:$missing_debs (installing them needs root).
fix:   sudo make node-bin   (or: sudo apt-get install -y$missing_debs, then run this again)
EOF
  exit 1
fi
echo "==> [1/3] Debian packages (runc, containernetworking-plugins, iptables, gcc)"
"$root/tools/deb.sh" runc runc
"$root/tools/deb.sh" "$cni_dir/bridge" containernetworking-plugins
"$root/tools/deb.sh" iptables iptables
"$root/tools/deb.sh" gcc gcc
runc_path="$(command -v runc)"
printf '    runc %s, CNI plugins in %s\n' "$runc_path" "$cni_dir"

if ! command -v go >/dev/null 2>&1; then
  echo "error: the Go toolchain is not installed (fix: install Go >= 1.26 and put 'go' on PATH)." >&2
  exit 1
fi
go_version="$(go env GOVERSION)"
export GOFLAGS="${GOFLAGS:-} -mod=mod"
mkdir -p "$bin_dir"

# 2. containerd, its runc shim and ctr: static (no cgo; btrfs support needs cgo and drops out).
containerd_version="$(awk '$1 == "github.com/containerd/containerd/v2" || ($1 == "require" && $2 == "github.com/containerd/containerd/v2") { v = ($1 == "require") ? $3 : $2 } END { print v }' "$here/containerd/go.mod")"
want="$(cat "$here/containerd/go.mod" "$here/containerd/go.sum" "$0" | sha256sum | cut -c1-16) $go_version"
stamp_file="$bin_dir/.stamp-containerd"
bins="containerd containerd-shim-runc-v2 ctr"
missing=0
for b in $bins; do [ -x "$bin_dir/$b" ] || missing=1; done
if [ "$force" = 0 ] && [ "$missing" = 0 ] && [ "$want" = "$(cat "$stamp_file" 2>/dev/null)" ]; then
  echo "==> [2/3] containerd up to date ($containerd_version: $bins)"
else
  echo "==> [2/3] building containerd $containerd_version ($bins; about 2 minutes on 2 cores) ..."
  t0=$(date +%s)
  log="$(mktemp)"
  pkg=github.com/containerd/containerd/v2
  if ! ( cd "$here/containerd" && CGO_ENABLED=0 go build -trimpath -tags "no_btrfs urfave_cli_no_docs" \
      -ldflags "-s -w -X $pkg/version.Version=$containerd_version" -o "$bin_dir/" \
      "$pkg/cmd/containerd" "$pkg/cmd/containerd-shim-runc-v2" "$pkg/cmd/ctr" ) >"$log" 2>&1; then
    tail -n 40 "$log" >&2
    if grep -qiE 'dial tcp|no such host|proxy|connection refused|i/o timeout' "$log"; then
      echo "error: could not download Go modules for containerd: the Go module proxy is unreachable (check GOPROXY and the network)." >&2
    else
      echo "error: building containerd failed (full log: $log)." >&2
    fi
    exit 1
  fi
  rm -f "$log"
  echo "$want" >"$stamp_file"
  echo "    containerd built in $(( $(date +%s) - t0 ))s"
fi

# 3. pause: Kubernetes' pause.c from the pinned k8s.io/kubernetes module, built as its Makefile
# does (-Os -Wall -Werror -static -DVERSION=v<TAG>-<rev>), the rev being the Kubernetes release.
k8s_version="$(awk '$1 == "k8s.io/kubernetes" { print $2; exit }' "$here/kubernetes/go.mod")"
k8s_src="$(cd "$here/kubernetes" && go mod download -json "k8s.io/kubernetes@$k8s_version" \
  | awk -F'"' '$2 == "Dir" { print $4 }')"
pause_src="$k8s_src/build/pause"
if [ ! -f "$pause_src/linux/pause.c" ]; then
  echo "error: $pause_src/linux/pause.c not found (go mod download k8s.io/kubernetes@$k8s_version)." >&2
  exit 1
fi
pause_tag="$(awk '$1 == "TAG" && $2 == "?=" { print $3; exit }' "$pause_src/Makefile")"
want="$(cat "$pause_src/linux/pause.c" "$0" | sha256sum | cut -c1-16) $(gcc -dumpfullversion 2>/dev/null || gcc -dumpversion)"
if [ "$force" = 0 ] && [ -x "$bin_dir/pause" ] && [ "$want" = "$(cat "$bin_dir/.stamp-pause" 2>/dev/null)" ]; then
  echo "==> [3/3] pause up to date ($pause_tag)"
else
  echo "==> [3/3] building pause $pause_tag from $pause_src/linux/pause.c ..."
  t0=$(date +%s)
  gcc -Os -Wall -Werror -static -DVERSION="v$pause_tag-$k8s_version" \
    -o "$bin_dir/pause.tmp" "$pause_src/linux/pause.c"
  strip "$bin_dir/pause.tmp" 2>/dev/null || true
  mv "$bin_dir/pause.tmp" "$bin_dir/pause"
  echo "$want" >"$bin_dir/.stamp-pause"
  echo "    pause built in $(( $(date +%s) - t0 ))s"
fi

cat >"$bin_dir/node-versions.env" <<EOF
CONTAINERD_VERSION=$containerd_version
PAUSE_VERSION=$pause_tag
RUNC=$runc_path
RUNC_VERSION=$(dpkg-query -W -f '${Version}' runc 2>/dev/null || true)
CNI_BIN_DIR=$cni_dir
CNI_PLUGINS_VERSION=$(dpkg-query -W -f '${Version}' containernetworking-plugins 2>/dev/null || true)
EOF
[ -x "$bin_dir/kubelet" ] || echo "note: $bin_dir/kubelet is not built yet: run tools/k8s/build.sh (make node-bin does)."
printf '==> done in %ds: %s\n' "$(( $(date +%s) - start_all ))" "$bin_dir"
