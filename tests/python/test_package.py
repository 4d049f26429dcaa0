# SPDX-License-Identifier: MIT
"""The package as users get it: every module is Python 3.9; the version is
gdrmap's; `pip install ./python`, as python/README.md says it, works
offline in a plain venv (no system packages, no index: the build backend
is in the tree and needs nothing), also with --target and -e; the
backend's metadata is the same without tomllib (Python 3.9 and 3.10); the
installed package maps memory (with the mock library) from outside the
tree, its flags through the compiled helper the backend built (a
cp311-abi3 wheel), or through ctypes when the helper cannot be built (no
compiler: a pure py3-none-any wheel, the reason said, never a failure);
the sdist carries the helper's source."""

import ast
import importlib
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
import zipfile

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
    print("helper", gdrmap.helper_path(), m.fast_flags)
print("ok", gdrmap.__version__)
"""


def run(cmd, **kwargs):
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600,
                          **kwargs)
    return done.returncode, done.stdout + done.stderr


def use(python, where, env_extra, helper):
    """Use the package installed in where; helper: True if it must have
    its own compiled helper, False if it must have none, None if either
    (where this Python may not build one)."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTHON", "GDRMAP_"))}
    env.update(env_extra, GDRMAP_LIBRARY=check.MOCK_LIBRARY,
               PYTHONDONTWRITEBYTECODE="1")
    rc, out = run([python, "-c", USE % where], env=env, cwd="/")
    lines = out.strip().splitlines()
    CHECK(rc == 0 and lines[-1:] == ["ok " + version],
          "installed in %s: %s" % (where, out))
    if helper:
        CHECK(re.match(r"helper %s/(.*/)?gdrmap/_fastflag\.abi3\.so True$" %
                       re.escape(os.path.realpath(where)), lines[0]),
              "installed in %s, the helper: %s" % (where, out))
    elif helper is not None:
        CHECK(lines[:1] == ["helper None False"],
              "installed in %s, no helper: %s" % (where, out))


for name in sorted(os.listdir(os.path.join(check.PYTHON_DIR, "_build"))):
    if name.endswith(".py"):
        with open(os.path.join(check.PYTHON_DIR, "_build", name)) as f:
            try:
                ast.parse(f.read(), name, feature_version=(3, 9))
                CHECK(True)
            except SyntaxError as e:
                CHECK(False, "_build/%s is not Python 3.9: %s" % (name, e))

# The backend reads pyproject.toml with tomllib, or on Python 3.9 and 3.10
# (no tomllib) with its own reader: the same metadata either way.
sys.path.insert(0, os.path.join(check.PYTHON_DIR, "_build"))
import gdrmap_build  # noqa: E402
with_tomllib = gdrmap_build._metadata()
saved = sys.modules.get("tomllib")
sys.modules["tomllib"] = None		# import tomllib now fails
try:
    importlib.reload(gdrmap_build)
    without = gdrmap_build._metadata()
finally:
    if saved is None:
        del sys.modules["tomllib"]
    else:
        sys.modules["tomllib"] = saved
CHECK(with_tomllib == without, "metadata without tomllib differs:\n%s\n--\n%s"
      % (with_tomllib[:600], without[:600]))
for field in ("Name: gdrmap", "Version: " + version, "Requires-Python: >=3.9",
              "License: MIT", "Summary: Read and write GPU memory"):
    CHECK(field in without, "METADATA has %r" % field)

# The wheels: with the helper where it compiles, pure Python where it
# does not (saying why), never a failure; the sdist has its source.
# The helper builds where this Python has headers (a GPU machine's may
# not) and GDRMAP_FASTFLAG is not 0; an abi3 wheel from 3.11 on.
ABI3 = sys.version_info >= (3, 11)
HEADERS = os.path.isfile(os.path.join(
    sysconfig.get_paths().get("include") or "", "Python.h"))
BUILDS = HEADERS and os.environ.get("GDRMAP_FASTFLAG") != "0"
if not BUILDS:
    check.skip("this Python has no Python.h, or GDRMAP_FASTFLAG=0: the "
               "helper's wheel and install are not tested")
BACKEND = ("import sys; sys.path.insert(0, %r); import gdrmap_build as b; "
           "print(b.build_%%s(%%r))" % os.path.join(check.PYTHON_DIR,
                                                     "_build"))
