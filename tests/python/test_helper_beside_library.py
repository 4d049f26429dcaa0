# SPDX-License-Identifier: MIT
"""The compiled helper of the build that made the library in use: with
GDRMAP_LIBRARY=O/lib/libgdrapi.so.2 (a `make O=DIR` build), the package
takes O/python/gdrmap/_fastflag*.so, before the tree's own build/, so
that a run pointed at one build does not fall back to ctypes (several
microseconds more a bulk copy) or take another build's helper.  Without a helper
there, the tree's is taken as before; GDRMAP_FASTFLAG still wins."""
import os
import shutil
import subprocess
import sys
import tempfile

import check
from check import check as CHECK

if not check.HELPER:
    check.skip("the helper is not built for this Python: make python-tests")
    check.done()


def helper_path(env):
    code = "import gdrmap; print(gdrmap.helper_path())"
    run = subprocess.run([sys.executable, "-c", code], env=env,
                         cwd=tempfile.gettempdir(), stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True)
    CHECK(run.returncode == 0, "python -c %r: exit %d: %s" %
          (code, run.returncode, run.stdout))
    return run.stdout.strip()


with tempfile.TemporaryDirectory() as o:
    os.makedirs(os.path.join(o, "lib"))
    lib = os.path.join(o, "lib", "libgdrapi.so.2")
    shutil.copy(check.MOCK_LIBRARY, lib)
    env = dict(os.environ, GDRMAP_LIBRARY=lib,
               PYTHONPATH=os.path.join(check.TOP, "python"))
    env.pop("GDRMAP_FASTFLAG", None)
    # The package falls back on the tree's build/ only (make O=DIR
    # builds elsewhere, as the GPU machines' runs do).
    if os.path.realpath(check.BUILD) == os.path.join(check.TOP, "build"):
        tree = os.path.realpath(check.HELPER)
        got = helper_path(env)
        CHECK(got == tree,
              "no helper in %s/python/gdrmap: the tree's (%s), not %s" %
              (o, tree, got))
    else:
        check.skip("the build directory is not build/: the package does "
                   "not fall back on it")
    beside = os.path.join(o, "python", "gdrmap",
                          os.path.basename(check.HELPER))
    os.makedirs(os.path.dirname(beside))
    shutil.copy(check.HELPER, beside)
    got = helper_path(env)
    CHECK(got == os.path.realpath(beside),
          "GDRMAP_LIBRARY=%s: the helper of that build (%s), not %s" %
          (lib, beside, got))
    env["GDRMAP_FASTFLAG"] = "0"
    got = helper_path(env)
    CHECK(got == "None", "GDRMAP_FASTFLAG=0 still wins: %s" % got)
check.done()
