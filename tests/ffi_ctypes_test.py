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


def cannot_run(what):
    """A part that cannot run here: a TAP skip outside CI, a failure under CI=true."""
    if os.environ.get("CI") == "true":
        check(what + " (under CI=true a test that cannot run fails)", False)
    else:
        print("ok - %s # SKIP" % what)


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


# --- lock verdicts ------------------------------------------------------------------

class Verdict(ctypes.Structure):
    _fields_ = [("kind", ctypes.c_int), ("reason", ctypes.c_int), ("manual_removal", ctypes.c_int),
                ("why", ctypes.c_void_p), ("why_len", ctypes.c_size_t)]


class ExecutionRef(ctypes.Structure):
    _fields_ = [("project_id", ctypes.c_void_p), ("project_id_len", ctypes.c_size_t),
                ("region", ctypes.c_void_p), ("region_len", ctypes.c_size_t),
                ("name", ctypes.c_void_p), ("name_len", ctypes.c_size_t)]


DESCRIBE = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(ExecutionRef), ctypes.c_void_p)
ALIVE = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_int), ctypes.c_double, ctypes.c_void_p)
OWNER_STATE = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_int), ctypes.c_char_p, ctypes.c_size_t,
                               ctypes.c_void_p)


class Here(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("host", ctypes.c_char_p), ("host_len", ctypes.c_size_t),
                ("machine_kind", ctypes.c_int), ("machine", ctypes.c_char_p), ("machine_len", ctypes.c_size_t),
                ("alive", ALIVE), ("owner_state", OWNER_STATE), ("payload", ctypes.c_void_p)]


class LockOptions(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("describe", DESCRIBE), ("describe_payload", ctypes.c_void_p),
                ("gcloud_timeout_ms", ctypes.c_int64), ("here", ctypes.POINTER(Here))]


def ms(iso):
    """Milliseconds since the epoch of a UTC `YYYY-MM-DDTHH:MM:SS.mmmZ`, computed here."""
    import calendar
    import time
    base, frac = iso.rstrip("Z").split(".")
    return calendar.timegm(time.strptime(base, "%Y-%m-%dT%H:%M:%S")) * 1000 + int(frac)


def judge(body, now, opts):
    verdict, err = Verdict(), ctypes.c_void_p()
    raw = body.encode()
    rc = lib.lj_lock_judge(ctypes.byref(verdict), raw, len(raw), now, ctypes.byref(opts), ctypes.byref(err))
    if err.value:
        lib.lj_error_destroy(err)
    why = ctypes.string_at(verdict.why, verdict.why_len).decode() if verdict.why else None
    result = (rc, verdict.kind, lib.lj_lock_reason_code(verdict.reason).decode(), verdict.manual_removal, why)
    lib.lj_lock_verdict_clear(ctypes.byref(verdict))
    check("lj_lock_verdict_clear zeroes the verdict", not verdict.why and verdict.why_len == 0)
    return result


