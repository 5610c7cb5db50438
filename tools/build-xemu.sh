#!/usr/bin/env bash
# Build xemu's MEGA65 emulator (xmega65) from source, optionally with a patch, into OUTDIR.
#
#   tools/build-xemu.sh OUTDIR [PATCH]
#   tools/build-xemu.sh --source-tree DIR    only find the source (fetching it if need be) and
#                                            put it, unpatched, into DIR; prints where it came from
#
# With SSNAIL_CAPI_LIB=path/libssnail_capi.a (and SSNAIL_CAPI_INCLUDE=the folder of ssnail.h) the
# build links the SSNAIL core emulator, as the SSNAIL patch (xemu/ssnail-xemu-40dfef0d.patch) needs.
#
# This script is the one place that knows where xemu's source is (the Makefile's xemu targets and
# mega65/tests/xemu_agrees_with_headless.rs call it). In this order:
#   1. $XEMU_SRC, a user's xemu checkout (copied first, so it is never changed);
#   2. the xemu tarball in the shared folder beside the repository, or $XEMU_TARBALL
#      (../shared/thirdparty/xemu-40dfef0d.tar.xz: commit 40dfef0d1d5f56be2469492715c12bdb32c75b67
#      of xemu, GPL-2; this is what CI uses);
#   3. xemu's public git repository ($XEMU_GIT_URL, default below): commit 40dfef0d is fetched
#      once (depth 1; if the server does not give a commit by its id, its HEAD), checked to have
#      exactly the pinned commit's tree (git's content hash of every file, name and mode, so a
#      mirror made from the tarball passes and any other tree is refused) and kept in the cache
#      ($SSNAIL_CACHE/xemu/git-40dfef0d, default cache/); later runs use the cached copy offline.
# Needs cc, make, git and Debian's libsdl2-dev (tools/debian-packages.txt).
#
# Idempotent: OUTDIR/xmega65 is rebuilt only when the source, the patch or the library changed
# (OUTDIR/source.txt records them); concurrent callers wait for each other (flock). The built
# tree stays in OUTDIR/tree: when only the library changed, xmega65 is just linked again.
# Exit status 3 means: no source (none of the three ways worked); the one-line message says so.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
source_only=
if [ "${1:-}" = --source-tree ]; then
  source_only=${2:?usage: tools/build-xemu.sh --source-tree DIR}
  out=
  patch=
else
  out=${1:?usage: tools/build-xemu.sh OUTDIR [PATCH]}
  patch=${2:-}
fi
tarball=${XEMU_TARBALL:-$here/../shared/thirdparty/xemu-40dfef0d.tar.xz}
xemu_commit=40dfef0d1d5f56be2469492715c12bdb32c75b67
# The git tree of that commit (git rev-parse 40dfef0d^{tree} in xemu's repository; the shared
# tarball's files hash to the same tree).
xemu_tree=e91a651450c6c47ced6f9bc6d5085e6d96330ec0
git_url=${XEMU_GIT_URL:-https://github.com/lgblgblgb/xemu.git}
cache=${SSNAIL_CACHE:-$here/cache}
gitdir=$cache/xemu/git-40dfef0d

# The cached fetch, when it holds the pinned tree.
cached_git_ok() {
  [ "$(git --git-dir="$gitdir" rev-parse -q --verify 'refs/ssnail/xemu^{tree}' 2>/dev/null)" = "$xemu_tree" ]
}

# Fetch commit 40dfef0d from $git_url into the cache and check its tree; on failure the reason
# (one line) in $fetch_error.
fetch_error=
fetch_git() {
  command -v git >/dev/null || { fetch_error="git is not installed"; return 1; }
  mkdir -p "$cache/xemu"
  local tmp log got
  tmp=$(mktemp -d "$gitdir.tmp.XXXXXX")
  log=$tmp.log
  git init -q --bare "$tmp"
  echo "build-xemu: fetching xemu $xemu_commit from $git_url" >&2
  if ! git --git-dir="$tmp" fetch -q --depth 1 "$git_url" "$xemu_commit" 2>"$log" &&
    ! git --git-dir="$tmp" fetch -q --depth 1 "$git_url" HEAD 2>>"$log"; then
    fetch_error="git fetch $git_url failed: $(grep -m1 '^fatal:' "$log" || head -n 1 "$log")"
    rm -rf "$tmp" "$log"
    return 1
  fi
  got=$(git --git-dir="$tmp" rev-parse FETCH_HEAD^{tree})
  if [ "$got" != "$xemu_tree" ]; then
    fetch_error="$git_url gave commit $(git --git-dir="$tmp" rev-parse FETCH_HEAD) with tree $got, not the tree $xemu_tree of xemu $xemu_commit"
    rm -rf "$tmp" "$log"
    return 1
  fi
  git --git-dir="$tmp" update-ref refs/ssnail/xemu FETCH_HEAD
  rm -rf "$gitdir" "$log"
  mv "$tmp" "$gitdir"
}

if [ -n "${XEMU_SRC:-}" ]; then
  [ -f "$XEMU_SRC/targets/mega65/Makefile" ] ||
    { echo "build-xemu: $XEMU_SRC: not an xemu source tree (no targets/mega65/Makefile)" >&2; exit 2; }
  src=$(cd "$XEMU_SRC" && pwd)
  # Every source file's name, size and time: a changed checkout is built again.
  files=$(cd "$src" && find . \( -path ./build -o -path ./.git \) -prune \
    -o -type f -printf '%p %s %T@\n' | LC_ALL=C sort | sha256sum | cut -c1-64)
  id="dir $src files $files"
  kind=dir
elif [ -f "$tarball" ]; then
  id="tarball $(sha256sum "$tarball" | cut -c1-64)"
  kind=tarball
else
  # One fetch at a time (the tests build stock and patched xemu concurrently).
  mkdir -p "$cache/xemu"
  exec 8>"$cache/xemu/.git-40dfef0d.lock"
  flock 8
  if ! cached_git_ok && ! fetch_git; then
    echo "build-xemu: no xemu source: set XEMU_SRC=DIR (a checkout of xemu $xemu_commit) or put the tarball at $tarball; fetching it failed ($fetch_error)" >&2
    exit 3
  fi
  exec 8>&-
  id="git tree $xemu_tree"
  kind=git
fi

# The unpatched source into an empty directory $1.
unpack_source() {
  case $kind in
    dir)
      # The checkout as it is, without its own build products (objects, dependency files, binaries).
      tar -C "$src" --exclude=./.git --exclude='./build/objs/*.o' --exclude='./build/objs/*.depend' \
        --exclude='./build/objs/*buildinfo*' --exclude='./build/bin/*.native' -cf - . |
        tar -C "$1" -xf - ;;
    tarball) tar -C "$1" --strip-components=1 -xJf "$tarball" ;;
    git) git --git-dir="$gitdir" archive refs/ssnail/xemu | tar -C "$1" -xf - ;;
  esac
}

