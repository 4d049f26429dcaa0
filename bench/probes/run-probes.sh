#!/bin/bash
# On a GPU machine: what the machine has (driver, CUDA, Python packages,
# NCCL, Vulkan ICD, container signals) and how the CUDA driver answers
# pointer queries under each current context (cuda_ctx_probe.c), and
# what copy-only pins rely on (copy_only_probe.c), and which way of
# asking for a DMA is fastest, size by size, beside gdrmap's own DMA path
# (dma_stream_probe.c, against the library built here), and what pinning
# a pageable buffer for the length of one copy costs (host_register_probe.c),
# and what each CUDA question of a DMA copy costs (cuda_query_probe.c),
# and small copies by gdrmap_copy_* beside gdr_copy_*, timed in blocks
# (small_write_probe.c), and whether libcuda's dma-buf export survives
# other threads freeing memory in the exported range (export_race_probe.c),
# and what the rm backend's pin of a fresh buffer costs (fresh_pin_probe.c).
# usage: bench/probes/run-probes.sh OUTDIR      (from the top of the tree)
set -u
out=${1:?usage: run-probes.sh OUTDIR}
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
{
	echo "== date"; date -u
	echo "== nvidia-smi"; nvidia-smi -L; nvidia-smi --query-gpu=driver_version,pci.bus_id,memory.total --format=csv
	echo "== uname"; uname -a
	echo "== cpu"; grep -m1 'model name' /proc/cpuinfo; nproc
	echo "== python"; command -v python3; python3 -V
	python3 - <<'PY'
import importlib, os
for m in ("torch", "cupy", "jax", "numpy", "numba", "nvidia.nccl", "nvidia.nvshmem"):
    try:
        mod = importlib.import_module(m)
        print(m, getattr(mod, "__version__", "?"), getattr(mod, "__path__", [getattr(mod, "__file__", "")])[0] if hasattr(mod, "__path__") else getattr(mod, "__file__", ""))
    except Exception as e:
        print(m, "MISSING", e)
try:
    import torch
    print("torch.cuda", torch.cuda.is_available(), torch.cuda.device_count(), torch.version.cuda, torch.cuda.nccl.version())
except Exception as e:
    print("torch.cuda error", e)
PY
	echo "== nccl libs"; find / -xdev -name 'libnccl.so*' 2>/dev/null | head
	echo "== nvshmem libs"; find / -xdev -name 'libnvshmem*.so*' 2>/dev/null | head
	echo "== nccl.h"; find / -xdev -name 'nccl.h' 2>/dev/null | head -3
	echo "== vulkan"; ldconfig -p | grep -i -e vulkan -e GLX_nvidia -e libcuda.so; ls /usr/local/nvidia/share/vulkan/icd.d /usr/share/vulkan/icd.d /etc/vulkan/icd.d 2>&1
	echo "== /dev"; ls -l /dev/nvidia* /dev/gdrdrv 2>&1
	echo "== env"; env | grep -i -e nvidia -e cuda -e ^VK_ -e container | sort
	echo "== container signals"; ls -l /.dockerenv /run/.containerenv 2>&1; cat /proc/1/cgroup; head -3 /proc/1/mountinfo; cat /proc/1/comm
	echo "== mounts with nvidia"; grep -i nvidia /proc/self/mountinfo | head -20
	echo "== gcc/nvcc"; gcc --version | head -1; nvcc --version | tail -2
} >"$out/machine.txt" 2>&1
cc -O1 -o /tmp/cuda_ctx_probe "$here/cuda_ctx_probe.c" -I/usr/local/cuda/include -L/usr/local/cuda/lib64/stubs -lcuda >"$out/ctx-probe.txt" 2>&1 &&
	/tmp/cuda_ctx_probe >>"$out/ctx-probe.txt" 2>&1
echo "probe exit $?" >>"$out/ctx-probe.txt"
cc -O1 -o /tmp/copy_only_probe "$here/copy_only_probe.c" -I/usr/local/cuda/include -L/usr/local/cuda/lib64/stubs -lcuda >"$out/copy-only-probe.txt" 2>&1 &&
	/tmp/copy_only_probe >>"$out/copy-only-probe.txt" 2>&1
echo "probe exit $?" >>"$out/copy-only-probe.txt"
top=$(cd "$here/../.." && pwd)
lib=${BUILD:-/tmp/gdrmap-probes-build}
{ make -C "$top" -j"$(nproc)" O="$lib" lib >/dev/null &&
	cc -O2 -o /tmp/dma_stream_probe "$here/dma_stream_probe.c" -I/usr/local/cuda/include \
		-I"$top/include" -L"$lib/lib" -lgdrapi -Wl,-rpath,"$lib/lib" \
		-L/usr/local/cuda/lib64/stubs -lcuda &&
	taskset -c 2 /tmp/dma_stream_probe 300; } >"$out/dma-stream-probe.txt" 2>&1
echo "probe exit $?" >>"$out/dma-stream-probe.txt"
# All CPUs allowed: the staged path's helpers are part of what it times.
{ cc -O2 -o /tmp/host_register_probe "$here/host_register_probe.c" \
	-I/usr/local/cuda/include -I"$top/include" -L"$lib/lib" -lgdrapi \
	-Wl,-rpath,"$lib/lib" -L/usr/local/cuda/lib64/stubs -lcuda &&
	/tmp/host_register_probe 30; } >"$out/host-register-probe.txt" 2>&1
echo "probe exit $?" >>"$out/host-register-probe.txt"
{ cc -O2 -o /tmp/cuda_query_probe "$here/cuda_query_probe.c" \
	-I/usr/local/cuda/include -L/usr/local/cuda/lib64/stubs -lcuda &&
	taskset -c 2 /tmp/cuda_query_probe 2000; } >"$out/cuda-query-probe.txt" 2>&1
echo "probe exit $?" >>"$out/cuda-query-probe.txt"
{ cc -O2 -o /tmp/small_write_probe "$here/small_write_probe.c" \
	-I/usr/local/cuda/include -I"$top/include" -L"$lib/lib" -lgdrapi \
	-Wl,-rpath,"$lib/lib" -L/usr/local/cuda/lib64/stubs -lcuda &&
	taskset -c 2 /tmp/small_write_probe 401; } >"$out/small-write-probe.txt" 2>&1
echo "probe exit $?" >>"$out/small-write-probe.txt"
{ cc -O2 -o /tmp/export_race_probe "$here/export_race_probe.c" \
	-I/usr/local/cuda/include -L/usr/local/cuda/lib64/stubs -lcuda -lpthread &&
	for m in window pages window pages; do
		timeout 30 /tmp/export_race_probe $m 8; echo "exit $? ($m)"
	done; } >"$out/export-race-probe.txt" 2>&1
{ cc -O2 -o /tmp/fresh_pin_probe "$here/fresh_pin_probe.c" \
	-I/usr/local/cuda/include -I"$top/include" -L"$lib/lib" -lgdrapi \
	-Wl,-rpath,"$lib/lib" -L/usr/local/cuda/lib64/stubs -lcuda &&
	taskset -c 2 /tmp/fresh_pin_probe 300; } >"$out/fresh-pin-probe.txt" 2>&1
echo "probe exit $?" >>"$out/fresh-pin-probe.txt"
