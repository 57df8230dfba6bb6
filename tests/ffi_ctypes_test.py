"""Any runtime with an FFI can use leasejudge's C ABI as leasejudge.h documents it:
Python's ctypes, with nothing but the header's words, loads libleasejudge.so, reads
identities, judges a lock body and plans a small batch of steps. Expected values are
computed here without the library (the kernel's /proc, the rules by hand)."""
import ctypes
import os
import re
import sys

lib = ctypes.CDLL(os.environ["LEASEJUDGE_LIBRARY"])
SOURCE = os.environ.get("LEASEJUDGE_SOURCE_DIR", os.path.join(os.path.dirname(__file__), ".."))
failed = 0
count = 0


def check(name, cond, detail=""):
    global failed, count
    count += 1
    print(("ok" if cond else "not ok") + " - " + name + ("" if cond else ": " + str(detail)))
    if not cond:
        failed += 1


def header_text():
    inc = os.path.join(SOURCE, "capi", "include")
    parts = [os.path.join(inc, "leasejudge.h")]
    parts += sorted(os.path.join(inc, "leasejudge", f) for f in os.listdir(os.path.join(inc, "leasejudge")))
    return "\n".join(open(p, encoding="utf-8").read() for p in parts)


HEADER = header_text()


def header_constant(name):
    """The value of `#define NAME (value)` or of an enum's `NAME = value`."""
    m = re.search(r"(?m)^\s*#define\s+" + name + r"\s+\(?\s*(-?\d+)\s*\)?", HEADER)
    if m is None:
        m = re.search(r"(?m)^\s*" + name + r"\s*=\s*\(?\s*(-?\d+)", HEADER)
    if m is None:
        raise KeyError(name)
    return int(m.group(1))


def has(symbol):
    return hasattr(lib, symbol) and re.search(r"\b" + symbol + r"\s*\(", HEADER) is not None


LJ_OK = header_constant("LJ_OK")
LJ_EINVAL = header_constant("LJ_EINVAL")
LJ_ENOTFOUND = header_constant("LJ_ENOTFOUND")
LJ_EVERSION = header_constant("LJ_EVERSION")

c_char_pp = ctypes.POINTER(ctypes.c_void_p)
c_size_p = ctypes.POINTER(ctypes.c_size_t)

lib.lj_version.restype = ctypes.c_char_p
lib.lj_version_number.restype = ctypes.c_uint
lib.lj_strerror.argtypes = [ctypes.c_int]
lib.lj_strerror.restype = ctypes.c_char_p
lib.lj_error_code.argtypes = [ctypes.c_void_p]
lib.lj_error_message.argtypes = [ctypes.c_void_p]
lib.lj_error_message.restype = ctypes.c_char_p
lib.lj_error_destroy.argtypes = [ctypes.c_void_p]
lib.lj_free.argtypes = [ctypes.c_void_p]
lib.lj_boot_id.argtypes = [c_char_pp, c_size_p, c_char_pp]
lib.lj_owner_token.argtypes = [c_char_pp, c_size_p, ctypes.c_int32, c_char_pp]
lib.lj_lease_identity.argtypes = [c_char_pp, c_size_p, ctypes.c_int32, c_char_pp]
lib.lj_machine_id.argtypes = [c_char_pp, c_size_p, c_char_pp]


class OwnerOptions(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("start_tolerance_ms", ctypes.c_int64)]


lib.lj_owner_options_init.argtypes = [ctypes.POINTER(OwnerOptions), ctypes.c_uint32]
lib.lj_owner_judge.argtypes = [ctypes.POINTER(ctypes.c_int), c_char_pp, c_size_p, ctypes.c_char_p, ctypes.c_size_t,
                               ctypes.POINTER(OwnerOptions), c_char_pp]
lib.lj_lease_identity_judge.argtypes = [ctypes.POINTER(ctypes.c_int), c_char_pp, c_size_p, ctypes.c_int32,
                                        ctypes.c_char_p, ctypes.c_size_t, ctypes.c_int64, c_char_pp]


def take(ptr, n):
    """Copy a string the library returned, then free it with lj_free."""
    if not ptr.value:
        return None
    value = ctypes.string_at(ptr.value, n.value)
    lib.lj_free(ptr)
    return value.decode("utf-8", "surrogateescape")


def call_string(fn, *args):
    """(rc, string or None, error message or None) of an lj_* call returning a string."""
    out, n, err = ctypes.c_void_p(), ctypes.c_size_t(), ctypes.c_void_p()
    rc = fn(ctypes.byref(out), ctypes.byref(n), *args, ctypes.byref(err))
    message = None
    if err.value:
        check(fn.__name__ + ": the error object carries the code", lib.lj_error_code(err) == rc, rc)
        message = lib.lj_error_message(err).decode()
        lib.lj_error_destroy(err)
    return rc, take(out, n), message


