#!/usr/bin/env bash
# The platform wheel the build makes (build/bindings/python/dist), as a user gets it:
#  - its name and WHEEL tags are this platform's (py3-none-<sysconfig's platform>, not
#    purelib); it holds the package's modules as the source tree has them, its
#    dist-info, and libleasejudge.so.0 stripped (no symbol table, no debug sections),
#    exporting only lj_*; RECORD lists every file with its sha256 and size;
#  - the package's own backend builds the same wheel again through pip, offline, and
#    its sdist stays pure Python (no library);
#  - pip installs it into a fresh venv of Debian's python3 (setuptools 66, no wheel
#    package, no index), where, with LEASEJUDGE_LIBRARY unset and no library on the
#    loader's path, the package loads its own copy and judges a lock body, plans steps
#    and takes, refuses and releases a lock on a real nats-server.
. "${LEASEJUDGE_SOURCE_DIR:?}/tests/nats_script.sh"
py=/usr/bin/python3
[ -x "$py" ] || skip_or_fail "Debian's python3 (/usr/bin/python3) is not installed"
"$py" -c 'import ensurepip, venv' 2>/dev/null || skip_or_fail "python3-venv is not installed"
platform=$("$py" -c 'import sysconfig; print(sysconfig.get_platform().replace("-", "_").replace(".", "_"))')
pyv=$("$py" -c 'import sys; print("python%d.%d" % sys.version_info[:2])')
version=$(sed -n 's/^version = "\(.*\)"$/\1/p' "$src/bindings/python/pyproject.toml")
wheel=$build/bindings/python/dist/leasejudge-$version-py3-none-$platform.whl
[ -f "$wheel" ] || skip_or_fail "$wheel is not built (the Python package is built with LEASEJUDGE_PYTHON)"

# Without the sanitizers' runtime the test's environment may preload for our programs:
# what runs here is Debian's python3 loading the wheel's library, built plainly.
clean() { env -i PATH=/usr/bin:/bin HOME="$w" LANG=C.UTF-8 "$@"; }
member() { clean "$py" -c 'import sys, zipfile; sys.stdout.buffer.write(zipfile.ZipFile(sys.argv[1]).read(sys.argv[2]))' "$wheel" "$1"; }

# --- the wheel's files and tags ---------------------------------------------------------
info=leasejudge-$version.dist-info
same "its files: the modules, py.typed, the library, the dist-info" \
  "$(cd "$src/bindings/python/src" && { ls leasejudge/*.py leasejudge/py.typed; echo leasejudge/libleasejudge.so.0;
     printf "$info/%s\n" LICENSE METADATA RECORD WHEEL; } | LC_ALL=C sort)" \
  "$(clean "$py" -c 'import sys, zipfile; print("\n".join(sorted(zipfile.ZipFile(sys.argv[1]).namelist())))' "$wheel" | LC_ALL=C sort)"
same "WHEEL: this platform's tag, not purelib" \
  "Wheel-Version: 1.0|Generator: leasejudge_build|Root-Is-Purelib: false|Tag: py3-none-$platform" \
  "$(member "$info/WHEEL" | paste -sd'|')"
same "METADATA: its name and version" "Name: leasejudge|Version: $version" \
  "$(member "$info/METADATA" | grep -E '^(Name|Version): ' | paste -sd'|')"
same "RECORD: every other file with its sha256 (urlsafe base64, unpadded) and size; itself unhashed" ok \
  "$(clean "$py" - "$wheel" "$info" <<'PY'
import base64, csv, hashlib, io, sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
rows = list(csv.reader(io.StringIO(z.read(sys.argv[2] + "/RECORD").decode())))
seen = {}
for path, digest, size in rows:
    if path == sys.argv[2] + "/RECORD":
        assert (digest, size) == ("", ""), (path, digest, size)
    else:
        data = z.read(path)
        want = "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        assert (digest, size) == (want, str(len(data))), (path, digest, size, want, len(data))
    assert path not in seen, path
    seen[path] = True
assert sorted(seen) == sorted(z.namelist()), (sorted(seen), z.namelist())
print("ok")
PY
)"
same "the modules are the source tree's, byte for byte" "" \
  "$(clean "$py" -m zipfile -e "$wheel" "$w/x" && diff -r -x libleasejudge.so.0 -x __pycache__ "$src/bindings/python/src/leasejudge" "$w/x/leasejudge")"
lib=$w/x/leasejudge/libleasejudge.so.0
same "its library: libleasejudge.so.0, stripped (no .symtab, no .debug_*), only lj_* exported, mode 755" \
  "[libleasejudge.so.0] 0 0 -rwxr-xr-x" \
  "$(readelf -d "$lib" | sed -n 's/.*(SONAME).*Library soname: //p') $(readelf -S -W "$lib" | grep -c ' \.symtab\| \.debug_') $(nm -D --defined-only "$lib" | awk '{print $3}' | grep -vc '^lj_') $(clean "$py" -c 'import stat, sys, zipfile; print(stat.filemode(zipfile.ZipFile(sys.argv[1]).getinfo("leasejudge/libleasejudge.so.0").external_attr >> 16 | stat.S_IFREG))' "$wheel")"

