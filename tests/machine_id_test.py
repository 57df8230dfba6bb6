"""The machine id through the C ABI, against the same id computed by another route:
interfaces from `ip -o addr` (those with an IPv4 or IPv6 address), their flags, operational
state and MACs from /sys/class/net (up and running, not loopback), sha256sum for the digest.
/sys/class/net alone also lists interfaces that are down; they must not count."""
import ctypes
import os
import socket
import subprocess
import sys

IFF_UP, IFF_LOOPBACK = 0x1, 0x8

lib = ctypes.CDLL(os.environ["LEASEJUDGE_LIBRARY"])
lib.lj_machine_id.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_size_t), ctypes.c_void_p]
lib.lj_free.argtypes = [ctypes.c_void_p]
failed = 0


def check(name, cond, detail=""):
    global failed
    print(("ok" if cond else "not ok") + " - " + name + ("" if cond else ": " + detail))
    if not cond:
        failed += 1


def library_id():
    out, n = ctypes.c_void_p(), ctypes.c_size_t()
    rc = lib.lj_machine_id(ctypes.byref(out), ctypes.byref(n), None)
    value = ctypes.string_at(out.value, n.value).decode() if rc == 0 else None
    lib.lj_free(out)
    return rc, value


def expected_id():
    with_address = set()
    for line in subprocess.run(["ip", "-o", "addr"], capture_output=True, text=True, check=True).stdout.splitlines():
        parts = line.split()
        if parts[2] in ("inet", "inet6"):
            with_address.add(parts[1].split("@")[0])
    macs = set()
    for name in with_address:
        base = "/sys/class/net/" + name
        flags = int(open(base + "/flags").read(), 16)
        # The kernel reports RUNNING (not kept in /sys flags) for an up device whose
        # operational state is up or unknown.
        operstate = open(base + "/operstate").read().strip()
        if not (flags & IFF_UP and operstate in ("up", "unknown")) or flags & IFF_LOOPBACK:
            continue
        mac = open(base + "/address").read().strip().lower()
        if mac and mac != "00:00:00:00:00:00":
            macs.add(mac)
    if not macs:
        return None
    text = "\n".join([socket.gethostname(), os.readlink("/proc/self/ns/pid")] + sorted(macs))
    digest = subprocess.run(["sha256sum"], input=text.encode(), capture_output=True, check=True).stdout
    return digest.decode()[:32]


rc, got = library_id()
want = expected_id()
check("machine id matches ip + /sys + sha256sum", (rc == 0 and got == want) or (want is None and rc == -5),
      f"rc={rc} got={got} want={want}")
down = [n for n in os.listdir("/sys/class/net") if not int(open(f"/sys/class/net/{n}/flags").read(), 16) & IFF_UP]
print(f"# interfaces that are down (not counted): {down}")
for var in ("CLOUD_RUN_EXECUTION", "K_SERVICE"):
    os.environ[var] = "x"
    rc, got = library_id()
    check(f"no machine id with {var} set", rc == -5 and got is None, f"rc={rc} got={got}")
    os.environ[var] = ""
    rc, got = library_id()
    check(f"an empty {var} does not count", rc == 0 and got == want or want is None, f"rc={rc} got={got}")
    del os.environ[var]
print(f"{2 * 2 + 1 - failed} passed, {failed} failed")
sys.exit(1 if failed else 0)