with tempfile.TemporaryDirectory() as tmp:
    for what, env_extra, helper in (
            ("with a compiler", {}, ABI3 and BUILDS),
            ("without a compiler", {"CC": "/nonexistent/cc"}, False),
            ("GDRMAP_FASTFLAG=0", {"GDRMAP_FASTFLAG": "0"}, False)):
        out_dir = os.path.join(tmp, str(len(os.listdir(tmp))))
        os.mkdir(out_dir)
        env = dict(os.environ, **env_extra)
        done = subprocess.run([sys.executable, "-c", BACKEND % (
            "wheel", out_dir)], env=env, cwd=tmp, capture_output=True,
            text=True, timeout=600)
        rc, name, out = done.returncode, done.stdout.strip(), done.stderr
        CHECK(rc == 0, "build_wheel %s: %s" % (what, out))
        if rc:
            continue
        with zipfile.ZipFile(os.path.join(out_dir, name)) as z:
            names = z.namelist()
            wheel = z.read("gdrmap-%s.dist-info/WHEEL" % version).decode()
        so = [n for n in names if n.endswith(".so")]
        CHECK(not any(n.endswith((".c", ".h")) for n in names),
              "the helper's source is in the wheel %s" % name)
        if helper:
            CHECK(name.startswith("gdrmap-%s-cp311-abi3-linux_" % version) and
                  so == ["gdrmap/_fastflag.abi3.so"] and
                  "Root-Is-Purelib: false" in wheel and
                  "built the flag helper" in out,
                  "wheel %s: %s %s %s" % (what, name, so, out))
        elif ABI3:
            CHECK(name == "gdrmap-%s-py3-none-any.whl" % version and
                  not so and "Root-Is-Purelib: true" in wheel and
                  "the flag helper is not built: " in out and
                  ("/nonexistent/cc" in out or "GDRMAP_FASTFLAG=0" in out or
                   "has no headers" in out),
                  "wheel %s: %s %s %s" % (what, name, so, out))
    done = subprocess.run([sys.executable, "-c", BACKEND % ("sdist", tmp)],
                          cwd=tmp, capture_output=True, text=True, timeout=600)
    CHECK(done.returncode == 0, "build_sdist: %s" % done.stderr)
    if done.returncode == 0:
        with tarfile.open(os.path.join(tmp, done.stdout.strip())) as tar:
            members = tar.getnames()
            name = "gdrmap-%s/gdrmap/fence.h" % version
            fence = tar.extractfile(name).read() if name in members else None
        CHECK("gdrmap-%s/gdrmap/_fastflag.c" % version in members and
              not any(n.endswith(".so") for n in members),
              "sdist members: %s" % members)
        # The library's fences, as a file: the sdist builds the helper
        # without the tree.
        with open(os.path.join(check.PYTHON_DIR, "gdrmap", "fence.h"),
                  "rb") as f:
            CHECK(fence == f.read(), "the sdist's gdrmap/fence.h is not "
                  "lib/isa/fence.h")

with tempfile.TemporaryDirectory() as tmp:
    # pip builds in the source directory: give it a copy.
    src = os.path.join(tmp, "src")
    shutil.copytree(check.PYTHON_DIR, src, ignore=shutil.ignore_patterns(
        "tests", "__pycache__", "build", "*.egg-info"))
    venv = os.path.join(tmp, "venv")
    # A plain venv, as python/README.md makes it.
    rc, out = run([sys.executable, "-m", "venv", venv])
    vpython = os.path.join(venv, "bin", "python")
    if not rc:
        rc, out = run([vpython, "-m", "pip", "--version"])
    if rc:
        check.skip("no venv with pip here (Debian: python3-venv): %s" %
                   out.strip()[-300:])
    else:
        # Offline: any download would fail.
        offline = dict(os.environ, PIP_NO_INDEX="1",
                       PIP_DISABLE_PIP_VERSION_CHECK="1")
        pip = [vpython, "-m", "pip", "install", "--quiet"]
        rc, out = run(pip + [src], env=offline)
        CHECK(rc == 0, "pip install ./python into a plain venv, offline: %s"
              % out)
        use(vpython, venv, {}, True if ABI3 and BUILDS else None)
        target = os.path.join(tmp, "target")
        rc, out = run(pip + ["--target", target, src], env=offline)
        CHECK(rc == 0, "pip install --target: %s" % out)
        use(sys.executable, target, {"PYTHONPATH": target},
            True if ABI3 and BUILDS else None)
        # No compiler: a pure-Python package, installed all the same.
        plain = os.path.join(tmp, "plain")
        rc, out = run(pip + ["--target", plain, src],
                      env=dict(offline, CC="/nonexistent/cc"))
        CHECK(rc == 0, "pip install without a compiler: %s" % out)
        use(sys.executable, plain, {"PYTHONPATH": plain}, False)
        rc, out = run([vpython, "-m", "pip", "uninstall", "--yes", "--quiet",
                       "gdrmap"], env=offline)
        CHECK(rc == 0, "pip uninstall: %s" % out)
        rc, out = run(pip + ["--editable", src], env=offline)
        CHECK(rc == 0, "pip install --editable: %s" % out)
        # A copy outside any gdrmap tree: no helper of a tree's either.
        use(vpython, src, {}, False)

check.done()
