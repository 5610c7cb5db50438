#!/usr/bin/env bash
# Build xemu's MEGA65 emulator (xmega65) from source, optionally with a patch, into OUTDIR.
#
#   tools/build-xemu.sh OUTDIR [PATCH]
#
# With SSNAIL_CAPI_LIB=path/libssnail_capi.a (and SSNAIL_CAPI_INCLUDE=the folder of ssnail.h) the
# build links the SSNAIL core emulator, as the SSNAIL patch (xemu/ssnail-xemu-40dfef0d.patch) needs.
#
# Source: $XEMU_SRC (a user's xemu checkout, copied first so it is never changed) when set,
# else the xemu tarball in the shared folder beside the repository
# (../shared/thirdparty/xemu-40dfef0d.tar.xz, commit 40dfef0d1d5f56be2469492715c12bdb32c75b67
# of xemu, GPL-2). Needs cc, make and Debian's libsdl2-dev (tools/debian-packages.txt).
#
# Idempotent: OUTDIR/xmega65 is rebuilt only when the source, the patch or the library changed
# (OUTDIR/source.txt records them); concurrent callers wait for each other (flock). The built
# tree stays in OUTDIR/tree: when only the library changed, xmega65 is just linked again.
# Exit status 3 means: no source (no XEMU_SRC and no shared tarball); the message says so.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: tools/build-xemu.sh OUTDIR [PATCH]}
patch=${2:-}
tarball=${XEMU_TARBALL:-$here/../shared/thirdparty/xemu-40dfef0d.tar.xz}

if [ -n "${XEMU_SRC:-}" ]; then
  [ -f "$XEMU_SRC/targets/mega65/Makefile" ] ||
    { echo "build-xemu: $XEMU_SRC: not an xemu source tree (no targets/mega65/Makefile)" >&2; exit 2; }
  src=$(cd "$XEMU_SRC" && pwd)
  # Every source file's name, size and time: a changed checkout is built again.
  files=$(cd "$src" && find . \( -path ./build -o -path ./.git \) -prune \
    -o -type f -printf '%p %s %T@\n' | LC_ALL=C sort | sha256sum | cut -c1-64)
  id="dir $src files $files"
else
  [ -f "$tarball" ] ||
    { echo "build-xemu: no xemu source: set XEMU_SRC=DIR or provide $tarball" >&2; exit 3; }
  id="tarball $(sha256sum "$tarball" | cut -c1-64)"
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
  if [ -n "${XEMU_SRC:-}" ]; then
    # The checkout as it is, without its own build products (objects, dependency files, binaries).
    tar -C "$src" --exclude=./.git --exclude='./build/objs/*.o' --exclude='./build/objs/*.depend' \
      --exclude='./build/objs/*buildinfo*' --exclude='./build/bin/*.native' -cf - . |
      tar -C "$tree" -xf -
  else
    tar -C "$tree" --strip-components=1 -xJf "$tarball"
  fi
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