# --- the backend builds it again through pip, offline; its sdist is pure Python ----------
clean "$py" -m venv "$w/venv" || { notok "python3 -m venv"; exit 1; }
pip() { clean PIP_DISABLE_PIP_VERSION_CHECK=1 "$w/venv/bin/pip" "$@"; }
same "the venv: Debian's setuptools 66, no wheel package" "66 True" \
  "$(clean "$w/venv/bin/python" -c 'import importlib.util as u, setuptools; print(setuptools.__version__.split(".")[0], u.find_spec("wheel") is None)')"
if pip wheel -q --no-index --no-deps -w "$w/rebuilt" "$build/bindings/python" >"$w/pip.log" 2>&1; then
  same "pip wheel of the staged tree (its own backend, offline): the same wheel, byte for byte" same \
    "$(cmp -s "$wheel" "$w/rebuilt/$(basename "$wheel")" && echo same || ls "$w/rebuilt")"
else
  notok "pip wheel of the staged tree"
  sed 's/^/# /' "$w/pip.log" | tail -5
fi
sdist=$(cd "$build/bindings/python" &&
  clean "$py" -B -c 'import sys; sys.path.insert(0, "build_backend"); import leasejudge_build as b; print(b.build_sdist(sys.argv[1]))' "$w")
same "its sdist is pure Python: no library in it" "leasejudge-$version.tar.gz 0" \
  "$sdist $(tar -tzf "$w/$sdist" | grep -c 'libleasejudge')"

# --- installed in the venv: its own library, a verdict, a plan, a lock on NATS ----------
pip install -q --no-index "$wheel" >"$w/pip.log" 2>&1 || { notok "pip install the wheel"; sed 's/^/# /' "$w/pip.log"; exit 1; }
start_nats_server "$w/nats" || exit 1
out=$(cd "$w" && clean "$w/venv/bin/python" - "nats://127.0.0.1:$NATS_PORT/locks" <<'PY' 2>&1
import ctypes.util, os, sys
import leasejudge as lj
from leasejudge import _lib

print(os.path.relpath(_lib.lib()._name, sys.prefix))
print(os.environ.get("LEASEJUDGE_LIBRARY"), ctypes.util.find_library("leasejudge"))
# A process lease of pid 4242 on this machine (m1), which runs: 2024-05-01T10:20:00Z is
# five minutes past its end (10:15), computed by hand.
body = ('{"purpose":"deploy","id":"b2","host":"build-1","machine":"m1","pid":4242,'
        '"startedAt":"2024-05-01T10:00:00.000Z","leaseUntil":"2024-05-01T10:15:00.000Z"}')
v = lj.judge_lock(body, 1714558800000, here=lj.Here("build-1", lj.MachineKind.ID, "m1", alive=lambda pid: True))
print(v.kind.name, v.reason.code)
# Steps of n1: one a process of another boot left running (ended), one done (left),
# one of another node (left).
gone = "00000000-0000-4000-8000-000000000000.1.1"
lines = ('{"key":"n1.a","revision":1,"value":{"id":"a","tool":"t","state":"running","owner":"%s"}}\n'
         '{"key":"n1.b","revision":2,"value":{"id":"b","tool":"t","state":"succeeded"}}\n'
         '{"key":"n2.c","revision":3,"value":{"id":"c","tool":"t","state":"running","owner":"%s"}}\n') % (gone, gone)
print(" ".join("%s:%s" % (d["key"], d["action"]) for d in lj.plan_lines(lines, node="n1").lines()))
with lj.open_store(sys.argv[1], create=True) as store:
    lock, got = lj.acquire_lock(store, "deploy", "deploy the site")
    entry = store.get("deploy")
    print(got.outcome.name, lock.revision == got.revision == entry.revision > 0)
    other, again = lj.acquire_lock(store, "deploy", "deploy it again")
    print(other is None, again.outcome.name)
    lock.release()
    try:
        store.get("deploy")
    except lj.NotFoundError:
        print("released")
PY
)
same "in a fresh venv, LEASEJUDGE_LIBRARY unset and no library on the loader's path: its own copy, a verdict, a plan, a lock taken, refused and released on NATS" \
  "lib/$pyv/site-packages/leasejudge/libleasejudge.so.0|None None|BREAK lease_ended|n1.a:end n1.b:leave n2.c:leave|ACQUIRED True|True HELD|released" \
  "$(paste -sd'|' <<<"$out")"

echo "1..$n"
[ "$failed" -eq 0 ]
