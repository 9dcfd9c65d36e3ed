#!/usr/bin/env bash
# Builds the Kubernetes control-plane binaries that the sandbox and the integration tests run:
# kube-apiserver, kube-controller-manager, kube-scheduler, kubectl, etcd, kwok, kwokctl, helm;
# and kubelet, for the real node of `gryvia sandbox up --real-node` (build-node.sh adds the rest).
#
# Versions are pinned in exactly one place: the go.mod of each wrapper module beside this file.
# Output: $GRYVIA_K8S_CACHE/<kubernetes version>/bin (default ~/.cache/gryvia/k8s/...).
# Idempotent: a module whose go.mod, go.sum, flags and Go version are unchanged and whose
# binaries exist is skipped. Usage: tools/k8s/build.sh [--print-bin-dir] [--force]
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cache_root="${GRYVIA_K8S_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gryvia/k8s}"
force=0
print_only=0
for arg in "$@"; do
  case "$arg" in
    --force) force=1 ;;
    --print-bin-dir) print_only=1 ;;
    -h|--help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "build.sh: unknown argument '$arg' (try --help)" >&2; exit 2 ;;
  esac
done

# The pinned versions, read from the wrapper modules' go.mod files.
modver() { awk -v m="$2" '$1 == m || ($1 == "require" && $2 == m) { v = ($1 == "require") ? $3 : $2 } END { print v }' "$here/$1/go.mod"; }
k8s_version="$(modver kubernetes k8s.io/kubernetes)"
etcd_version="$(modver etcd go.etcd.io/etcd/server/v3)"
kwok_version="$(modver kwok sigs.k8s.io/kwok)"
helm_version="$(modver helm helm.sh/helm/v3)"
bin_dir="$cache_root/$k8s_version/bin"
if [ "$print_only" = 1 ]; then echo "$bin_dir"; exit 0; fi

if ! command -v go >/dev/null 2>&1; then
  cat >&2 <<EOF
error: the Go toolchain is not installed (need Go >= 1.26 to build the Kubernetes binaries).
fix:   install Go 1.26 or newer and put 'go' on PATH, then run 'make k8s-bin' again.
EOF
  exit 1
fi
go_version="$(go env GOVERSION)"
case "$go_version" in
  go1.2[6-9]*|go1.[3-9][0-9]*) ;;
  *) echo "error: $go_version is too old; the pinned modules need Go >= 1.26 (fix: install a newer Go)." >&2; exit 1 ;;
esac
export GOFLAGS="${GOFLAGS:-} -mod=mod"
export CGO_ENABLED=0

mkdir -p "$bin_dir"
start_all=$(date +%s)
step=0
total=4

# Stamp of one module: what decides whether its binaries must be rebuilt.
stamp_of() { cat "$here/$1/go.mod" "$here/$1/go.sum" "$here/build.sh" | sha256sum | cut -c1-16; echo "$go_version"; }

# build MODULE "BIN..." LDFLAGS PACKAGE...
build() {
  local module="$1" bins="$2" ldflags="$3"; shift 3
  step=$((step + 1))
  local stamp_file="$bin_dir/.stamp-$module" want have=""
  want="$(stamp_of "$module")"
  [ -f "$stamp_file" ] && have="$(cat "$stamp_file")"
  local missing=0 b
  for b in $bins; do [ -x "$bin_dir/$b" ] || missing=1; done
  if [ "$force" = 0 ] && [ "$missing" = 0 ] && [ "$want" = "$have" ]; then
    printf '==> [%d/%d] %-10s up to date (%s)\n' "$step" "$total" "$module" "$bins"
    return 0
  fi
  printf '==> [%d/%d] %-10s building %s ...\n' "$step" "$total" "$module" "$bins"
  local t0 log rc=0
  t0=$(date +%s)
  log="$(mktemp)"
  # -v prints each package as it is compiled: count them as a progress heartbeat.
  ( cd "$here/$module" && go build -v -trimpath -ldflags "-s -w $ldflags" -o "$bin_dir/" "$@" ) >"$log" 2>&1 &
  local pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    sleep 15
    kill -0 "$pid" 2>/dev/null && printf '    ... %s: %d packages compiled, %ds\n' "$module" "$(grep -vc '^go: ' "$log" || true)" "$(( $(date +%s) - t0 ))"
  done
  wait "$pid" || rc=$?
  if [ "$rc" != 0 ]; then
    tail -n 40 "$log" >&2
    if grep -qiE 'dial tcp|no such host|proxy|connection refused|i/o timeout' "$log"; then
      echo "error: could not download Go modules for $module: the Go module proxy is unreachable (check GOPROXY and the network)." >&2
    else
      echo "error: building $module failed (full log: $log)." >&2
    fi
    exit 1
  fi
  rm -f "$log"
  echo "$want" >"$stamp_file"
  printf '    %s built in %ds\n' "$module" "$(( $(date +%s) - t0 ))"
}

# Kubernetes: one `go build` for all five so they share compiled packages. The version is stamped
# where `--version` and the /version endpoint read it, so they report the real release.
k8s_minor="${k8s_version#v1.}"; k8s_minor="${k8s_minor%%.*}"
k8s_ld=""
for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  k8s_ld="$k8s_ld -X $p.gitVersion=$k8s_version -X $p.gitMajor=1 -X $p.gitMinor=$k8s_minor"
  k8s_ld="$k8s_ld -X $p.gitTreeState=clean -X $p.buildDate=1970-01-01T00:00:00Z"
done
build kubernetes "kube-apiserver kube-controller-manager kube-scheduler kubectl kubelet" "$k8s_ld" \
  k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
  k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubectl k8s.io/kubernetes/cmd/kubelet
build etcd "etcd" "" ./cmd/etcd
build kwok "kwok kwokctl" "" sigs.k8s.io/kwok/cmd/kwok sigs.k8s.io/kwok/cmd/kwokctl
# Helm's default Kubernetes version (for `helm template` and `helm lint` without a cluster) is set
# to the pinned release, as Helm's own Makefile does, instead of its built-in v1.20.
helm_ld="-X helm.sh/helm/v3/internal/version.version=$helm_version"
for p in helm.sh/helm/v3/pkg/chartutil helm.sh/helm/v3/pkg/lint/rules; do
  helm_ld="$helm_ld -X $p.k8sVersionMajor=1 -X $p.k8sVersionMinor=$k8s_minor"
done
build helm "helm" "$helm_ld" helm.sh/helm/v3/cmd/helm

cat >"$bin_dir/versions.env" <<EOF
KUBERNETES_VERSION=$k8s_version
ETCD_VERSION=$etcd_version
KWOK_VERSION=$kwok_version
HELM_VERSION=$helm_version
EOF
printf '==> done in %ds: %s (%s)\n' "$(( $(date +%s) - start_all ))" "$bin_dir" "$(du -sh "$bin_dir" | cut -f1)"
