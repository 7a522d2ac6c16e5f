# Source THERE, on the GPU machine, in the repository root: `source benchmarks/device/setup.sh`.
# Installs the carried wheels once (into /tmp/site, ahead of the image's numpy 2.5 on PYTHONPATH), puts the
# carried seqan binaries on PATH, and unpacks the reference into benchmarks/work/scaling. Prints what it
# found; returns non-zero when the GPU or numba-cuda is missing.
if [ ! -f /tmp/site/.installed ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site \
    .device/whl/*.whl && touch /tmp/site/.installed || return 1
fi
export PYTHONPATH="/tmp/site:$PWD/src:$PWD/tests:${PYTHONPATH:-}"
export PATH="$PWD/.device/bin:$PATH" LD_LIBRARY_PATH="$PWD/.device/lib:${LD_LIBRARY_PATH:-}"
export PYTHONUNBUFFERED=1 OUT="${OUT:-/tmp/out}"  # numba cache: seedmap keys its own by the sources
mkdir -p "$OUT" benchmarks/work/scaling
[ -s benchmarks/work/scaling/ragout16.fa ] || gunzip -c .device/ragout16.fa.gz > benchmarks/work/scaling/ragout16.fa
nproc
python3 -c "
import numpy, numba
from numba import cuda
gpu = getattr(cuda.get_current_device(), 'name', b'?') if cuda.is_available() else None
print('python numpy', numpy.__version__, 'numba', numba.__version__, 'numba-cuda', cuda.implementation, 'gpu', gpu)
raise SystemExit(0 if cuda.is_available() else 1)"
