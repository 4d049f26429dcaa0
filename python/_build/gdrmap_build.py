# SPDX-License-Identifier: MIT
"""The Python package's build backend (PEP 517), in the tree and needing
nothing but Python's own modules.

gdrmap is Python, and one optional compiled helper: building it is
writing a zip, after compiling gdrmap/_fastflag.c where that can be done.
With setuptools as the backend, `pip install ./python` had to fetch
setuptools (and wheel) from an index into its isolated build
environment, so it failed offline in a plain venv; a backend of its own,
with no requirements, builds anywhere pip runs, offline, isolated or
not.  The metadata comes from pyproject.toml's [project] table and the
version from gdrmap/__init__.py.

The helper (flag reads and writes in tens of nanoseconds of Python
instead of about a microsecond through ctypes: gdrmap/_helper.py) is
compiled with the C compiler Python was built with ($CC, else
sysconfig's CC, else cc) and this Python's headers, for the stable ABI
of 3.11 (gdrmap/_fastflag.abi3.so, a cp311-abi3 wheel for every Python
from 3.11 on) or, before 3.11, for this Python alone.  When that cannot
be done (no compiler, no Python.h: Debian's python3-dev, a free-threaded
Python, GDRMAP_FASTFLAG=0), the wheel is pure Python (py3-none-any),
works the same through ctypes, and the backend says why on stderr
(`pip install -v` shows it); it never fails for the helper.

Hooks: build_wheel, build_sdist, build_editable (PEP 660: a .pth file
naming the source directory; the helper is then the tree's, if `make`
built one) and the get_requires_* ones (nothing).
"""

import base64
import hashlib
import io
import os
import re
import shlex
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
import time
import zipfile

SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = "gdrmap"
TAG = "py3-none-any"
HELPER_SOURCE = os.path.join(PACKAGE, "_fastflag.c")


def _toml_value(text):
    """A TOML value of the forms pyproject.toml uses here: a string, a
    list of strings, an inline table of strings."""
    text = text.strip()
    if text.startswith('"'):
        return re.match(r'"((?:[^"\\]|\\.)*)"', text).group(1)
    if text.startswith("["):
        return re.findall(r'"((?:[^"\\]|\\.)*)"', text)
    if text.startswith("{"):
        return dict(re.findall(r'(\w[\w-]*)\s*=\s*"((?:[^"\\]|\\.)*)"',
                               text))
    raise ValueError("pyproject.toml: cannot read the value %r" % text)


def _pyproject():
    """pyproject.toml as a dict: tomllib where Python has it (3.11), else
    a reader of the subset this file is written in."""
    path = os.path.join(SRC, "pyproject.toml")
    try:
        import tomllib
    except ImportError:
        tomllib = None
    if tomllib:
        with open(path, "rb") as f:
            return tomllib.load(f)
    data, pending, key = {}, None, None
    table = data
    with open(path) as f:
        for line in f:
            line = line.rstrip()
            if pending is not None:
                pending += line
                if line.strip().endswith("]"):
                    table[key] = _toml_value(pending)
                    pending = None
                continue
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            m = re.match(r"\[([\w.-]+)\]$", line.strip())
            if m:
                table = data
                for part in m.group(1).split("."):
                    table = table.setdefault(part, {})
                continue
            key, _, value = line.partition("=")
            key = key.strip().strip('"')
            if value.strip().startswith("[") and \
                    not value.strip().endswith("]"):
                pending = value
                continue
            table[key] = _toml_value(value)
    return data


def _version():
    with open(os.path.join(SRC, PACKAGE, "__init__.py")) as f:
        return re.search(r'^__version__ = "([^"]+)"', f.read(),
                         re.M).group(1)


def _metadata():
    project = _pyproject()["project"]
    lines = ["Metadata-Version: 2.1",
             "Name: %s" % project["name"],
             "Version: %s" % _version(),
             "Summary: %s" % project["description"],
             "Requires-Python: %s" % project["requires-python"],
             "License: %s" % project["license"]["text"]]
    lines += ["Classifier: %s" % c for c in project.get("classifiers", [])]
    lines.append("Description-Content-Type: text/markdown")
    with open(os.path.join(SRC, project["readme"])) as f:
        readme = f.read()
    return "\n".join(lines) + "\n\n" + readme


def _files():
    """The package's files, relative to SRC, sorted."""
    out = []
    for root, dirs, names in os.walk(os.path.join(SRC, PACKAGE)):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(names):
            # Compiled files are never taken from the source directory:
            # build_wheel compiles the helper for the Python it runs in.
            if not name.endswith((".pyc", ".pyo", ".so")):
                out.append(os.path.relpath(os.path.join(root, name), SRC))
    return out


def _stamp():
    """Every member's time: SOURCE_DATE_EPOCH for reproducible builds."""
    t = int(os.environ.get("SOURCE_DATE_EPOCH", 315532800))
    return time.gmtime(max(t, 315532800))[:6]


def _hash(data):
    digest = hashlib.sha256(data).digest()
    return "sha256=" + base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def _say(text):
    print("gdrmap_build: " + text, file=sys.stderr)
    sys.stderr.flush()


