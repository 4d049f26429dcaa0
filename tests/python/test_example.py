# SPDX-License-Identifier: MIT
"""examples/python/monitor_and_stop.py as a newcomer first runs it: --help
works with neither CuPy nor PyTorch installed and says the kernel needs
CuPy; without CuPy (whatever --alloc) it exits 1 naming what to install,
with no traceback.  (It runs for real on a GPU: bench/python-gpu-run.sh.)"""

import os
import subprocess
import sys
import tempfile

import check
from check import check as CHECK

EXAMPLE = os.path.join(check.TOP, "examples", "python", "monitor_and_stop.py")


def run(args, path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env.update(PYTHONPATH=path, PYTHONDONTWRITEBYTECODE="1")
    done = subprocess.run([sys.executable, EXAMPLE] + args, env=env,
                          capture_output=True, text=True, timeout=120)
    return done.returncode, done.stdout, done.stderr


with tempfile.TemporaryDirectory() as tmp:
    # Modules that fail to import as missing ones do, whether or not this
    # machine has the real ones.
    for name in ("cupy", "torch"):
        os.makedirs(os.path.join(tmp, name))
        with open(os.path.join(tmp, name, "__init__.py"), "w") as f:
            f.write("raise ImportError(\"No module named '%s' (test)\")\n"
                    % name)

    rc, out, err = run(["--help"], tmp)
    CHECK(rc == 0, "--help exits %d: %s" % (rc, err))
    out = " ".join(out.split())		# as argparse wraps it
    CHECK("--alloc {torch,cupy}" in out and "needs CuPy either way" in out,
          "--help says the kernel needs CuPy: %s" % out)
    CHECK("without ever synchronising the stream" in out,
          "--help's description is a whole sentence: %s" % out)

    for args in ([], ["--alloc", "torch"], ["--alloc", "cupy"]):
        rc, out, err = run(args, tmp)
        CHECK(rc == 1, "%s without CuPy exits %d, not 1" % (args, rc))
        CHECK("this example needs cupy for its GPU kernel" in err and
              "pip install cupy-cuda" in err,
              "%s without CuPy says what to install: %s" % (args, err))
        CHECK("Traceback" not in err, "%s: a traceback: %s" % (args, err))

check.done()
