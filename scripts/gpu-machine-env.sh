# Sourced by make check-gpu (tests/gpu/gpu.mk) and the scripts that run on
# a GPU machine (bench/gpu-run.sh, tools/gpu-run.sh): where the Vulkan
# loader is missing, unpack the Debian packages left in .gl/ into /, and
# point the loader at the NVIDIA driver's Vulkan ICD where it lives
# outside the loader's default paths.
# .gl/ holds libvulkan1 and libglvnd's libraries (libglvnd0, libegl1,
# libgl1, libglx0, libopengl0, libgles2): the NVIDIA ICD, libGLX_nvidia.so.0,
# dlopens libEGL.so.1, and without it hands the loader no vkCreateInstance
# (seen on the H200 machine, 2026-11-23).
if ! ldconfig -p | grep -q libvulkan.so.1 && ls .gl/*.deb >/dev/null 2>&1; then
	for f in .gl/*.deb; do dpkg -x "$f" /; done
	ldconfig
fi
gpu_env_icd=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
if [ -z "${VK_DRIVER_FILES:-}" ] && [ -f $gpu_env_icd ]; then
	export VK_DRIVER_FILES=$gpu_env_icd
fi