def test_lock():
    if not has("lj_lock_judge"):
        cannot_run("lock verdicts: lj_lock_judge is not in this build")
        return
    lib.lj_lock_reason_code.argtypes = [ctypes.c_int]
    lib.lj_lock_reason_code.restype = ctypes.c_char_p
    lib.lj_lock_verdict_clear.argtypes = [ctypes.POINTER(Verdict)]
    lib.lj_lock_options_init.argtypes = [ctypes.POINTER(LockOptions), ctypes.c_uint32]
    lib.lj_lock_here_init.argtypes = [ctypes.POINTER(Here), ctypes.c_uint32]
    lib.lj_execution_state_set.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t]
    lib.lj_lock_judge.argtypes = [ctypes.POINTER(Verdict), ctypes.c_char_p, ctypes.c_size_t, ctypes.c_int64,
                                  ctypes.POINTER(LockOptions), c_char_pp]
    brk, held = header_constant("LJ_LOCK_BREAK"), header_constant("LJ_LOCK_HELD")

    # A process holder on this machine ("build-1", machine id "m1") whose pid is dead.
    asked = []

    def alive(out, pid, payload):
        asked.append(pid)
        out[0] = 0 if pid == 4242 else 1
        return 0

    def describe_never(state, ref, payload):
        asked.append("describe")
        return 0

    alive_fn, describe_never_fn = ALIVE(alive), DESCRIBE(describe_never)
    here = Here()
    check("lj_lock_here_init", lib.lj_lock_here_init(ctypes.byref(here), header_constant("LJ_LOCK_HERE_VERSION")) == LJ_OK)
    here.host, here.host_len = b"build-1", 7
    here.machine_kind, here.machine, here.machine_len = header_constant("LJ_MACHINE_ID"), b"m1", 2
    here.alive = alive_fn
    opts = LockOptions()
    check("lj_lock_options_init", lib.lj_lock_options_init(ctypes.byref(opts), header_constant("LJ_LOCK_OPTIONS_VERSION"))
          == LJ_OK and opts.gcloud_timeout_ms == 60000)
    opts.describe = describe_never_fn
    opts.here = ctypes.pointer(here)
    who = "deploy (on build-1, pid 4242, started 2024-05-01T10:00:00.000Z)"
    body = ('{"purpose":"deploy","id":"b2","host":"build-1","machine":"m1","pid":4242,'
            '"startedAt":"2024-05-01T10:00:00.000Z","leaseUntil":"2024-05-01T10:15:00.000Z"}')
    got = judge(body, ms("2024-05-01T10:01:00.000Z"), opts)
    check("lj_lock_judge: a process gone on this machine", got == (LJ_OK, brk, "process_gone", 0,
          who + " has ended (its process is gone on this machine)"), got)
    check("the pid was asked, the describer never", asked == [4242.0], asked)
    # Alive: held until the lease ends; now equal to the lease end is not past it.
    here.alive = ALIVE(lambda out, pid, payload: (out.__setitem__(0, 1), 0)[1])
    opts.here = ctypes.pointer(here)
    got = judge(body, ms("2024-05-01T10:15:00.000Z"), opts)
    check("lj_lock_judge: the lease runs at its end", got == (LJ_OK, held, "lease_runs", 0,
          "held by " + who + "; its lease runs until 2024-05-01T10:15:00.000Z unless renewed"), got)

    # An execution holder: the describer says it finished.
    seen = []

    def describe(state, ref, payload):
        r = ref.contents
        seen.append((ctypes.string_at(r.project_id, r.project_id_len).decode(),
                     ctypes.string_at(r.region, r.region_len).decode(), ctypes.string_at(r.name, r.name_len).decode()))
        return lib.lj_execution_state_set(state, header_constant("LJ_EXECUTION_FINISHED"), b"cancelled", 9)

    describe_fn = DESCRIBE(describe)
    opts2 = LockOptions()
    lib.lj_lock_options_init(ctypes.byref(opts2), header_constant("LJ_LOCK_OPTIONS_VERSION"))
    opts2.describe = describe_fn
    body = ('{"purpose":"caelo upgrader job","id":"a1","host":"localhost","machine":null,"pid":1,'
            '"startedAt":"2024-05-01T10:00:00.000Z","execution":{"projectId":"proj","region":"europe-west1",'
            '"name":"upgrader-x7"},"leaseUntil":"2024-05-01T11:05:00.000Z"}')
    got = judge(body, ms("2024-05-01T10:30:00.000Z"), opts2)
    check("lj_lock_judge: an execution that finished", got == (LJ_OK, brk, "execution_finished", 0,
          "caelo upgrader job (run upgrader-x7, started 2024-05-01T10:00:00.000Z) has cancelled, but its lock was "
          "left behind"), got)
    check("the describer got the execution", seen == [("proj", "europe-west1", "upgrader-x7")], seen)
    # A describer that stops the work: LJ_EUSER.
    opts2.describe = DESCRIBE(lambda state, ref, payload: 1)
    got = judge(body, ms("2024-05-01T10:30:00.000Z"), opts2)
    check("a describer that stops is LJ_EUSER", got[0] == header_constant("LJ_EUSER"), got)
    # Not a lock body: held for a person, never an error.
    got = judge("[1,2]", ms("2024-05-01T10:30:00.000Z"), opts2)
    check("lj_lock_judge: not readable", got == (LJ_OK, held, "not_readable", 1,
          "the lock's holder is not readable ([1,2])"), got)


