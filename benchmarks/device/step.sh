#!/usr/bin/env bash
# One step of a loan of the GPU machine, THERE, in the repository root (each fits one 10-minute device call):
#   bash benchmarks/device/step.sh check     # the simulator's kernel tests on the real GPU (one process: the
#                                                 last case checks every declared signature was launched); cc 9.0
#   bash benchmarks/device/step.sh gpu       # benchmarks/gpu.py: kernel rates, the FM search, neighborhood e2e
#   bash benchmarks/device/step.sh engines   # benchmarks/gpu.py end to end: kmer and fm, CPU against GPU
#   bash benchmarks/device/step.sh scaling   # benchmarks/scaling.py -t 1 vs all cores, yara in the same run
#   bash benchmarks/device/step.sh opencl    # the OpenCL tests on the GPU through NVIDIA's OpenCL driver
#   READS_N=200000 bash benchmarks/device/step.sh quick   # check, then gpu (CHECK_S, GPU_S: their limits)
#   READS_N=200000 bash benchmarks/device/step.sh engines-nb   # neighborhood end to end only (then dealloc)
#   READS_N=200000 bash benchmarks/device/step.sh dealloc      # the same with numba-cuda's frees deferred
# Logs go to $OUT (the device tool brings them back). Each step sets itself up (setup.sh) and makes the
# reads (mason, seed 42: the development VM's reads) when a step maps and they are missing, so any step can come first.
set -uo pipefail
cd "$(dirname "$0")/../.."
source benchmarks/device/setup.sh || { echo "device set-up failed"; exit 1; }
W=benchmarks/work/scaling
REF=$W/ragout16.fa
N=${READS_N:-1000000}  # READS_N=200000: fewer reads, for a short device budget
READS=$W/reads_n${N}_l100_s42.fq
need_reads() {  # the steps that map (a minute or two for mason on a fresh machine)
  [ -s "$READS" ] || (cd benchmarks && python3 -c "
from pathlib import Path
from scaling import reads
reads(Path('work/scaling').resolve(), Path('work/scaling/ragout16.fa').resolve(), $N, 100, 42)")
}
T=$(nproc)
case "${1:-}" in
  quick)  # check then gpu in one call, each under a time limit, for a loan with little device time
    timeout "${CHECK_S:-400}" bash benchmarks/device/step.sh check  # (run from the repository root: cd above)
    timeout "${GPU_S:-170}" bash benchmarks/device/step.sh gpu ;;
  dealloc)  # the gpu step's end-to-end runs with numba-cuda's frees deferred: does per-batch cuMemFree serialize workers?
    LOG=dealloc NUMBA_CUDA_MAX_PENDING_DEALLOCS_COUNT=1000000 NUMBA_CUDA_MAX_PENDING_DEALLOCS_RATIO=1 \
      bash benchmarks/device/step.sh engines-nb ;;
  engines-nb)  # the neighborhood engine end to end only, CPU against GPU (dealloc's runs)
    need_reads
    [ -d "$REF.smi" ] || python3 -m seedmap index "$REF"
    python3 benchmarks/gpu.py --reference "$REF" --reads "$READS" --threads "$T" --engines neighborhood --only-e2e \
      --gpu-batch-sizes "${BATCHES:-12500,50000}" 2>&1 | tee "$OUT/${LOG:-engines-nb}.log" ;;
  check)
    NUMBA_ENABLE_CUDASIM=0 python3 -m pytest -q -p no:cacheprovider -p no:randomly -n 0 -x tests/cuda_sim_cases.py 2>&1 | tee "$OUT/check.log"
    python3 tests/cuda_compile_check.py 9.0 > "$OUT/compile.json" 2>&1; tail -c 600 "$OUT/compile.json" ;;
  gpu)
    need_reads
    [ -d "$REF.smi" ] || python3 -m seedmap index "$REF"
    python3 benchmarks/gpu.py --reference "$REF" --reads "$READS" --threads "$T" --engines neighborhood \
      --fm-reads 50000 --gpu-batch-sizes "${BATCHES:-12500,50000}" 2>&1 | tee "$OUT/gpu.log" ;;
  engines)
    need_reads
    for kind in kmer fm; do [ -d "$REF.$kind.smi" ] || python3 -m seedmap index --kind $kind "$REF"; done
    python3 benchmarks/gpu.py --reference "$REF" --reads "$READS" --threads "$T" --engines kmer,fm --only-e2e \
      --gpu-batch-sizes "${BATCHES:-12500}" 2>&1 | tee "$OUT/engines.log" ;;
  scaling)
    need_reads
    python3 benchmarks/scaling.py --threads "1,$T" --rounds "${ROUNDS:-1}" --seedmap-cmd "python3 -m seedmap" \
      2>&1 | tee "$OUT/scaling.log" ;;
  opencl)
    source benchmarks/device/opencl_icd.sh && \
      python3 -m pytest -q -p no:cacheprovider -p no:randomly tests/test_opencl_*.py 2>&1 | tee "$OUT/opencl.log" ;;
  *) echo "usage: step.sh check|gpu|engines|engines-nb|dealloc|scaling|opencl|quick"; exit 2 ;;
esac
