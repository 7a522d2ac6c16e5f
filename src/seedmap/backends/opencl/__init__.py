"""OpenCL backend (PyOpenCL): the merged candidate windows verified on an OpenCL device (locate.cl, one
work-item per window), runs for real on any CPU through PoCL. pyopencl is imported only when an OpenCL
device is asked for (device.cl_module), so CPU and CUDA runs never pay for it."""
