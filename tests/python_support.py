"""What the Python package's tests share: Debian's python3 with pytest, the library
under test, the package from the source tree, and skip_or_fail (tests/skip.sh's rule:
a test that cannot run exits 77 outside CI and fails under CI=true)."""
import os
import sys

SOURCE = os.path.abspath(os.environ.get("LEASEJUDGE_SOURCE_DIR") or os.path.join(os.path.dirname(__file__), ".."))
SYSTEM_PYTHON = "/usr/bin/python3"


def skip_or_fail(reason):
    if os.environ.get("CI") == "true":
        print("not ok - cannot run: %s (under CI=true a test that cannot run fails)" % reason)
        sys.exit(1)
    print("1..0 # SKIP " + reason)
    sys.exit(77)


def bootstrap():
    """Run under an interpreter that has pytest (python3-pytest is the system's: a python3
    earlier on PATH without it hands over to /usr/bin/python3), with LEASEJUDGE_LIBRARY
    set and the package of this source tree first on sys.path."""
    import importlib.util
    if importlib.util.find_spec("pytest") is None:
        if (os.access(SYSTEM_PYTHON, os.X_OK) and os.path.realpath(sys.executable) != os.path.realpath(SYSTEM_PYTHON)
                and not os.environ.get("LEASEJUDGE_PYTHON_HANDED_OVER")):
            os.environ["LEASEJUDGE_PYTHON_HANDED_OVER"] = "1"
            os.execv(SYSTEM_PYTHON, [SYSTEM_PYTHON] + sys.argv)
        skip_or_fail("pytest is not installed (python3-pytest)")
    if not os.environ.get("LEASEJUDGE_LIBRARY"):
        built = os.path.join(SOURCE, "build", "libleasejudge.so")
        if not os.path.exists(built):
            skip_or_fail("LEASEJUDGE_LIBRARY is not set and %s is not built" % built)
        os.environ["LEASEJUDGE_LIBRARY"] = built
    sys.path.insert(0, os.path.join(SOURCE, "bindings", "python", "src"))


def run_pytest(path):
    import pytest
    sys.exit(pytest.main([path, "-q", "-p", "no:cacheprovider"]))
