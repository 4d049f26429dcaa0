# SPDX-License-Identifier: MIT
"""Finding and opening the library: GDRMAP_LIBRARY wrong or not a
libgdrapi, no library anywhere, the tree's build, and the real library's
gdr_open failing on a machine without a GPU."""

import ctypes.util
import errno
import os
import shutil
import subprocess
import sys
import tempfile

import check
from check import check as CHECK, raises

import gdrmap
from gdrmap import GdrmapError

PY = sys.executable


def run(code, env_changes, cwd):
    """Run python code in a fresh interpreter: (exit code, stdout+stderr)."""
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    for k, v in env_changes.items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = v
    done = subprocess.run([PY, "-c", code], env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=120)
    return done.returncode, done.stdout + done.stderr


REPORT = """
import gdrmap
path = gdrmap.library_path()
if path:
    print("path", path)
else:
    print("no library")
    try:
        gdrmap.backend()
    except gdrmap.GdrmapError as e:
        print("errno", e.errno)
        print(e)
"""

# GDRMAP_LIBRARY names a file that does not exist.
os.environ["GDRMAP_LIBRARY"] = "/nonexistent/libgdrapi.so.2"
e = raises(GdrmapError, gdrmap.Mapping, 1 << 40, 8,
           match=("GDRMAP_LIBRARY=/nonexistent/libgdrapi.so.2", "unset it"))
CHECK(e is not None and e.errno == errno.ENOENT, "errno %r" %
      getattr(e, "errno", None))
CHECK(isinstance(e, OSError), "GdrmapError is an OSError")
# library_path() says which library is in use: none here.
CHECK(gdrmap.library_path() is None, "library_path() without a library: %r"
      % gdrmap.library_path())

# GDRMAP_LIBRARY names a library that is not libgdrapi.
os.environ["GDRMAP_LIBRARY"] = ctypes.util.find_library("c") or "libc.so.6"
e = raises(GdrmapError, gdrmap.backend, match=("has no gdr_open",))
CHECK(e is not None and e.errno == errno.ENOEXEC, "errno for libc")

# The real library of the tree: on a machine without a GPU, gdrmap_open
# (the package's way in: it also takes the vulkan backend, which gdr_open
# leaves out) fails and the exception carries its explanation, naming
# every backend, each tried.
os.environ["GDRMAP_LIBRARY"] = check.TREE_LIBRARY
CHECK(gdrmap.library_path() == os.path.realpath(check.TREE_LIBRARY),
      "library_path() %s" % gdrmap.library_path())
try:
    name = gdrmap.backend()
except GdrmapError as exc:
    CHECK(exc.function == "gdrmap_open", "function %r" % exc.function)
    CHECK(exc.errno not in (None, 0), "errno %r" % exc.errno)
    for word in ("gdrmap_open: no backend is usable here", "gdrdrv:",
                 "dmabuf:", "vulkan:"):
        CHECK(word in str(exc), "%r lacks %r" % (str(exc), word))
    CHECK("not tried" not in str(exc), "gdrmap_open tries every backend: %r"
          % str(exc))
    # Nothing is cached: the next use tries again, and fails the same way.
    raises(GdrmapError, gdrmap.Mapping, 1 << 40, 8, match="gdrmap_open")
else:
    check.skip("gdr_open works here (backend %s): its failure is not "
               "tested" % name)

with tempfile.TemporaryDirectory() as tmp:
    # The package alone, outside any tree, and no library on the system.
    alone = os.path.join(tmp, "alone")
    shutil.copytree(os.path.join(check.PYTHON_DIR, "gdrmap"),
                    os.path.join(alone, "gdrmap"))
    env = {"GDRMAP_LIBRARY": None, "PYTHONPATH": alone,
           "LD_LIBRARY_PATH": None}
    rc, out = run(REPORT, env, tmp)
    if "path " in out:
        check.skip("this system has a libgdrapi.so.2 (%s): its absence is "
                   "not tested" % out.split()[1])
    else:
        CHECK(rc == 0 and "no library" in out and
              "errno %d" % errno.ENOENT in out, out)
        for word in ("libgdrapi.so.2 cannot be loaded", "libgdrapi2",
                     "GDRMAP_LIBRARY"):
            CHECK(word in out, "%r lacks %r" % (out, word))
        CHECK("run `make`" not in out, "no tree to build, yet: %r" % out)

    # A tree (include/gdrapi.h) that was never built: say to run make.
    tree = os.path.join(tmp, "tree")
    os.makedirs(os.path.join(tree, "include"))
    shutil.copy(os.path.join(check.TOP, "include", "gdrapi.h"),
                os.path.join(tree, "include"))
    shutil.copytree(os.path.join(check.PYTHON_DIR, "gdrmap"),
                    os.path.join(tree, "python", "gdrmap"))
    rc, out = run(REPORT, dict(env, PYTHONPATH=os.path.join(tree, "python")),
                  tmp)
    if "path " not in out:
        CHECK("run `make` in %s" % tree in out, out)

# Run from this tree with no GDRMAP_LIBRARY: the tree's build/ is used.
if os.path.realpath(check.BUILD) == os.path.join(check.TOP, "build"):
    rc, out = run(REPORT, {"GDRMAP_LIBRARY": None, "PYTHONPATH": None},
                  check.PYTHON_DIR)
    CHECK(rc == 0 and
          "path %s" % os.path.realpath(check.TREE_LIBRARY) in out, out)
else:
    check.skip("the build directory is not build/: the package does not "
               "look there")

check.done()
