# SPDX-License-Identifier: MIT
"""gdrmap.doctor(): the `gdrmap doctor --json` report as a dict."""

import errno
import json
import os
import shutil
import subprocess

from . import _lib
from .errors import GdrmapError

COMMAND_ENV = "GDRMAP_COMMAND"


def _beside_library():
    """Where the gdrmap command lies relative to the library: the tree's
    build/tools, PREFIX/bin, /usr/bin for /usr/lib/<multiarch>."""
    try:
        libdir = os.path.dirname(_lib.library().path)
    except GdrmapError:
        return []
    return [os.path.join(libdir, *rel, "gdrmap") for rel in
            (("..", "tools"), ("..", "bin"), ("..", "..", "bin"))]


def find_command():
    """The gdrmap command's path: $GDRMAP_COMMAND, else the one that goes
    with the library in use, else the first on PATH."""
    env = os.environ.get(COMMAND_ENV)
    if env:
        return env
    for path in _beside_library():
        if os.access(path, os.X_OK) and os.path.isfile(path):
            return os.path.normpath(path)
    path = shutil.which("gdrmap")
    if path:
        return path
    raise GdrmapError(
        errno.ENOENT, "the gdrmap command is neither beside the library nor "
        "on PATH: install it (the gdrmap-tools package, or `make install`), "
        "or set %s to its path" % COMMAND_ENV, "doctor")


def doctor(timeout=120):
    """Run `gdrmap doctor --json` and return its report as a dict.

    Its "gpus", "backends" and "default_backend" say what this machine can
    do and what to fix; the report is returned whether or not a check
    failed (the command exits 1 then)."""
    cmd = find_command()
    try:
        done = subprocess.run([cmd, "doctor", "--json"], capture_output=True,
                              timeout=timeout, check=False)
    except OSError as e:
        raise GdrmapError(e.errno or errno.ENOENT, "cannot run %s: %s" %
                          (cmd, e.strerror or e), "doctor") from None
    except subprocess.TimeoutExpired:
        raise GdrmapError(errno.ETIMEDOUT, "%s doctor --json did not finish "
                          "in %g s" % (cmd, timeout), "doctor") from None
    stderr = done.stderr.decode("utf-8", "replace").strip()
    if done.returncode in (0, 1):
        try:
            report = json.loads(done.stdout)
        except ValueError as e:
            report = e
        if isinstance(report, dict):
            return report
    raise GdrmapError(
        errno.EPROTO, "%s doctor --json exited %d without a JSON report%s"
        % (cmd, done.returncode, ": " + stderr[-2000:] if stderr else ""),
        "doctor")
