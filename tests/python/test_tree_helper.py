# SPDX-License-Identifier: MIT
"""`make` builds the compiled flag helper where Python's headers are, so
that the package run from the tree after `make` (README.md) takes it
instead of ctypes: the build `make` would do from nothing compiles
gdrmap/_fastflag.c into the build tree (`make -n`, a fresh O=)."""
import os
import subprocess
import sys
import sysconfig
import tempfile

import check
from check import check as CHECK

top = check.TOP
if not os.path.isfile(os.path.join(sysconfig.get_paths()["include"],
                                   "Python.h")):
    check.skip("this Python has no headers (python3-dev): make says so instead")
    check.done()
with tempfile.TemporaryDirectory() as o:
    env = dict(os.environ, PYTHON=sys.executable)
    env.pop("MAKEFLAGS", None)
    env.pop("MAKELEVEL", None)
    run = subprocess.run(["make", "-n", "-C", top, "O=" + o, "all"],
                         env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True)
    CHECK(run.returncode == 0, "make -n all: exit %d\n%s" %
          (run.returncode, run.stdout[-2000:]))
    CHECK("_fastflag.c" in run.stdout and
          os.path.join(o, "python", "gdrmap") in run.stdout,
          "make (all) builds the flag helper into %s/python/gdrmap: %s" %
          (o, run.stdout[-2000:]))
check.done()
