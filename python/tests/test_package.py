# SPDX-License-Identifier: MIT
"""The package as users get it: every module is Python 3.9; the version is
gdrmap's; `pip install ./python` works offline (into a venv and with
--target), and the installed package maps memory (with the mock library)
from outside the tree."""

import ast
import os
import re
import shutil
import subprocess
import sys
import tempfile

import check
from check import check as CHECK

import gdrmap

PKG = os.path.join(check.PYTHON_DIR, "gdrmap")
for name in sorted(os.listdir(PKG)):
    if name.endswith(".py"):
        with open(os.path.join(PKG, name)) as f:
            source = f.read()
        try:
            ast.parse(source, name, feature_version=(3, 9))
            CHECK(True)
        except SyntaxError as e:
            CHECK(False, "%s is not Python 3.9: %s" % (name, e))

with open(os.path.join(check.TOP, "include", "gdrapi.h")) as f:
    header = f.read()
version = "%s.%s" % tuple(re.search(
    r"#define GDRMAP_VERSION_%s\s+(\d+)" % part, header).group(1)
    for part in ("MAJOR", "MINOR"))
CHECK(gdrmap.__version__ == version, "__version__ %s, gdrapi.h says %s" %
      (gdrmap.__version__, version))

# What the installed package runs, from a directory outside the tree.
USE = r"""
import ctypes, mmap, sys, gdrmap
assert "%s" in gdrmap.__file__, gdrmap.__file__
mm = mmap.mmap(-1, 3 << 16)
host = ctypes.addressof(ctypes.c_char.from_buffer(mm))
ptr = (host + 0xffff) & ~0xffff
with gdrmap.Mapping(ptr + 8, 64) as m:
    m.write(b"installed", 3)
    m.store_u64(24, 0x0123456789abcdef)
    assert ctypes.string_at(ptr + 11, 9) == b"installed"
    assert m.load_u64(24) == 0x0123456789abcdef
print("ok", gdrmap.__version__)
"""


def run(cmd, **kwargs):
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600,
                          **kwargs)
    return done.returncode, done.stdout + done.stderr


def use(python, where, env_extra):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTHON", "GDRMAP_"))}
    env.update(env_extra, GDRMAP_LIBRARY=check.MOCK_LIBRARY,
               PYTHONDONTWRITEBYTECODE="1")
    rc, out = run([python, "-c", USE % where], env=env, cwd="/")
    CHECK(rc == 0 and out.strip() == "ok " + version,
          "installed in %s: %s" % (where, out))


with tempfile.TemporaryDirectory() as tmp:
    # pip builds in the source directory: give it a copy.
    src = os.path.join(tmp, "src")
    shutil.copytree(check.PYTHON_DIR, src, ignore=shutil.ignore_patterns(
        "tests", "__pycache__", "build", "*.egg-info"))
    venv = os.path.join(tmp, "venv")
    rc, out = run([sys.executable, "-m", "venv", "--system-site-packages",
                   venv])
    vpython = os.path.join(venv, "bin", "python")
    if not rc:
        # Building offline needs setuptools and its bdist_wheel (built in
        # from setuptools 70.1, else the wheel package) without a download.
        rc, out = run([vpython, "-c", "import setuptools\ntry:\n"
                       "    import setuptools.command.bdist_wheel\n"
                       "except ImportError:\n    import wheel"])
    if rc:
        check.skip("no venv with setuptools and wheel here (Debian: "
                   "python3-venv python3-setuptools python3-wheel): %s" %
                   out.strip()[-300:])
    else:
        pip = [vpython, "-m", "pip", "install",
               "--no-index", "--no-build-isolation", "--quiet"]
        rc, out = run(pip + [src])
        CHECK(rc == 0, "pip install ./python into a venv: %s" % out)
        use(vpython, venv, {})
        target = os.path.join(tmp, "target")
        rc, out = run(pip + ["--target", target, src])
        CHECK(rc == 0, "pip install --target: %s" % out)
        use(sys.executable, target, {"PYTHONPATH": target})

check.done()
