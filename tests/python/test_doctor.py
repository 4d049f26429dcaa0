# SPDX-License-Identifier: MIT
"""gdrmap.doctor(): finds the gdrmap command that goes with the library
(or GDRMAP_COMMAND, or PATH) and returns its JSON report as a dict; a
missing command, a failing one and one that prints no JSON are errors
that say so."""

import errno
import os
import shutil
import stat
import subprocess
import sys
import tempfile

import check
from check import check as CHECK, raises

os.environ["GDRMAP_LIBRARY"] = check.TREE_LIBRARY
os.environ.pop("GDRMAP_COMMAND", None)
import gdrmap	# noqa: E402
from gdrmap import GdrmapError	# noqa: E402
from gdrmap import _doctor as doctor_module	# noqa: E402

# The tree's command, found beside the tree's library (build/tools).
CHECK(doctor_module.find_command() == os.path.normpath(check.TREE_COMMAND),
      doctor_module.find_command())
report = gdrmap.doctor()
CHECK(isinstance(report, dict), type(report).__name__)
CHECK(report.get("tool") == "gdrmap" and report.get("command") == "doctor",
      repr(report)[:200])
for key in ("gpu_present", "library", "cuda", "gpus", "backends"):
    CHECK(key in report, "the report has no %r" % key)
CHECK(report["library"]["api_version"] == "2.6", repr(report["library"]))
CHECK(any(b.get("name") == "vulkan" for b in report["backends"]),
      repr(report["backends"]))

with tempfile.TemporaryDirectory() as tmp:
    def command(name, body):
        path = os.path.join(tmp, name)
        with open(path, "w") as f:
            f.write("#!/bin/sh\n" + body + "\n")
        os.chmod(path, stat.S_IRWXU)
        return path

    # A check failed: exit 1, and the report is still returned.
    os.environ["GDRMAP_COMMAND"] = command(
        "failing", 'echo \'{"tool": "gdrmap", "gpus": []}\'; exit 1')
    CHECK(gdrmap.doctor() == {"tool": "gdrmap", "gpus": []}, "exit 1")
    # No JSON, a usage error, a command that is not there, one that hangs.
    os.environ["GDRMAP_COMMAND"] = command("nojson", "echo hello")
    e = raises(GdrmapError, gdrmap.doctor,
               match="exited 0 without a JSON report")
    CHECK(e is not None and e.errno == errno.EPROTO, repr(e))
    os.environ["GDRMAP_COMMAND"] = command(
        "usage", "echo 'doctor: unknown option' >&2; exit 2")
    raises(GdrmapError, gdrmap.doctor,
           match="exited 2 without a JSON report: doctor: unknown option")
    os.environ["GDRMAP_COMMAND"] = command("array", "echo '[1, 2]'")
    raises(GdrmapError, gdrmap.doctor, match="without a JSON report")
    os.environ["GDRMAP_COMMAND"] = os.path.join(tmp, "absent")
    e = raises(GdrmapError, gdrmap.doctor, match="cannot run")
    CHECK(e is not None and e.errno == errno.ENOENT, repr(e))
    os.environ["GDRMAP_COMMAND"] = command("slow", "sleep 30")
    raises(GdrmapError, gdrmap.doctor, timeout=0.5,
           match="did not finish in 0.5 s")
    del os.environ["GDRMAP_COMMAND"]

    # Neither beside the library nor on PATH (another process: this one
    # has loaded the tree's library).
    lib = os.path.join(tmp, "lib", "libgdrapi.so.2")
    os.makedirs(os.path.dirname(lib))
    shutil.copy(check.TREE_LIBRARY, lib)
    env = dict(os.environ, GDRMAP_LIBRARY=lib, PATH=tmp,
               PYTHONPATH=check.PYTHON_DIR, PYTHONDONTWRITEBYTECODE="1")
    code = ("import gdrmap\ntry:\n    gdrmap.doctor()\n"
            "except gdrmap.GdrmapError as e:\n    print(e.errno, e)\n")
    done = subprocess.run([sys.executable, "-c", code], env=env, cwd=tmp,
                          capture_output=True, text=True, timeout=60)
    out = done.stdout + done.stderr
    CHECK(out.startswith("%d " % errno.ENOENT) and
          "neither beside the library nor on PATH" in out and
          "GDRMAP_COMMAND" in out, out)
    # On PATH.
    command("gdrmap", 'echo \'{"on": "path"}\'')
    done = subprocess.run([sys.executable, "-c", "import gdrmap; "
                           "print(gdrmap.doctor())"], env=env, cwd=tmp,
                          capture_output=True, text=True, timeout=60)
    CHECK(done.stdout.strip() == "{'on': 'path'}", done.stdout + done.stderr)

check.done()
