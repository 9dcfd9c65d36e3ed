#!/usr/bin/env bash
# Builds the operator image from the repository's Dockerfile with no image registry (`make image`):
# a Python base made from Debian's packages (debootstrap of bookworm, whose python3 is 3.11, the
# version of python:3.11-slim), imported into podman as localhost/gryvia-python:3.11-bookworm,
# then `podman build --build-arg PYTHON_IMAGE=...` of the Dockerfile, as anyone with a registry
# builds it with the default PYTHON_IMAGE. The image then checks itself: `gryvia-operator --help`
# on a read-only root as uid 65532, as the chart runs it. Prints the image's name and size.
#
# Needs root (debootstrap, podman) and Debian's podman and debootstrap (installed when missing);
# the package registries are the only network it uses (Debian's mirror, PyPI). The base is built
# once and kept (podman's storage); --rebuild-base makes it again.
# Usage: tools/image/build.sh [--tag TAG] [--rebuild-base] [--print-name]
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
version="$(awk -F'"' '/^version *=/ { print $2; exit }' "$root/pyproject.toml")"
tag="$version"
rebuild=0
while [ $# -gt 0 ]; do
  case "$1" in
    --tag) tag="$2"; shift ;;
    --rebuild-base) rebuild=1 ;;
    --print-name) echo "localhost/gryvia-operator:$tag"; exit 0 ;;
    -h|--help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "build.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
  shift
done
if [ "$(id -u)" != 0 ]; then
  echo "error: building the image needs root (debootstrap and podman); fix: sudo make image" >&2
  exit 1
fi
"$root/tools/deb.sh" podman podman
"$root/tools/deb.sh" debootstrap debootstrap
"$root/tools/deb.sh" runc runc
# runc, not Debian's default crun: crun refuses hosts whose cgroups are mounted in hybrid mode (v1
# controllers beside a v2 tree, as on this project's machines). Limits at or below what this
# shell may raise: the runtime's own limits can be lower than the host's, and a container cannot
# raise them without CAP_SYS_RESOURCE.
limit="$(ulimit -Hn)"; [ "$limit" = unlimited ] || [ "$limit" -gt 16384 ] && limit=16384
run_opts=(--runtime runc --ulimit "nofile=$limit:$limit" --ulimit "nproc=$limit:$limit")

base="localhost/gryvia-python:3.11-bookworm"
image="localhost/gryvia-operator:$tag"
mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"

if [ "$rebuild" = 1 ] || ! podman image exists "$base"; then
  echo "==> base $base: debootstrap bookworm (python3, python3-venv) from $mirror ..."
  rootfs="$(mktemp -d /tmp/gryvia-rootfs.XXXXXX)"
  trap 'rm -rf "$rootfs"' EXIT
  debootstrap --variant=minbase --include=python3,python3-venv,python-is-python3,ca-certificates \
    bookworm "$rootfs" "$mirror" > "$rootfs.log" 2>&1 \
    || { tail -20 "$rootfs.log" >&2; echo "error: debootstrap failed (log: $rootfs.log)" >&2; exit 1; }
  rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/* "$rootfs"/usr/share/doc \
    "$rootfs"/usr/share/man "$rootfs"/usr/share/locale
  tar -C "$rootfs" -c . | podman import \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'CMD ["python3"]' - "$base" > /dev/null
  rm -f "$rootfs.log"
fi

echo "==> $image from Dockerfile (PYTHON_IMAGE=$base) ..."
# pip in the build trusts what this machine trusts (a proxy's CA included) and uses its index.
ca="${PIP_CERT:-/etc/ssl/certs/ca-certificates.crt}"
pip_args=(--volume "$ca:/run/host-ca.crt:ro" --build-arg PIP_CERT=/run/host-ca.crt)
[ -n "${PIP_INDEX_URL:-}" ] && pip_args+=(--build-arg "PIP_INDEX_URL=$PIP_INDEX_URL")
podman build "${run_opts[@]}" "${pip_args[@]}" --network host --build-arg "PYTHON_IMAGE=$base" \
  -t "$image" -f "$root/Dockerfile" "$root"

echo "==> check: --help on a read-only root as uid 65532"
podman run "${run_opts[@]}" --rm --read-only --user 65532:65532 --network none "$image" --help > /dev/null
size="$(podman image inspect --format '{{.Size}}' "$image")"
echo "built $image: $((size / 1000000)) MB"