def kernel_start(pid):
    """(start ms since the epoch, start ticks) of pid, from /proc (USER_HZ 100)."""
    stat = open("/proc/%d/stat" % pid).read()
    ticks = int(stat[stat.rindex(")") + 1:].split()[22 - 3])
    btime = int(re.search(r"(?m)^btime (\d+)$", open("/proc/stat").read()).group(1))
    return btime * 1000 + ticks * 10, ticks


def base36(n):
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        n, r = divmod(n, 36)
        out = digits[r] + out
        if n == 0:
            return out


def test_version_and_errors():
    major, minor, patch = (header_constant("LJ_VERSION_" + p) for p in ("MAJOR", "MINOR", "PATCH"))
    check("lj_version is the header's", lib.lj_version().decode() == "%d.%d.%d" % (major, minor, patch),
          lib.lj_version())
    check("lj_version_number is the header's", lib.lj_version_number() == major * 10000 + minor * 100 + patch)
    check("lj_strerror names codes", lib.lj_strerror(header_constant("LJ_ECHANGED")) == b"changed"
          and lib.lj_strerror(LJ_OK) == b"ok", lib.lj_strerror(header_constant("LJ_ECHANGED")))
    rc, value, message = call_string(lib.lj_owner_token, -1)
    check("a negative pid is LJ_EINVAL with a sentence", rc == LJ_EINVAL and value is None and message, (rc, message))
    # err may be NULL.
    out = ctypes.c_void_p()
    check("err may be NULL", lib.lj_owner_token(ctypes.byref(out), None, -1, None) == LJ_EINVAL and not out.value)


def test_identity():
    boot = open("/proc/sys/kernel/random/boot_id").read().strip() or "no-boot-id"
    rc, value, _ = call_string(lib.lj_boot_id)
    check("lj_boot_id", rc == LJ_OK and value == boot, (rc, value))
    ms, ticks = kernel_start(os.getpid())
    want = "%s.%d.%s" % (boot, os.getpid(), base36(ms))
    rc, token, _ = call_string(lib.lj_owner_token, 0)
    check("lj_owner_token(0) is this process's", rc == LJ_OK and token == want, (rc, token, want))
    rc, value, _ = call_string(lib.lj_lease_identity, os.getpid())
    check("lj_lease_identity", rc == LJ_OK and value == "linux %s %d" % (boot, ticks), (rc, value))
    rc, value, message = call_string(lib.lj_owner_token, 2**31 - 1)
    check("no such pid is LJ_ENOTFOUND", rc == LJ_ENOTFOUND and value is None and message, (rc, message))
    rc, value, _ = call_string(lib.lj_machine_id)
    check("lj_machine_id is 32 hex or none", (rc == LJ_OK and re.fullmatch(r"[0-9a-f]{32}", value or "")) or
          (rc == LJ_ENOTFOUND and value is None), (rc, value))

    opts = OwnerOptions()
    check("lj_owner_options_init", lib.lj_owner_options_init(ctypes.byref(opts), header_constant("LJ_OWNER_OPTIONS_VERSION"))
          == LJ_OK and opts.start_tolerance_ms == 5000, opts.start_tolerance_ms)
    check("lj_owner_options_init of an unknown version",
          lib.lj_owner_options_init(ctypes.byref(opts), 999) == LJ_EVERSION)
    alive, recycled, unknown = (header_constant("LJ_HOLDER_" + s) for s in ("ALIVE", "RECYCLED", "UNKNOWN"))
    for name, raw, expect in [("this process", token.encode(), alive),
                              ("an hour earlier", ("%s.%d.%s" % (boot, os.getpid(), base36(ms - 3600000))).encode(),
                               recycled),
                              ("not UTF-8, not a token", b"\xff\xfe.1.1", unknown)]:
        state, why, n, err = ctypes.c_int(-1), ctypes.c_void_p(), ctypes.c_size_t(), ctypes.c_void_p()
        rc = lib.lj_owner_judge(ctypes.byref(state), ctypes.byref(why), ctypes.byref(n), raw, len(raw), None,
                                ctypes.byref(err))
        text = take(why, n)
        check("lj_owner_judge: " + name, rc == LJ_OK and state.value == expect and text, (rc, state.value, text))
    state, err = ctypes.c_int(-1), ctypes.c_void_p()
    rc = lib.lj_lease_identity_judge(ctypes.byref(state), None, None, os.getpid(), b"", 0, 120, ctypes.byref(err))
    check("lj_lease_identity_judge: an empty record 120 minutes old is stale", rc == LJ_OK and state.value == recycled,
          (rc, state.value))


test_version_and_errors()
test_identity()
print("1..%d" % count)
print("%d passed, %d failed" % (count - failed, failed))
sys.exit(1 if failed else 0)
