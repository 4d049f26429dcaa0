# SPDX-License-Identifier: MIT
"""What every Python test shares (as tests/common/check.h for C): counts
checks, prints the closing line "N passed, N failed[, N skipped]" and
exits 0 (pass), 1 (fail) or 77 (skip: nothing ran, something skipped).

It also finds the tree: the package in python/, and in the build directory
($GDRMAP_BUILD, default build/) the tree's library, the gdrmap command,
the mock library (libgdrapi-mock.so, whose "GPU memory" is host memory:
tests/mock_gdrapi.c; libgdrapi-mock-gdrcopy.so, the same without
gdrmap's best-path copies) and the compiled flag helper
(python/gdrmap/_fastflag*.so), which the package then uses unless
$GDRMAP_FASTFLAG already says otherwise (0: none)."""

import os
import sys
import traceback

sys.dont_write_bytecode = True

TOP = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
BUILD = os.environ.get("GDRMAP_BUILD") or os.path.join(TOP, "build")
MOCK_LIBRARY = os.path.join(BUILD, "python", "libgdrapi-mock.so")
MOCK_GDRCOPY_LIBRARY = os.path.join(BUILD, "python",
                                    "libgdrapi-mock-gdrcopy.so")
TREE_LIBRARY = os.path.join(BUILD, "lib", "libgdrapi.so.2")
TREE_COMMAND = os.path.join(BUILD, "tools", "gdrmap")
PYTHON_DIR = os.path.join(TOP, "python")
sys.path.insert(0, PYTHON_DIR)


def _helper():
    """The helper `make python-tests` built for this Python, or None."""
    import importlib.machinery
    where = os.path.join(BUILD, "python", "gdrmap")
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        path = os.path.join(where, "_fastflag" + suffix)
        if os.path.isfile(path) and (".abi3" not in suffix or
                                     sys.version_info >= (3, 11)):
            return path
    return None


HELPER = _helper()
if HELPER and "GDRMAP_FASTFLAG" not in os.environ:
    os.environ["GDRMAP_FASTFLAG"] = HELPER
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

_counts = {"passed": 0, "failed": 0, "skipped": 0}


def check(cond, message=""):
    """Count one check; on failure print where and why."""
    if cond:
        _counts["passed"] += 1
        return True
    _counts["failed"] += 1
    caller = traceback.extract_stack(limit=2)[0]
    print("FAIL %s:%d: %s" % (os.path.basename(caller.filename),
                              caller.lineno, message), file=sys.stderr)
    return False


def raises(exc_type, fn, *args, match=(), **kwargs):
    """Check that fn(*args, **kwargs) raises exc_type whose text contains
    every string in match; return the exception (None if it did not)."""
    if isinstance(match, str):
        match = (match,)
    caller = traceback.extract_stack(limit=2)[0]
    where = "%s:%d" % (os.path.basename(caller.filename), caller.lineno)
    try:
        fn(*args, **kwargs)
    except exc_type as e:
        missing = [m for m in match if m not in str(e)]
        _count(not missing, "%s: %r lacks %r" % (where, str(e), missing))
        return e
    except Exception as e:	# the wrong exception
        _count(False, "%s: raised %s: %s, not %s" %
               (where, type(e).__name__, e, exc_type.__name__))
        return None
    _count(False, "%s: did not raise %s" % (where, exc_type.__name__))
    return None


def _count(ok, message):
    if ok:
        _counts["passed"] += 1
    else:
        _counts["failed"] += 1
        print("FAIL " + message, file=sys.stderr)


def skip(message):
    _counts["skipped"] += 1
    print("SKIP: " + message, file=sys.stderr)


def done():
    """Print the closing line and exit with the runner's status."""
    p, f, s = _counts["passed"], _counts["failed"], _counts["skipped"]
    line = "%d passed, %d failed" % (p, f)
    if s:
        line += ", %d skipped" % s
    print(line)
    sys.stdout.flush()
    sys.exit(1 if f else 77 if s and not p else 0)


def use_mock(library=MOCK_LIBRARY):
    """Make gdrmap (imported after this) use the mock library."""
    if not os.path.exists(library):
        print("%s is not built: make python-tests" % library,
              file=sys.stderr)
        sys.exit(1)
    os.environ["GDRMAP_LIBRARY"] = library
