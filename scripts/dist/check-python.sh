#!/usr/bin/env bash
# Checks the Python artifacts of `make dist` (mk/dist.mk): run with the dist venv's bin on PATH.
#
#   check-python.sh DIST_DIR WORK_DIR
#
# 1. One py3-none manylinux2014 wheel per platform (x86_64, aarch64) and one sdist.
# 2. `auditwheel show` finds each wheel consistent with manylinux_2_17 for its arch, and
#    `twine check --strict` passes for all three.
# 3. ELF checks of each wheel's library: machine, the exported uniffi symbols, no glibc
#    symbol newer than 2.17.
# 4. The x86_64 wheel installs into a fresh venv, reports its version and its core's, and
#    passes the package's tests of the shared vectors.
# 5. The aarch64 library loads in an aarch64 process: a C program built by `zig cc`,
#    run under qemu-aarch64 with Debian's aarch64 glibc, calls core_version().
# 6. The sdist builds a wheel (pip, build isolation: maturin from PyPI) that imports.
set -euo pipefail

dist=$1
work=$2
version=$(python3 "$(dirname "$0")/version.py" show)
rm -rf "$work" && mkdir -p "$work"

declare -A machine=([x86_64]="Advanced Micro Devices X86-64" [aarch64]="AArch64")
for arch in x86_64 aarch64; do
  wheel=$dist/mintid-$version-py3-none-manylinux_2_17_$arch.manylinux2014_$arch.whl
  [ -f "$wheel" ] || wheel=$dist/mintid-$version-py3-none-manylinux2014_$arch.manylinux_2_17_$arch.whl
  [ -f "$wheel" ] || { echo "no manylinux2014 $arch wheel in $dist:"; ls "$dist"; exit 1; }
  echo "== $(basename "$wheel") ($(stat -c %s "$wheel") B)"
  auditwheel show "$wheel" | tee "$work/auditwheel-$arch.txt"
  # (no `cmd | grep -q` in these scripts: grep stops early, cmd dies of SIGPIPE, and under
  # pipefail the check fails although it matched)
  grep -q "consistent with the following platform tag: \"manylinux_2_17_$arch\"" \
    <(tr -s ' \n' ' ' < "$work/auditwheel-$arch.txt") \
    || { echo "auditwheel does not confirm manylinux_2_17_$arch"; exit 1; }

  unzip -q -o "$wheel" -d "$work/$arch"
  library=$(find "$work/$arch/mintid" -name 'libmintid_ffi*.so' | head -n 1)
  grep -q "Machine: *${machine[$arch]}" <(readelf -h "$library") \
    || { echo "$library is not an ${machine[$arch]} ELF file"; readelf -h "$library"; exit 1; }
  nm -D --defined-only "$library" > "$work/symbols-$arch.txt"
  for symbol in ffi_mintid_ffi_uniffi_contract_version uniffi_mintid_ffi_fn_func_core_version \
      uniffi_mintid_ffi_fn_func_uuid7_parse; do
    grep -qw "$symbol" "$work/symbols-$arch.txt" || { echo "$library does not export $symbol"; exit 1; }
  done
  newest=$(nm -D "$library" | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -n 1)
  [ "$(printf '%s\nGLIBC_2.17\n' "$newest" | sort -V | tail -n 1)" = GLIBC_2.17 ] \
    || { echo "$library needs $newest, newer than manylinux2014's GLIBC_2.17"; exit 1; }
  echo "   $(basename "$library"): ${machine[$arch]}, uniffi symbols exported, newest glibc symbol $newest"
done
sdist=$dist/mintid-$version.tar.gz
[ -f "$sdist" ] || { echo "no sdist $sdist"; exit 1; }
[ "$(find "$dist" -maxdepth 1 -type f | wc -l)" = 3 ] || { echo "expected 2 wheels and 1 sdist:"; ls "$dist"; exit 1; }
twine check --strict "$dist"/*

echo "== the x86_64 wheel in a fresh venv"
python3 -m venv "$work/venv"
"$work/venv/bin/pip" install --quiet --disable-pip-version-check "$dist"/mintid-*_x86_64*.whl
(cd "$work" && venv/bin/python -I -c "
import mintid
assert mintid.__version__ == mintid.core_version() == '$version', (mintid.__version__, mintid.core_version())
assert mintid.uuid7().version == 7
print('   mintid', mintid.__version__, 'core', mintid.core_version(), 'from', mintid.__file__)
")

# The package's own tests of the vectors shared by every language, on the manylinux library.
"$work/venv/bin/pip" install --quiet --disable-pip-version-check -r python/requirements/test.txt
"$work/venv/bin/pytest" -q -c python/pyproject.toml --rootdir python -p no:cacheprovider \
  python/tests/test_package.py python/tests/test_vectors.py

echo "== the aarch64 library in an aarch64 process (zig cc, qemu-aarch64)"
python3 -m ziglang cc -target aarch64-linux-gnu.2.17 -O2 -o "$work/load-library-aarch64" \
  "$(dirname "$0")/load-library.c" -ldl
grep -q "Machine: *AArch64" <(readelf -h "$work/load-library-aarch64")
aarch64_library=$(find "$work/aarch64/mintid" -name 'libmintid_ffi*.so' | head -n 1)
answer=$(qemu-aarch64-static -L /usr/aarch64-linux-gnu "$work/load-library-aarch64" "$aarch64_library")
echo "   $answer"
[[ $answer == "contract "*" core $version" ]] || { echo "unexpected answer from the aarch64 library"; exit 1; }

echo "== the sdist builds"
# Its own target dir, kept between runs: the first build takes minutes, later ones seconds.
CARGO_TARGET_DIR=$PWD/target/dist-sdist pip wheel --quiet --disable-pip-version-check --no-deps \
  -w "$work/from-sdist" "$sdist"
"$work/venv/bin/pip" install --quiet --disable-pip-version-check --force-reinstall "$work"/from-sdist/mintid-*.whl
(cd "$work" && venv/bin/python -I -c "import mintid; assert mintid.core_version() == '$version'; print('   sdist wheel:', mintid.core_version())")
echo "python artifacts: ok"
