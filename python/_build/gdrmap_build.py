# SPDX-License-Identifier: MIT
"""The Python package's build backend (PEP 517), in the tree and needing
nothing but Python's own modules.

gdrmap is pure Python: building it is writing a zip.  With setuptools as
the backend, `pip install ./python` had to fetch setuptools (and wheel)
from an index into its isolated build environment, so it failed offline
in a plain venv; a backend of its own, with no requirements, builds
anywhere pip runs, offline, isolated or not.  The metadata comes from
pyproject.toml's [project] table and the version from gdrmap/__init__.py.

Hooks: build_wheel, build_sdist, build_editable (PEP 660: a .pth file
naming the source directory) and the get_requires_* ones (nothing).
"""

import base64
import hashlib
import io
import os
import re
import tarfile
import time
import zipfile

SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = "gdrmap"
TAG = "py3-none-any"


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
            if not name.endswith((".pyc", ".pyo")):
                out.append(os.path.relpath(os.path.join(root, name), SRC))
    return out


def _stamp():
    """Every member's time: SOURCE_DATE_EPOCH for reproducible builds."""
    t = int(os.environ.get("SOURCE_DATE_EPOCH", 315532800))
    return time.gmtime(max(t, 315532800))[:6]


def _hash(data):
    digest = hashlib.sha256(data).digest()
    return "sha256=" + base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def _wheel(wheel_directory, members):
    """Write a wheel of members ([(name, bytes)]), its dist-info added."""
    name, version = PACKAGE, _version()
    info = "%s-%s.dist-info" % (name, version)
    members = list(members) + [
        (info + "/METADATA", _metadata().encode()),
        (info + "/WHEEL", ("Wheel-Version: 1.0\nGenerator: gdrmap_build\n"
                           "Root-Is-Purelib: true\nTag: %s\n" % TAG).encode()),
    ]
    record = "".join("%s,%s,%d\n" % (n, _hash(d), len(d)) for n, d in members)
    record += info + "/RECORD,,\n"
    members.append((info + "/RECORD", record.encode()))
    filename = "%s-%s-%s.whl" % (name, version, TAG)
    with zipfile.ZipFile(os.path.join(wheel_directory, filename), "w",
                         zipfile.ZIP_DEFLATED) as z:
        for n, d in members:
            zi = zipfile.ZipInfo(n, _stamp())
            zi.external_attr = 0o644 << 16
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
    return _wheel(wheel_directory, [(f, _read(f)) for f in _files()])


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
