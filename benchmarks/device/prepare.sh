#!/usr/bin/env bash
# Run HERE, on the development VM, in the repository, before a loan of the GPU machine (see README.md
# beside this file). Fills .device/ (ignored through .git/info/exclude) with what that machine lacks:
# wheels for its Python 3.12 (numpy < 2.5, which numba-cuda 0.30 needs, and seedmap's I/O packages), the
# seqan binaries (mason_simulator, yara) with two libraries they link, and the benchmark reference, gzipped.
# Every device `run` then names ".device" in carry. Needs pip's registry, seqan-apps and the reference
# benchmarks/work/scaling/ragout16.fa (python benchmarks/scaling.py makes it, with ragout-examples).
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
grep -qx "/.device/" .git/info/exclude 2>/dev/null || echo "/.device/" >> .git/info/exclude
rm -rf .device
mkdir -p .device/whl .device/bin .device/lib

version() { python3 -c "import importlib.metadata as m; print(m.version('$1'))"; }
numpy_version=$(version numpy)
case "$numpy_version" in 2.5*|2.6*|3.*) numpy_version=2.4.6 ;; esac
for pkg in "numpy==$numpy_version" "dnaio==$(version dnaio)" "xopen==$(version xopen)" "isal==$(version isal)" \
           "zlib-ng==$(version zlib-ng)" "backports.zstd==$(version backports.zstd)" \
           "pydivsufsort==$(version pydivsufsort)" "pyopencl==$(version pyopencl)" "pytools==$(version pytools)" \
           "platformdirs==$(version platformdirs)" "siphash24==$(version siphash24)" \
           "typing_extensions==$(version typing_extensions)"; do
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_24_x86_64 \
    --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 -d .device/whl "$pkg" 2>/dev/null
done

for exe in mason_simulator yara_indexer yara_mapper; do
  cp "$(command -v $exe || echo /usr/lib/seqan/bin/$exe)" .device/bin/
done
for lib in libbz2.so.1.0 libgomp.so.1; do
  cp -L "$(ldconfig -p | awk -v l=$lib '$1 == l {print $NF; exit}')" .device/lib/
done

gzip -1 -c benchmarks/work/scaling/ragout16.fa > .device/ragout16.fa.gz
ls .device/whl
du -sh .device
