# SPDX-License-Identifier: MIT
"""The exception every failure of the library becomes."""

import os


class GdrmapError(OSError):
    """A call into libgdrapi failed, or the library could not be used.

    ``errno`` is the error number the library returned (EINVAL, ENOMEM,
    ENODEV, ...); ``strerror`` is the library's own explanation of what
    went wrong and what to do about it (``gdrmap_last_error()``), prefixed
    with the function that failed, which is also in ``function``.
    """

    def __init__(self, errno, message, function=None):
        super().__init__(errno, message)
        self.function = function


def library_error(err, function, explanation, hint=None):
    """A GdrmapError for ``function`` returning ``err``, explained."""
    text = explanation or os.strerror(err)
    message = "%s: %s" % (function, text)
    if hint:
        message += "\n" + hint
    return GdrmapError(err, message, function)
