"""The package's PEP 517 build backend: it writes the wheel (and the sdist) itself.

The package is Python over the C ABI, so a wheel is a zip of src/leasejudge plus its
metadata. From the source tree that is a pure-Python wheel (py3-none-any), which finds
libleasejudge installed elsewhere. From the tree the build stages (build/bindings/python,
which holds a copy of libleasejudge.so.0 beside the modules) it is a platform wheel,
py3-none-<this platform> (linux_x86_64, as sysconfig names the platform of the Python
that builds it), with the library inside; the sdist is pure Python from either tree.
setuptools cannot build a wheel without the `wheel` package before setuptools 70.1,
and Debian 12's venvs have setuptools 66 without wheel: with this backend,
`pip install bindings/python` needs nothing beyond pip, offline, with or without build
isolation on Python 3.11+ (pyproject.toml read with tomllib); before 3.11 the build
requires tomli, as flit_core and hatchling do.
It reads only the source tree and writes only into the directory pip gives it: the
tree is left as it was found (no build/, no *.egg-info)."""
import base64
import hashlib
import io
import os
import sys
import sysconfig
import tarfile
import zipfile

# Imported from the source tree: no bytecode cached beside it (the tree stays unchanged).
sys.dont_write_bytecode = True
if __spec__ is not None and __spec__.cached and os.path.exists(__spec__.cached):
    try:
        os.unlink(__spec__.cached)
        os.rmdir(os.path.dirname(__spec__.cached))
    except OSError:
        pass

try:
    import tomllib  # Python 3.11+
except ImportError:
    try:
        import tomli as tomllib
    except ImportError:
        try:  # the tomli setuptools 61+ carries: a build without isolation, offline
            from setuptools.extern import tomli as tomllib
        except ImportError:
            tomllib = None

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = "leasejudge"
EPOCH = (1980, 1, 1, 0, 0, 0)  # zip's earliest time: the same sources give the same wheel
LIBRARY = "libleasejudge.so.0"  # the C library a staged tree holds beside the modules


def _project():
    if tomllib is None:
        raise RuntimeError("reading pyproject.toml needs Python 3.11 (tomllib), tomli, or setuptools 61 or "
                           "later (which carries tomli)")
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        return tomllib.loads(f.read().decode("utf-8"))["project"]


def _read(name):
    with open(os.path.join(ROOT, name), "rb") as f:
        return f.read()


def _metadata():
    """Core metadata 2.1 from pyproject.toml's [project], the README as its description."""
    p = _project()
    lines = ["Metadata-Version: 2.1", "Name: " + p["name"], "Version: " + p["version"],
             "Summary: " + p["description"], "License: " + p["license"]["text"],
             "Requires-Python: " + p["requires-python"]]
    lines += ["Classifier: " + c for c in p.get("classifiers", [])]
    lines += ["Description-Content-Type: text/markdown", "", _read(p["readme"]).decode("utf-8")]
    return "\n".join(lines).encode("utf-8")


def _name():
    p = _project()
    return p["name"], p["version"]


def _package_files(native=True):
    """(archive name, path) of every file of the package, sorted, bytecode left out, and
    the C library only when native (a wheel; never an sdist)."""
    top = os.path.join(ROOT, "src", PACKAGE)
    out = []
    for d, dirs, files in os.walk(top):
        dirs[:] = sorted(x for x in dirs if x != "__pycache__")
        for f in sorted(files):
            if f.endswith((".pyc", ".pyo")) or (f.startswith("libleasejudge.so") and not (native and f == LIBRARY)):
                continue
            path = os.path.join(d, f)
            out.append((os.path.relpath(path, os.path.join(ROOT, "src")).replace(os.sep, "/"), path))
    return out


def _platform_tag():
    """This platform as a wheel's tag names it (PEP 425): linux-x86_64 -> linux_x86_64."""
    return sysconfig.get_platform().replace("-", "_").replace(".", "_")


def _wheel(directory, members):
    """Write the wheel of members [(archive name, bytes)] with the dist-info (METADATA,
    WHEEL, LICENSE, RECORD); return its file name. A wheel holding the C library is
    this platform's (py3-none-<platform>, not purelib), any other py3-none-any."""
    name, version = _name()
    info = "%s-%s.dist-info" % (name, version)
    native = any(arc == PACKAGE + "/" + LIBRARY for arc, _ in members)
    tag = "py3-none-" + (_platform_tag() if native else "any")
    members = list(members) + [
        (info + "/METADATA", _metadata()),
        (info + "/WHEEL", ("Wheel-Version: 1.0\nGenerator: leasejudge_build\nRoot-Is-Purelib: %s\nTag: %s\n"
                           % ("false" if native else "true", tag)).encode()),
        (info + "/LICENSE", _read("LICENSE")),
    ]
    record = []
    for arc, data in members:
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append("%s,sha256=%s,%d" % (arc, digest, len(data)))
    record.append(info + "/RECORD,,")
    members.append((info + "/RECORD", ("\n".join(record) + "\n").encode()))
    filename = "%s-%s-%s.whl" % (name, version, tag)
    with zipfile.ZipFile(os.path.join(directory, filename), "w", zipfile.ZIP_DEFLATED) as z:
        for arc, data in members:
            entry = zipfile.ZipInfo(arc, EPOCH)
            entry.external_attr = (0o755 if arc.endswith(LIBRARY) else 0o644) << 16
            entry.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(entry, data)
    return filename


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    return _wheel(wheel_directory, [(arc, _read(path)) for arc, path in _package_files()])


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    """A wheel whose .pth puts this tree's src/ on sys.path (PEP 660)."""
    return _wheel(wheel_directory, [(PACKAGE + ".pth", (os.path.join(ROOT, "src") + "\n").encode())])


def build_sdist(sdist_directory, config_settings=None):
    name, version = _name()
    base = "%s-%s" % (name, version)
    files = [("pyproject.toml", os.path.join(ROOT, "pyproject.toml")), ("README.md", os.path.join(ROOT, "README.md")),
             ("LICENSE", os.path.join(ROOT, "LICENSE")),
             ("build_backend/leasejudge_build.py", os.path.abspath(__file__))]
    files += [("src/" + arc, path) for arc, path in _package_files(native=False)]
    filename = base + ".tar.gz"
    with tarfile.open(os.path.join(sdist_directory, filename), "w:gz", format=tarfile.PAX_FORMAT) as t:
        for arc, data in [(arc, _read(path)) for arc, path in files] + [("PKG-INFO", _metadata())]:
            entry = tarfile.TarInfo(base + "/" + arc)
            entry.size, entry.mode, entry.mtime = len(data), 0o644, 315532800
            t.addfile(entry, io.BytesIO(data))
    return filename
