# SPDX-License-Identifier: MIT
"""Reading ``__cuda_array_interface__`` (versions 0-3), as CuPy, Numba and
PyTorch export it: https://numba.readthedocs.io/en/stable/cuda/cuda_array_interface.html

The ``stream`` entry (version 3) names the stream the producer is working
on, and asks a consumer to synchronise with it before touching the data.
gdrmap does not: its purpose is to let the CPU read and write GPU memory
while kernels run, and a Mapping is not ordered with any stream.  The data
a kernel writes becomes visible to the CPU when the kernel writes it; if
you need the work queued so far to be finished, synchronise yourself.
"""

from ._layout import dense_extent, product


def parse_typestr(typestr):
    """The item size in bytes of a typestr such as '<f4', '|u1', '|V16'."""
    if not isinstance(typestr, str) or len(typestr) < 3 or \
            typestr[0] not in "<>|=" or not typestr[2:].isdigit():
        raise ValueError(
            "__cuda_array_interface__: typestr %r is not of the form "
            "'<f4' (byte order, kind, size in bytes)" % (typestr,))
    size = int(typestr[2:])
    if size <= 0:
        raise ValueError("__cuda_array_interface__: typestr %r has no size"
                         % (typestr,))
    return size


def from_cai(cai):
    """(device pointer, size in bytes, read-only) of the array cai
    describes; ValueError if it does not describe one dense range."""
    if not isinstance(cai, dict):
        raise TypeError("__cuda_array_interface__ is a %s, not a dict" %
                        type(cai).__name__)
    for key in ("shape", "typestr", "data", "version"):
        if key not in cai:
            raise ValueError("__cuda_array_interface__ has no %r" % key)
    version = cai["version"]
    if not isinstance(version, int) or version < 0:
        raise ValueError("__cuda_array_interface__: version %r is not a "
                         "version number" % (version,))
    if cai.get("mask") is not None:
        raise ValueError("__cuda_array_interface__: masked arrays cannot be "
                         "mapped (the mask is a second allocation)")
    shape = cai["shape"]
    if not isinstance(shape, tuple) or \
            not all(isinstance(n, int) and n >= 0 for n in shape):
        raise ValueError("__cuda_array_interface__: shape %r is not a tuple "
                         "of sizes" % (shape,))
    itemsize = parse_typestr(cai["typestr"])
    data = cai["data"]
    if not isinstance(data, tuple) or len(data) != 2 or \
            not isinstance(data[0], int):
        raise ValueError("__cuda_array_interface__: data %r is not "
                         "(pointer, read-only)" % (data,))
    ptr, readonly = data
    size = product(shape) * itemsize
    strides = cai.get("strides")
    if strides is not None:
        if not isinstance(strides, tuple) or len(strides) != len(shape) or \
                not all(isinstance(s, int) for s in strides):
            raise ValueError("__cuda_array_interface__: strides %r do not "
                             "match shape %r" % (strides, shape))
        if size and dense_extent(shape, strides, itemsize) != size:
            raise ValueError(
                "the array is not contiguous (shape %r, strides %r bytes, "
                "%d-byte items): a mapping covers one range of memory, so "
                "map a contiguous copy (tensor.contiguous(), "
                "cupy.ascontiguousarray(a))" % (shape, strides, itemsize))
    return ptr, size, bool(readonly)