# --- a small batch plan -----------------------------------------------------------------

class StepAction(ctypes.Structure):
    _fields_ = [("action", ctypes.c_uint8), ("reason", ctypes.c_uint8), ("reserved", ctypes.c_uint16),
                ("bound_nsec", ctypes.c_int32), ("bound_sec", ctypes.c_int64)]


class StepEntry(ctypes.Structure):
    _fields_ = [("key_offset", ctypes.c_uint64), ("value_offset", ctypes.c_uint64), ("key_len", ctypes.c_uint32),
                ("value_len", ctypes.c_uint32), ("revision", ctypes.c_uint64)]


class PlanSummary(ctypes.Structure):
    _fields_ = [(f, ctypes.c_uint64) for f in ("ends", "deletes", "leaves", "no_step", "other_node", "malformed")]


OWNER_STATE_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_int), ctypes.c_char_p, ctypes.c_size_t,
                                  ctypes.c_void_p)


# lj_step_plan_options_t at version 1, the rule fields side by side: a program built
# against the first header still plans with a newer library, its struct read by version.
class PlanOptions(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("node", ctypes.c_char_p), ("node_len", ctypes.c_size_t),
                ("owner", ctypes.c_char_p), ("owner_len", ctypes.c_size_t), ("before_ns", ctypes.c_int64),
                ("now_ns", ctypes.c_int64), ("bound_seconds", ctypes.c_int64), ("rule", ctypes.c_int),
                ("start_tolerance_ms", ctypes.c_int64), ("owner_state", OWNER_STATE_FN), ("payload", ctypes.c_void_p),
                ("threads", ctypes.c_uint32)]


