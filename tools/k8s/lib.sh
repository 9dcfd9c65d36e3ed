# Shared by the build-*.sh scripts that build one binary into the cache of build.sh: their
# arguments, the Go check and the stamp that makes a second run a no-op. Source it after
# setting `here` (the tools/k8s folder); it sets `bin_dir`.
#   build_args BINARY HELP_END "$@"   --force, --print-path, -h/--help (lines 2..HELP_END)
#   need_go                           exit 1 with the fix when `go` is missing
#   skip_if_built BINARY WANT LABEL   exit 0 when BINARY's stamp is WANT (unless --force)
#   stamp BINARY WANT T0              write the stamp, print the time since T0 (epoch s)

bin_dir="$("$here/build.sh" --print-bin-dir)"

build_args() {
  local binary="$1" help_end="$2" arg
  shift 2
  force=0
  for arg in "$@"; do
    case "$arg" in
      --force) force=1 ;;
      --print-path) echo "$bin_dir/$binary"; exit 0 ;;
      -h|--help) sed -n "2,${help_end}p" "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
      *) echo "$(basename "$0"): unknown argument '$arg' (try --help)" >&2; exit 2 ;;
    esac
  done
}

need_go() {
  if ! command -v go >/dev/null 2>&1; then
    echo "error: the Go toolchain is not installed (fix: install Go >= 1.26 and put 'go' on PATH)." >&2
    exit 1
  fi
}

skip_if_built() {
  local binary="$1" want="$2" label="$3"
  if [ "$force" = 0 ] && [ -x "$bin_dir/$binary" ] \
      && [ "$want" = "$(cat "$bin_dir/.stamp-$binary" 2>/dev/null)" ]; then
    echo "==> $binary up to date ($label, $bin_dir/$binary)"
    exit 0
  fi
  mkdir -p "$bin_dir"
}

stamp() {
  local binary="$1" want="$2" t0="$3"
  echo "$want" >"$bin_dir/.stamp-$binary"
  echo "    $binary built in $(( $(date +%s) - t0 ))s: $bin_dir/$binary"
}
