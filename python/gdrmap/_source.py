# SPDX-License-Identifier: MIT
"""What a Mapping maps: the device memory behind an object or a pointer."""

import operator

from . import _cai, _cuda, _dlpack

MAX_ADDRESS = (1 << 64) - 1


class Source:
    """ptr, size: the device range; device: its CUDA ordinal or None;
    readonly: the producer forbids writes; keep: what must stay alive
    while the memory is mapped; release(): give the memory back (DLPack);
    producer: the top-level module of obj's type ('torch', 'cupy')."""

    def __init__(self, ptr, size, device=None, readonly=False, keep=None,
                 release=None, producer=None):
        self.ptr, self.size, self.device = ptr, size, device
        self.readonly, self.keep, self.release = readonly, keep, release
        self.producer = producer


def _index(value, what):
    if isinstance(value, bool):
        raise TypeError("%s must be an integer, not a bool" % what)
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError("%s must be an integer, not %s" %
                        (what, type(value).__name__)) from None


def _framework_device(obj):
    """The device an array says it is on: torch's tensor.device.index,
    CuPy's array.device.id; None if it says nothing usable."""
    dev = getattr(obj, "device", None)
    for attr in ("index", "id"):
        value = getattr(dev, attr, None)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def _from_object(obj):
    producer = type(obj).__module__.split(".")[0]
    errors = []
    cai = None
    try:
        cai = obj.__cuda_array_interface__
    except AttributeError:
        pass
    except Exception as e:	# e.g. torch refuses it for bfloat16 tensors
        errors.append("__cuda_array_interface__: %s" % e)
    if cai is not None:
        ptr, size, readonly = _cai.from_cai(cai)
        return Source(ptr, size, _framework_device(obj), readonly, obj,
                      None, producer)
    if hasattr(obj, "__dlpack__"):
        if hasattr(obj, "__dlpack_device__"):
            # Refuse host memory before anything is exported.
            _dlpack.check_device(*obj.__dlpack_device__())
        try:
            capsule = _dlpack.call_dlpack(obj)
        except Exception as e:
            errors.append("__dlpack__: %s" % e)
        else:
            t = _dlpack.take(capsule)
            return Source(t.ptr, t.size, t.device, t.readonly, (obj, t),
                          t.release, producer)
    if errors:
        raise TypeError("%s cannot be mapped: %s" %
                        (type(obj).__name__, "; ".join(errors)))
    raise TypeError(
        "cannot map %s: pass an object with __cuda_array_interface__ or "
        "__dlpack__ (a PyTorch tensor, a CuPy array...), or a device "
        "pointer (an int) and a size" % type(obj).__name__)


def _has(obj, name):
    """hasattr, but an attribute whose getter raises (PyTorch's
    __cuda_array_interface__ on a tensor that requires grad) exists."""
    try:
        return hasattr(obj, name)
    except Exception:
        return True


def _is_pointer(obj):
    """An int, or an integer of another type (numpy.int64) that is not
    also an array."""
    if isinstance(obj, bool):
        return False
    return isinstance(obj, int) or (
        hasattr(type(obj), "__index__") and
        not _has(obj, "__cuda_array_interface__") and
        not _has(obj, "__dlpack__"))


def resolve(obj_or_ptr, size, device):
    """The Source for Mapping(obj_or_ptr, size, device), checked."""
    if _is_pointer(obj_or_ptr):
        if size is None:
            raise TypeError("a device pointer needs a size: "
                            "Mapping(ptr, size)")
        src = Source(_index(obj_or_ptr, "the pointer"), None)
    else:
        src = _from_object(obj_or_ptr)
    try:
        return _check(src, size, device)
    except BaseException:
        if src.release:
            src.release()
        raise


def _check(src, size, device):
    if size is not None:
        size = _index(size, "size")
        if src.size is not None and not 0 < size <= src.size:
            raise ValueError("size %d is not between 1 and the array's %d "
                             "bytes" % (size, src.size))
        src.size = size
    if src.size <= 0:
        raise ValueError("nothing to map: the size is %d bytes" % src.size)
    if not 0 < src.ptr <= MAX_ADDRESS:
        # %x of a negative number gives "0x-1": say it in decimal.
        raise ValueError("%s is not a device address: a pointer is an "
                         "address from 1 to 2**64 - 1" % (
                             "0x%x" % src.ptr if src.ptr > 0 else src.ptr))
    if src.ptr + src.size > MAX_ADDRESS:
        raise ValueError("[0x%x, +%d) is not a range of device addresses: "
                         "it ends past 2**64 - 1" % (src.ptr, src.size))
    real = _cuda.device_of(src.ptr)
    if real is not None:
        src.device = real
    if device is not None:
        device = _index(device, "device")
        if device < 0:
            raise ValueError("device must be a CUDA device ordinal (0 or "
                             "more), not %d" % device)
        if src.device is not None and device != src.device:
            raise ValueError("device=%d, but the memory is on device %d" %
                             (device, src.device))
        src.device = device
    return src
