# SPDX-License-Identifier: MIT
"""Array layouts: is an array one dense range of memory?"""


def product(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def dense_extent(shape, strides, unit):
    """The extent of an array whose items are ``unit`` apart when dense,
    in the strides' units, if its items tile one range with no gap and no
    overlap (C order, Fortran order or any other order of the axes); else
    None.  Axes of length 1 may have any stride: it is never taken."""
    axes = sorted((s, n) for n, s in zip(shape, strides) if n != 1)
    extent = unit
    for stride, n in axes:
        if stride != extent:
            return None
        extent *= n
    return extent
