"""CUDA backend (numba-cuda): bulk verification and MAROSE seed + filter kernels, device selection and the
multi-GPU work queue. numba.cuda is imported lazily (device.cuda_module) so the CPU path never pays for it.
Every kernel also runs under NUMBA_ENABLE_CUDASIM=1, where the tests compare it with its CPU twin."""