def test_plan_batch():
    if not has("lj_step_plan_batch"):
        cannot_run("batch plan: lj_step_plan_batch is not in this build")
        return
    lib.lj_step_plan_options_init.argtypes = [ctypes.POINTER(PlanOptions), ctypes.c_uint32]
    lib.lj_step_plan_batch.argtypes = [ctypes.POINTER(StepAction), ctypes.c_size_t, ctypes.POINTER(PlanSummary),
                                       ctypes.c_char_p, ctypes.c_size_t, ctypes.c_size_t, ctypes.POINTER(StepEntry),
                                       ctypes.c_size_t, ctypes.POINTER(PlanOptions), c_char_pp]
    lib.lj_step_why.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_size_t),
                                ctypes.POINTER(StepAction), c_char_pp]
    lib.lj_step_reason_name.argtypes = [ctypes.c_int]
    lib.lj_step_reason_name.restype = ctypes.c_char_p
    check("lj_step_entry_t is 32 bytes, lj_step_action_t 16",
          ctypes.sizeof(StepEntry) == 32 and ctypes.sizeof(StepAction) == 16)
    node = "build-eu-1"
    me = "0f6d2c1e-8a3b-4c5d-9e7f-a1b2c3d4e5f6.4242.lxb2k3a0"
    them = "0f6d2c1e-8a3b-4c5d-9e7f-a1b2c3d4e5f6.4243.lxb2k3a0"
    ask = "6f1c0a52-3b7e-4d0a-9c11-2f5e8d7b6a01"

    def step(i, tool, owner, started="2024-06-01T11:00:00Z", state="running"):
        return '{"id":"%s","tool":"%s","state":"%s","owner":"%s","started":"%s"}' % (i, tool, state, owner, started)

    # (key, value, expected action name, reason name, why) worked out by the rules by hand.
    keys = [
        (node + ".mine", step("mine", "go build", me), "leave", "owned-by-self", ""),
        (node + ".theirs", step("theirs", "go test", them), "end", "owner-not-self",
         "the build module restarted while it ran"),
        (node + "." + ask, step(ask, "check ask", them), "delete", "owner-not-self",
         "the build module restarted while it ran"),
        (node + ".old", '{"id":"old","tool":"lint","state":"running","started":"2024-06-01T10:00:00Z"}', "end",
         "started-before", "the build module restarted while it ran"),
        (node + ".done", step("done", "go vet", them, state="succeeded"), "leave", "not-running", ""),
        ("build-eu-2.x", step("x", "go build", them), "leave", "other-node", ""),
        (node + ".bad", '{"id":"bad","state":"running"} trailing', "leave", "no-step", ""),
    ]
    buf = bytearray()
    entries = (StepEntry * len(keys))()
    for i, (key, value, *_rest) in enumerate(keys):
        k, v = key.encode(), value.encode()
        entries[i].key_offset, entries[i].key_len = len(buf), len(k)
        buf += k
        entries[i].value_offset, entries[i].value_len = len(buf), len(v)
        buf += v
        entries[i].revision = i + 1
    data = bytes(buf)
    opts = PlanOptions()
    check("lj_step_plan_options_init at version 1", lib.lj_step_plan_options_init(
        ctypes.byref(opts), 1) == LJ_OK and opts.bound_seconds == 3600 and opts.version == 1)
    opts.node, opts.node_len = node.encode(), len(node)
    opts.owner, opts.owner_len = me.encode(), len(me)
    opts.before_ns = 1717242600 * 10**9  # 2024-06-01T11:50:00Z
    opts.now_ns = 1717243200 * 10**9     # 2024-06-01T12:00:00Z
    out = (StepAction * len(keys))()
    summary, err = PlanSummary(), ctypes.c_void_p()
    rc = lib.lj_step_plan_batch(out, len(keys), ctypes.byref(summary), data, len(data), 0, entries, len(keys),
                                ctypes.byref(opts), ctypes.byref(err))
    check("lj_step_plan_batch plans the batch in one call", rc == LJ_OK, rc)
    names = {header_constant("LJ_STEP_LEAVE"): "leave", header_constant("LJ_STEP_END"): "end",
             header_constant("LJ_STEP_DELETE"): "delete"}
    for i, (key, _value, action, reason, why) in enumerate(keys):
        text = ctypes.create_string_buffer(header_constant("LJ_STEP_WHY_MAX"))
        n = ctypes.c_size_t()
        lib.lj_step_why(text, len(text), ctypes.byref(n), ctypes.byref(out[i]), None)
        got = (names.get(out[i].action), lib.lj_step_reason_name(out[i].reason).decode(), text.value.decode())
        check("plan of " + key, got == (action, reason, why), got)
    check("the plan's summary", (summary.ends, summary.deletes, summary.leaves, summary.no_step, summary.other_node)
          == (2, 1, 2, 1, 1), (summary.ends, summary.deletes, summary.leaves, summary.no_step, summary.other_node))
    # An entry outside the buffer is refused, with a sentence.
    entries[0].value_offset = len(data) + 1
    rc = lib.lj_step_plan_batch(out, len(keys), None, data, len(data), 0, entries, len(keys), ctypes.byref(opts),
                                ctypes.byref(err))
    message = lib.lj_error_message(err).decode() if err.value else ""
    if err.value:
        lib.lj_error_destroy(err)
    check("an entry outside the buffer is LJ_EINVAL", rc == LJ_EINVAL and message, (rc, message))


test_version_and_errors()
test_identity()
test_lock()
test_plan_batch()
print("1..%d" % count)
print("%d passed, %d failed" % (count - failed, failed))
sys.exit(1 if failed else 0)
