"""Compile every CUDA kernel of seedmap for a real GPU architecture, without a GPU: NVVM (numba-cuda[cu12]
brings it as a wheel) turns each kernel into PTX for the signatures the code launches it with (each kernel
module's SIGNATURES; tests/cuda_sim_cases.py checks them against the real launches), and ptxas (the same
wheels' cuda_nvcc) assembles the PTX into machine code: NVVM leaves calls of numba's C helpers (e.g. a
reshape's) unresolved in the PTX, which only the assembler, or a GPU's loader, refuses.

Run by tests/test_cuda_compile.py in a subprocess with the CUDA simulator off (NUMBA_ENABLE_CUDASIM is read
when numba.cuda is imported): `python cuda_compile_check.py 9.0` prints one JSON object,
{"skip": reason} when NVVM is unavailable, else {"compiled": [...], "errors": [...]}.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from types import SimpleNamespace


def nvvm_missing() -> str | None:
    """Why NVVM cannot compile here (None when it can)."""
    try:
        from numba import cuda
    except Exception as exc:  # any import failure is a reason to skip
        return f"numba.cuda cannot be imported: {type(exc).__name__}: {exc}"
    if getattr(cuda, "implementation", "") != "NVIDIA":
        return "numba-cuda is not installed (numba's built-in numba.cuda); pip install 'numba-cuda[cu12]'"
    try:
        from numba.cuda.cudadrv import nvvm

        nvvm.NVVM()  # loads libnvvm
    except Exception as exc:
        return f"NVVM unavailable ({type(exc).__name__}: {exc}); pip install 'numba-cuda[cu12]'"
    return None


def ptxas() -> str | None:
    """The PTX assembler: numba-cuda[cu12]'s (the nvidia cuda_nvcc wheel), else one on PATH."""
    try:
        import nvidia.cuda_nvcc as nvcc

        found = [Path(p) / "bin" / "ptxas" for p in nvcc.__path__]
        found = [str(p) for p in found if p.exists()]
        if found:
            return found[0]
    except ImportError:
        pass
    return shutil.which("ptxas")


def assemble(assembler: str, ptx: str, cc: tuple[int, int]) -> str | None:
    """ptxas's complaint about this PTX for sm_XY (None: it assembled)."""
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "k.ptx"
        src.write_text(ptx)
        r = subprocess.run([assembler, f"-arch=sm_{cc[0]}{cc[1]}", "-o", str(Path(tmp) / "k.cubin"), str(src)],
                           capture_output=True, text=True)
    return None if r.returncode == 0 else (r.stderr or r.stdout).strip()[:1500]


def kernels() -> list[tuple[str, object, list]]:
    """(module.name, dispatcher, declared signatures) of every kernel in seedmap.backends.cuda; a kernel
    without declared signatures gets an empty list (an error for the caller)."""
    from numba.cuda.dispatcher import CUDADispatcher

    import seedmap.backends.cuda as pkg

    found = []
    for info in pkgutil.iter_modules(pkg.__path__):
        mod = importlib.import_module(f"{pkg.__name__}.{info.name}")
        declared = getattr(mod, "SIGNATURES", {})
        for name, obj in sorted(vars(mod).items()):
            if (isinstance(obj, CUDADispatcher) and not obj.targetoptions.get("device")
                    and getattr(obj.py_func, "__module__", None) == mod.__name__):
                found.append((f"{info.name}.{name}", obj, list(declared.get(name, []))))
        for name in declared:
            if not isinstance(getattr(mod, name, None), CUDADispatcher):
                found.append((f"{info.name}.{name}", None, []))
    return found


def main(cc_text: str) -> dict:
    reason = nvvm_missing()
    if reason:
        return {"skip": reason}
    cc = tuple(int(x) for x in cc_text.split("."))
    import numba.cuda.compiler as compiler
    import numba.cuda.dispatcher as dispatcher
    from numba import cuda

    # Device functions called by a kernel are compiled for the current device's architecture: there is
    # none here, so say it is the one asked for.
    fake = SimpleNamespace(compute_capability=cc)
    dispatcher.get_current_device = compiler.get_current_device = lambda: fake
    compiled, errors = [], []
    assembler = ptxas()
    if assembler is None:
        errors.append("ptxas not found (numba-cuda[cu12] brings it): the PTX could not be assembled")
    for name, kernel, sigs in kernels():
        if kernel is None:
            errors.append(f"{name}: listed in SIGNATURES but not a CUDA kernel")
            continue
        if not sigs:
            errors.append(f"{name}: no signatures declared in its module's SIGNATURES")
            continue
        for sig in sigs:
            try:
                ptx, _ = cuda.compile_ptx(kernel.py_func, sig, cc=cc)
                refused = assemble(assembler, ptx, cc) if assembler else None
                if refused:
                    errors.append(f"{name}{tuple(str(t) for t in sig)} for cc {cc_text}: ptxas: {refused}")
                    continue
                compiled.append(f"{name}{tuple(str(t) for t in sig)}")
            except Exception as exc:  # reported: the test fails on it
                text = re.sub(r"\x1b\[[0-9;]*m", "", str(exc)).strip()
                errors.append(f"{name}{tuple(str(t) for t in sig)} for cc {cc_text}: {type(exc).__name__}: "
                              f"{text[:1500]}")
    return {"compiled": compiled, "errors": errors}


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1])))
