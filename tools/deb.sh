#!/usr/bin/env bash
# Installs a Debian package a test needs when its command is missing, the way the README's
# machine gets everything else (Debian's package before a build of our own).
# Usage: tools/deb.sh COMMAND PACKAGE   e.g. tools/deb.sh tinyproxy tinyproxy
set -euo pipefail
cmd="$1" pkg="$2"
command -v "$cmd" >/dev/null 2>&1 && exit 0
if [ "$(id -u)" != 0 ]; then
  echo "error: '$cmd' is missing (Debian package $pkg). fix: sudo apt-get install -y $pkg" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
echo "installing $pkg (Debian) for '$cmd'"
apt-get install -y -q "$pkg" >/dev/null 2>&1 \
  || { apt-get update -q >/dev/null && apt-get install -y -q "$pkg" >/dev/null; }
command -v "$cmd" >/dev/null