if [ -n "$source_only" ]; then
  mkdir -p "$source_only"
  [ -z "$(ls -A "$source_only")" ] || { echo "build-xemu: $source_only: not empty" >&2; exit 2; }
  unpack_source "$source_only"
  echo "xemu source: $id"
  exit 0
fi
if [ -n "$patch" ]; then
  [ -f "$patch" ] || { echo "build-xemu: $patch: no such patch file" >&2; exit 2; }
  id="$id patch $(sha256sum "$patch" | cut -c1-64)"
fi

tree_id=$id
make_args=()
if [ -n "${SSNAIL_CAPI_LIB:-}" ]; then
  [ -f "$SSNAIL_CAPI_LIB" ] || { echo "build-xemu: $SSNAIL_CAPI_LIB: no such library" >&2; exit 2; }
  lib=$(cd "$(dirname "$SSNAIL_CAPI_LIB")" && pwd)/$(basename "$SSNAIL_CAPI_LIB")
  inc=$(cd "${SSNAIL_CAPI_INCLUDE:?SSNAIL_CAPI_INCLUDE must name the folder of ssnail.h}" && pwd)
  tree_id="$id header $(cat "$inc"/*.h | sha256sum | cut -c1-64)"
  id="$tree_id capi $(sha256sum "$lib" | cut -c1-64)"
  make_args=(SSNAIL_CFLAGS="-I$inc" SSNAIL_LIBS="$lib -lpthread -ldl -lm")
fi

mkdir -p "$out"
out=$(cd "$out" && pwd)
exec 9>"$out/.lock"
flock 9
if [ -x "$out/xmega65" ] && [ "$(cat "$out/source.txt" 2>/dev/null)" = "$id" ]; then
  exit 0
fi

tree=$out/tree
if [ -d "$tree" ] && [ "$(cat "$out/tree.txt" 2>/dev/null)" = "$tree_id" ]; then
  # Same source, patch and header: only the library changed, link again.
  rm -f "$tree/build/bin/xmega65.native"
  echo "build-xemu: linking xmega65 again" >&2
else
  rm -rf "$tree" "$out/tree.txt"
  mkdir -p "$tree"
  unpack_source "$tree"
  if [ -n "$patch" ]; then
    patch -d "$tree" -p1 --forward --quiet <"$patch" ||
      { echo "build-xemu: $patch does not apply to the xemu source ($id)" >&2; rm -rf "$tree"; exit 1; }
  fi
  echo "build-xemu: building xmega65 (about a minute)" >&2
fi
if ! make -C "$tree/targets/mega65" -j"$(nproc)" "${make_args[@]}" >"$out/build.log" 2>&1; then
  tail -n 20 "$out/build.log" >&2
  rm -rf "$tree" "$out/tree.txt"
  echo "build-xemu: make -C targets/mega65 failed (libsdl2-dev installed? tools/install-deps.sh)" >&2
  exit 1
fi
install -m 0755 "$tree/build/bin/xmega65.native" "$out/xmega65.tmp"
mv "$out/xmega65.tmp" "$out/xmega65"
printf '%s\n' "$tree_id" >"$out/tree.txt"
printf '%s\n' "$id" >"$out/source.txt"
