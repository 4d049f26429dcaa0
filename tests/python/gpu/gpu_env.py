# SPDX-License-Identifier: MIT
"""Set-up shared by the GPU tests: the tree's library, PyTorch's allocator
set to expandable segments (before torch is imported: it reads the
setting at its first CUDA allocation), and skipping cleanly where there is
no GPU, no PyTorch or no CuPy."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))
import check	# noqa: E402

os.environ.setdefault("GDRMAP_LIBRARY", check.TREE_LIBRARY)
os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "expandable_segments:True"

import gdrmap	# noqa: E402


def skip_all(why):
    check.skip(why)
    check.done()


def need_torch():
    """torch with at least one GPU, or skip the test."""
    try:
        import torch
    except ImportError:
        skip_all("PyTorch is not installed")
    if not torch.cuda.is_available() or not torch.cuda.device_count():
        skip_all("PyTorch sees no GPU")
    return torch


def need_cupy():
    """CuPy with at least one GPU, or skip the test."""
    try:
        import cupy
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as e:	# not installed, or no driver / GPU
        skip_all("CuPy is not usable: %s" % e)
    if not count:
        skip_all("CuPy sees no GPU")
    return cupy


def backend():
    """The backend the library uses here (a failure to open is one of
    this test's failures, not a skip: there is a GPU)."""
    name = gdrmap.backend()
    print("backend:", name)
    return name


def expect_bytes(got, want, what):
    """Every byte equal; on a difference say how many and where first."""
    if got == want:
        return check.check(True)
    bad = [i for i in range(min(len(got), len(want))) if got[i] != want[i]]
    return check.check(False, "%s: %d of %d bytes wrong (first at %s), "
                       "lengths %d/%d" % (what, len(bad), len(want),
                                          bad[:1], len(got), len(want)))


def pattern(n, seed):
    """n bytes, never 0 and never the poison 0xA5."""
    values = ((i * 13 + seed) % 250 + 1 for i in range(n))
    return bytes(0x5A if v == 0xA5 else v for v in values)


class DLPackOnly:
    """An array seen through DLPack alone (no __cuda_array_interface__)."""

    def __init__(self, array):
        self.array = array

    def __dlpack__(self, **kwargs):
        return self.array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()
