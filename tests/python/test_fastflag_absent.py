# SPDX-License-Identifier: MIT
"""Without the compiled helper (GDRMAP_FASTFLAG=0: what a package built
without a C compiler or Python's headers does), the flag and lifetime
suites pass as they do with it: test_copy.py and test_lifetime.py run
again, their flags through ctypes."""

import os
import re
import subprocess
import sys

import check
from check import check as CHECK

HERE = os.path.dirname(os.path.abspath(__file__))
env = dict(os.environ, GDRMAP_FASTFLAG="0", PYTHONDONTWRITEBYTECODE="1")
for name in ("test_copy.py", "test_lifetime.py"):
    done = subprocess.run([sys.executable, os.path.join(HERE, name)],
                          env=env, capture_output=True, text=True,
                          timeout=300)
    last = (done.stdout.strip().splitlines() or [""])[-1]
    CHECK(done.returncode == 0 and
          re.search(r"^[1-9]\d* passed, 0 failed(, \d+ skipped)?$", last),
          "%s without the helper: exit %d, %s\n%s" %
          (name, done.returncode, last, done.stderr[-2000:]))

# ... and really without it.
done = subprocess.run(
    [sys.executable, "-c", "import sys; sys.path[:0] = %r; import check; "
     "check.use_mock(); import gdrmap; from fakes import DeviceMemory; "
     "m = gdrmap.Mapping(DeviceMemory(1 << 16).ptr, 64); "
     "print(gdrmap.helper_path(), m.fast_flags)" % ([HERE,
                                                     check.PYTHON_DIR],)],
    env=env, capture_output=True, text=True, timeout=60)
CHECK(done.stdout.strip() == "None False", done.stdout + done.stderr)

check.done()
