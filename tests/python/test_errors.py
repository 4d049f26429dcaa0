# SPDX-License-Identifier: MIT
"""Library failures become GdrmapError (an OSError) carrying the errno,
the failing function and the library's own explanation, with advice for
PyTorch and CuPy memory; a failed Mapping leaves nothing pinned; the
instance is opened again after gdrmap_open failed."""

import errno
import os

import check
from check import check as CHECK, raises

check.use_mock()
import gdrmap	# noqa: E402
from gdrmap import GdrmapError, Mapping	# noqa: E402
from fakes import DeviceMemory, FakeCAI, Mock	# noqa: E402

mock = Mock()
mem = DeviceMemory(1 << 18)

# Opening fails (gdrmap_open, the package's way in): its explanation
# (every backend's reason) is the message.
mock.fail("open", errno.ENODEV, "mock: no GPU here (load gdrdrv)")
opens = mock.gdrmap_opens()
e = raises(GdrmapError, Mapping, mem.ptr, 64,
           match=("gdrmap_open: no backend is usable here",
                  "mock: no GPU here (load gdrdrv)"))
CHECK(isinstance(e, OSError) and e.errno == errno.ENODEV and
      e.function == "gdrmap_open", repr(e))
CHECK(e.strerror.startswith("gdrmap_open: "), e.strerror)
CHECK(mock.gdrmap_opens() == opens + 1, "the package opened with gdrmap_open")
# ... and is tried again next time.
with Mapping(mem.ptr, 64) as m:
    CHECK(not m.closed, "the instance opens after a failed open")

# gdr_pin_buffer fails: errno and explanation, nothing left pinned.
LEGACY = ("0x7f00 is not memory from cuMemCreate (legacy cuMemAlloc memory, "
          "or host memory): load gdrdrv, or allocate with cuMemCreate")
mock.fail("pin", errno.EINVAL, LEGACY)
e = raises(GdrmapError, Mapping, mem.ptr, 64,
           match="gdr_pin_buffer: " + LEGACY)
CHECK(e is not None and e.errno == errno.EINVAL and
      e.function == "gdr_pin_buffer", repr(e))
CHECK("PYTORCH" not in str(e), "advice for PyTorch on a pointer")
CHECK(mock.live() == (1, 0, 0), "live %r" % (mock.live(),))


# The same for a PyTorch tensor and a CuPy array: what to change.
def framework_array(module):
    cls = type("Array", (FakeCAI,), {"__module__": module})
    return cls(mem.ptr, (64,))


os.environ.pop("PYTORCH_CUDA_ALLOC_CONF", None)
os.environ.pop("PYTORCH_ALLOC_CONF", None)
for module, words in (
        ("torch", ("PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True",
                   "sudo modprobe gdrdrv")),
        ("cupy._core.core", ("gdrmap.cupy_memory_pool()",
                             "sudo modprobe gdrdrv"))):
    mock.fail("pin", errno.EINVAL, LEGACY)
    raises(GdrmapError, Mapping, framework_array(module),
           match=("gdr_pin_buffer: " + LEGACY,) + words)
# With expandable segments already on, the advice is about spanning
# two allocations.
os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "expandable_segments:True"
mock.fail("pin", errno.EINVAL, "[0x7f00, +4194304) is not inside one "
          "allocation")
e = raises(GdrmapError, Mapping, framework_array("torch"),
           match=("expandable segments are on", "spans two"))
CHECK(e is not None and "PYTORCH_CUDA_ALLOC_CONF=" not in str(e), str(e))
del os.environ["PYTORCH_CUDA_ALLOC_CONF"]
# Advice only where it helps: not for other errors.
mock.fail("pin", errno.ENOMEM, "mock: out of pins")
e = raises(GdrmapError, Mapping, framework_array("torch"),
           match="mock: out of pins")
CHECK(e is not None and "PYTORCH" not in str(e), str(e))

# gdr_map fails: the pin is undone.
mock.fail("map", errno.ENOMEM, "vkMapMemory of 65536 bytes failed: error -2 "
          "(BAR1 space exhausted?)")
e = raises(GdrmapError, Mapping, mem.ptr, 64,
           match="gdr_map: vkMapMemory of 65536 bytes failed")
CHECK(e is not None and e.errno == errno.ENOMEM, repr(e))
CHECK(mock.live() == (1, 0, 0), "a failed map left %r" % (mock.live(),))

# gdrmap's extensions missing from the library in use (the mock has no
# gdrmap_mem_alloc): a clear error, not an AttributeError.
e = raises(GdrmapError, gdrmap.mem_alloc, 1 << 20,
           match=("has no gdrmap_mem_alloc", "use gdrmap's libgdrapi.so.2"))
CHECK(e is not None and e.errno == errno.ENOSYS, repr(e))
raises(GdrmapError, gdrmap.mem_free, 1 << 40, match="has no gdrmap_mem_free")
raises(TypeError, gdrmap.mem_alloc, "1M", match="size must be an integer")

check.done()
