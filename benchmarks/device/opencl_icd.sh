# Source THERE after setup.sh: points the ICD loader bundled with the carried pyopencl wheel at NVIDIA's
# OpenCL driver (containers ship libnvidia-opencl without /etc/OpenCL/vendors), then lists the devices found.
lib=$(ldconfig -p | awk '/libnvidia-opencl.so.1/ {print $NF; exit}')
[ -n "$lib" ] || lib=$(find / -name 'libnvidia-opencl.so.1*' 2>/dev/null | head -1)
if [ -n "$lib" ]; then
  mkdir -p /tmp/ocl-vendors && echo "$lib" > /tmp/ocl-vendors/nvidia.icd
  export OCL_ICD_VENDORS=/tmp/ocl-vendors
fi
echo "NVIDIA OpenCL library: ${lib:-none}"
python3 -c "
from seedmap.backends.opencl.device import all_devices, name_of, is_gpu
found = all_devices()
print('OpenCL devices:', [(name_of(d), 'GPU' if is_gpu(d) else 'other') for d in found])
raise SystemExit(0 if any(is_gpu(d) for d in found) else 1)"
