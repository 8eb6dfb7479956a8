#!/usr/bin/env bash
# Removes the debug info (std's DWARF, about 1.8 MB) from the native library inside a wheel,
# in place, keeping its symbol table: uniffi reads its metadata from there, and backtraces
# keep their names.
#
#   strip-wheel.sh WHEEL
#
# maturin cannot do it: with zig as the linker, `strip = "debuginfo"` strips the symbol
# table too, and the uniffi bindgen then finds no metadata, so mk/dist.mk builds with
# `strip = "none"` and strips afterwards. `wheel pack` rewrites RECORD with the new hashes.
set -euo pipefail

wheel=$(realpath "$1")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

python3 -m wheel unpack --dest "$work" "$wheel" > /dev/null
library=$(find "$work" -name 'libmintid_ffi*.so')
[ "$(echo "$library" | wc -l)" = 1 ] || { echo "strip-wheel: expected one library in $wheel"; exit 1; }
before=$(stat -c %s "$library")
# GNU objcopy reads only the host's ELF machine; Debian's binutils-aarch64-linux-gnu the other.
case $(readelf -h "$library" | sed -n 's/^ *Machine: *//p') in
  AArch64) objcopy=aarch64-linux-gnu-objcopy ;;
  *) objcopy=objcopy ;;
esac
"$objcopy" --strip-debug "$library"
after=$(stat -c %s "$library")
rm "$wheel"
python3 -m wheel pack --dest-dir "$(dirname "$wheel")" "$work"/mintid-* > /dev/null
[ -f "$wheel" ] || { echo "strip-wheel: repacking did not give back $(basename "$wheel")"; exit 1; }
echo "$(basename "$wheel"): $(basename "$library") $before -> $after B"