def _helper(tmp):
    """Compile the helper in tmp: (its name in the wheel, its bytes, the
    wheel's tag), or None, having said why not."""
    why = None
    include = sysconfig.get_paths().get("include") or ""
    if os.environ.get("GDRMAP_FASTFLAG") == "0":
        why = "GDRMAP_FASTFLAG=0"
    elif sys.implementation.name != "cpython":
        why = "%s is not CPython" % sys.implementation.name
    elif sysconfig.get_config_var("Py_GIL_DISABLED"):
        why = "this Python is free-threaded (the helper needs the GIL)"
    elif not os.path.isfile(os.path.join(include, "Python.h")):
        why = ("this Python has no headers (no Python.h in %s; Debian: "
               "apt-get install python3-dev)" % include)
    if why:
        _say("the flag helper is not built: %s; the package is pure Python "
             "(flags through ctypes)" % why)
        return None
    abi3 = sys.version_info >= (3, 11)
    py = "cp%d%d" % sys.version_info[:2]
    suffix = ".abi3.so" if abi3 else sysconfig.get_config_var("EXT_SUFFIX")
    platform = re.sub(r"[^\w]", "_", sysconfig.get_platform())
    tag = "%s-%s-%s" % ("cp311" if abi3 else py, "abi3" if abi3 else py,
                        platform)
    out = os.path.join(tmp, "_fastflag" + suffix)
    cc = os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc"
    flags = [f for v in ("CPPFLAGS", "CFLAGS", "LDFLAGS")
             for f in shlex.split(os.environ.get(v, ""))]
    cmd = shlex.split(cc) + ["-O2", "-fPIC", "-shared"] + flags + [
        "-I" + include, "-o", out, os.path.join(SRC, HELPER_SOURCE)]
    try:
        done = subprocess.run(cmd, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, timeout=300)
        failed = done.returncode != 0 or not os.path.isfile(out)
        output = done.stdout.decode("utf-8", "replace")
    except (OSError, subprocess.SubprocessError) as e:
        failed, output = True, str(e)
    if failed:
        _say("the flag helper is not built: `%s` failed:\n%s\nthe package "
             "is pure Python (flags through ctypes)" %
             (" ".join(cmd), output.strip()[-2000:]))
        return None
    _say("built the flag helper %s/_fastflag%s (%s)" %
         (PACKAGE, suffix, tag))
    with open(out, "rb") as f:
        return PACKAGE + "/_fastflag" + suffix, f.read(), tag


def _wheel(wheel_directory, members, tag=TAG):
    """Write a wheel of members ([(name, bytes)]), its dist-info added."""
    name, version = PACKAGE, _version()
    info = "%s-%s.dist-info" % (name, version)
    members = list(members) + [
        (info + "/METADATA", _metadata().encode()),
        (info + "/WHEEL", ("Wheel-Version: 1.0\nGenerator: gdrmap_build\n"
                           "Root-Is-Purelib: %s\nTag: %s\n" %
                           ("true" if tag == TAG else "false", tag)).encode()),
    ]
    record = "".join("%s,%s,%d\n" % (n, _hash(d), len(d)) for n, d in members)
    record += info + "/RECORD,,\n"
    members.append((info + "/RECORD", record.encode()))
    filename = "%s-%s-%s.whl" % (name, version, tag)
    with zipfile.ZipFile(os.path.join(wheel_directory, filename), "w",
                         zipfile.ZIP_DEFLATED) as z:
        for n, d in members:
            zi = zipfile.ZipInfo(n, _stamp())
            zi.external_attr = (0o755 if n.endswith(".so") else 0o644) << 16
            zi.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(zi, d)
    return filename


def _read(rel):
    with open(os.path.join(SRC, rel), "rb") as f:
        return f.read()


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None,
                metadata_directory=None):
    members = [(f, _read(f)) for f in _files()
               if not f.endswith((".c", ".h"))]
    with tempfile.TemporaryDirectory() as tmp:
        helper = _helper(tmp)
    if helper is None:
        return _wheel(wheel_directory, members)
    name, data, tag = helper
    return _wheel(wheel_directory, members + [(name, data)], tag)


def build_editable(wheel_directory, config_settings=None,
                   metadata_directory=None):
    return _wheel(wheel_directory, [("_gdrmap_editable.pth",
                                     (SRC + "\n").encode())])


def build_sdist(sdist_directory, config_settings=None):
    base = "%s-%s" % (PACKAGE, _version())
    filename = base + ".tar.gz"
    mtime = time.mktime(_stamp() + (0, 0, -1))
    with tarfile.open(os.path.join(sdist_directory, filename), "w:gz",
                      format=tarfile.PAX_FORMAT) as tar:
        rels = ["pyproject.toml", "README.md",
                os.path.join("_build", "gdrmap_build.py")] + _files()
        members = [(rel, _read(rel)) for rel in rels]
        members.append(("PKG-INFO", _metadata().encode()))
        for rel, data in members:
            ti = tarfile.TarInfo(base + "/" + rel)
            ti.size, ti.mode, ti.mtime = len(data), 0o644, mtime
            tar.addfile(ti, io.BytesIO(data))
    return filename
