"""Finding and loading libleasejudge, the C structs and the calls' prototypes.

The library is found as ctypes users expect, first match wins:
  1. the path in the environment variable LEASEJUDGE_LIBRARY;
  2. the package's own copy, libleasejudge.so.0 beside these modules (the platform
     wheel the build makes carries one);
  3. next to the prefix the package is installed under (<prefix>/lib/pythonX.Y/
     site-packages/leasejudge -> <prefix>/lib, <prefix>/lib64, <prefix>/lib/<multiarch>),
     then under sys.prefix;
  4. ctypes.util.find_library("leasejudge") (ldconfig's cache, LD_LIBRARY_PATH).
leasejudge.load(path) loads an explicit path instead.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys
import sysconfig
import threading
from pathlib import Path
from typing import Any, Callable, Iterator, Optional

from . import errors

#: The ABI major this package speaks: the library's LJ_VERSION_NUMBER // 10000.
ABI_MAJOR = 0
#: The oldest library whose calls this package uses (LJ_VERSION_NUMBER).
MIN_VERSION = 100
TIME_DEFAULT = -(2**63)  # LJ_TIME_DEFAULT
# The versions of the option structs this package builds (the header's *_VERSION).
STEP_RULES_VERSION = 1
STEP_PLAN_OPTIONS_VERSION = 3
SWEEP_OPTIONS_VERSION = 4

c_size_p = ctypes.POINTER(ctypes.c_size_t)
c_void_pp = ctypes.POINTER(ctypes.c_void_p)
c_int_p = ctypes.POINTER(ctypes.c_int)
_i32, _u32, _i64, _u64, _int, _sz, _vp, _cp, _dbl = (ctypes.c_int32, ctypes.c_uint32, ctypes.c_int64,
                                                      ctypes.c_uint64, ctypes.c_int, ctypes.c_size_t,
                                                      ctypes.c_void_p, ctypes.c_char_p, ctypes.c_double)


# --- structs (as capi/include/leasejudge/*.h declare them) ---------------------------

class ExecutionRef(ctypes.Structure):
    _fields_ = [("project_id", _cp), ("project_id_len", _sz), ("region", _cp), ("region_len", _sz),
                ("name", _cp), ("name_len", _sz)]


class LockVerdict(ctypes.Structure):
    _fields_ = [("kind", _int), ("reason", _int), ("manual_removal", _int), ("why", _vp), ("why_len", _sz)]


DESCRIBE_FN = ctypes.CFUNCTYPE(_int, _vp, ctypes.POINTER(ExecutionRef), _vp)
ALIVE_FN = ctypes.CFUNCTYPE(_int, c_int_p, _dbl, _vp)
OWNER_STATE_FN = ctypes.CFUNCTYPE(_int, c_int_p, _vp, _sz, _vp)


class LockHere(ctypes.Structure):
    _fields_ = [("version", _u32), ("host", _cp), ("host_len", _sz), ("machine_kind", _int),
                ("machine", _cp), ("machine_len", _sz), ("alive", ALIVE_FN), ("owner_state", OWNER_STATE_FN),
                ("payload", _vp)]


class LockOptions(ctypes.Structure):
    _fields_ = [("version", _u32), ("describe", DESCRIBE_FN), ("describe_payload", _vp),
                ("gcloud_timeout_ms", _i64), ("here", ctypes.POINTER(LockHere)), ("gcloud_env", c_void_pp)]


class LockHolder(ctypes.Structure):
    _fields_ = [("version", _u32), ("kind", _int), ("lease_ms", _i64), ("execution", ExecutionRef),
                ("pid", _i32)]


class LockAcquisition(ctypes.Structure):
    _fields_ = [("outcome", _int), ("has_verdict", _int), ("verdict", LockVerdict), ("broke_at", _u64),
                ("revision", _u64)]


CANCELLED_FN = ctypes.CFUNCTYPE(_int, _vp)
LOST_FN = ctypes.CFUNCTYPE(None, _int, _vp, _sz, _vp)


class LockWaitOptions(ctypes.Structure):
    _fields_ = [("version", _u32), ("wait_ms", _i64), ("poll_min_ms", _i64), ("poll_max_ms", _i64),
                ("cancelled", CANCELLED_FN), ("payload", _vp)]


class OwnerOptions(ctypes.Structure):
    _fields_ = [("version", _u32), ("start_tolerance_ms", _i64)]


class StepAction(ctypes.Structure):
    _fields_ = [("action", ctypes.c_uint8), ("reason", ctypes.c_uint8), ("reserved", ctypes.c_uint16),
                ("bound_nsec", _i32), ("bound_sec", _i64)]


class StepEntry(ctypes.Structure):
    _fields_ = [("key_offset", _u64), ("value_offset", _u64), ("key_len", _u32), ("value_len", _u32),
                ("revision", _u64)]


class PlanSummary(ctypes.Structure):
    _fields_ = [(f, _u64) for f in ("ends", "deletes", "leaves", "no_step", "other_node", "malformed")]


class StepRules(ctypes.Structure):
    """lj_step_rules_t: the rules, one struct nested in both options structs."""
    _fields_ = [("version", _u32), ("node", _cp), ("node_len", _sz), ("owner", _cp), ("owner_len", _sz),
                ("before_ns", _i64), ("now_ns", _i64), ("bound_ms", _i64), ("rule", _int),
                ("start_tolerance_ms", _i64), ("min_age_ms", _i64), ("self_pid", _i64)]


class PlanOptions(ctypes.Structure):
    _fields_ = [("version", _u32), ("rules", StepRules), ("owner_state", OWNER_STATE_FN), ("payload", _vp),
                ("threads", _u32)]  # version 3


LOG_FN = ctypes.CFUNCTYPE(_int, _vp, _sz, _vp)
LIVE_FN = ctypes.CFUNCTYPE(_int, c_int_p, _vp, _sz, _vp)
ON_KEY_FN = ctypes.CFUNCTYPE(_int, _vp, _vp)


class SweepOptions(ctypes.Structure):
    _fields_ = [("version", _u32), ("rules", StepRules), ("owner_state", OWNER_STATE_FN), ("log", LOG_FN),
                ("live", LIVE_FN), ("payload", _vp), ("attempts", _i32), ("retry_ms", _i64),
                ("write_window", _u32), ("batch_keys", _u32), ("dry_run", _int),
                ("on_key", ON_KEY_FN)]  # version 4


class SweepCounts(ctypes.Structure):
    _fields_ = [(f, _u64) for f in ("ends", "deletes", "changed", "leaves", "no_step", "other_node")]


class NatsOptions(ctypes.Structure):
    _fields_ = [("version", _u32), ("urls", _cp), ("urls_len", _sz), ("bucket", _cp), ("bucket_len", _sz),
                ("credentials_file", _cp), ("credentials_file_len", _sz), ("tls", _i32),
                ("tls_ca_file", _cp), ("tls_ca_file_len", _sz), ("tls_cert_file", _cp),
                ("tls_cert_file_len", _sz), ("tls_key_file", _cp), ("tls_key_file_len", _sz),
                ("name", _cp), ("name_len", _sz), ("connect_timeout_ms", _i64), ("request_timeout_ms", _i64),
                ("list_timeout_ms", _i64), ("reconnect_wait_ms", _i64), ("direct_reads", _i32),
                ("create_bucket", _i32), ("history", _i32), ("replicas", _i32)]


NOTE_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, _sz, _vp)


class StoreUrlOptions(ctypes.Structure):
    _fields_ = [("version", _u32), ("create", _i32), ("credentials_file", _cp), ("credentials_file_len", _sz),
                ("tls_ca_file", _cp), ("tls_ca_file_len", _sz), ("tls_cert_file", _cp),
                ("tls_cert_file_len", _sz), ("tls_key_file", _cp), ("tls_key_file_len", _sz),
                ("refuse_unfenced", _i32), ("note", NOTE_FN), ("note_payload", _vp)]


KEYS_FN = ctypes.CFUNCTYPE(_int, _vp, _vp)
GET_FN = ctypes.CFUNCTYPE(_int, _vp, _vp, _sz, _vp)
UPDATE_FN = ctypes.CFUNCTYPE(_int, ctypes.POINTER(_u64), _vp, _sz, _vp, _sz, _u64, _vp)
CREATE_FN = ctypes.CFUNCTYPE(_int, ctypes.POINTER(_u64), _vp, _sz, _vp, _sz, _vp)
REMOVE_FN = ctypes.CFUNCTYPE(_int, _vp, _sz, _u64, _vp)
RELEASE_FN = ctypes.CFUNCTYPE(None, _vp)
SCAN_FN = ctypes.CFUNCTYPE(_int, _vp, _vp, _sz, _vp)


class StoreCallbacks(ctypes.Structure):
    _fields_ = [("version", _u32), ("keys", KEYS_FN), ("get", GET_FN), ("update", UPDATE_FN),
                ("create", CREATE_FN), ("remove", REMOVE_FN), ("release", RELEASE_FN), ("scan", SCAN_FN)]


STORE_KEY_FN = ctypes.CFUNCTYPE(_int, _vp, _sz, _vp)
STORE_BATCH_FN = ctypes.CFUNCTYPE(_int, _vp, _sz, _sz, ctypes.POINTER(StepEntry), _sz, _vp)
LEASE_LINE_FN = ctypes.CFUNCTYPE(_int, _int, _vp, _sz, _vp)
LEASE_INTERRUPTED_FN = ctypes.CFUNCTYPE(_int, _vp)


class LeasedirOptions(ctypes.Structure):
    _fields_ = [("version", _u32), ("lock_tries", _i64), ("lock_time_limit_s", _i64), ("lock_retry_ms", _i64),
                ("shared_harness", _cp), ("self_pid", _i32), ("environment", c_void_pp),
                ("interrupted", LEASE_INTERRUPTED_FN), ("interrupted_payload", _vp)]


# --- prototypes: name -> (restype, argtypes); the trailing lj_error_t ** is added -----

_P = ctypes.POINTER
_OUT_STR = [c_void_pp, c_size_p]  # char **out, size_t *out_len
_ERR = "err"  # marks a call that ends with lj_error_t **err
PROTOTYPES: dict[str, tuple[Any, list[Any]]] = {
    "lj_version": (_cp, []),
    "lj_version_number": (ctypes.c_uint, []),
    "lj_strerror": (_cp, [_int]),
    "lj_error_code": (_int, [_vp]),
    "lj_error_message": (_cp, [_vp]),
    "lj_error_destroy": (None, [_vp]),
    "lj_free": (None, [_vp]),
    # identity
    "lj_boot_id": (_int, _OUT_STR + [_ERR]),
    "lj_owner_token": (_int, _OUT_STR + [_i32, _ERR]),
    "lj_owner_token_parse": (_int, _OUT_STR + [_P(_i32), _P(_i64), _cp, _sz, _ERR]),
    "lj_lease_identity": (_int, _OUT_STR + [_i32, _ERR]),
    "lj_machine_id": (_int, _OUT_STR + [_ERR]),
    "lj_owner_options_init": (_int, [_P(OwnerOptions), _u32]),
    "lj_owner_judge": (_int, [c_int_p] + _OUT_STR + [_cp, _sz, _P(OwnerOptions), _ERR]),
    "lj_lease_identity_judge": (_int, [c_int_p] + _OUT_STR + [_i32, _cp, _sz, _i64, _ERR]),
    # lock
    "lj_lock_reason_code": (_cp, [_int]),
    "lj_lock_kind_name": (_cp, [_int]),
    "lj_lock_verdict_clear": (None, [_P(LockVerdict)]),
    "lj_lock_verdict_text": (_int, _OUT_STR + [_P(LockVerdict), _ERR]),
    "lj_lock_verdict_json": (_int, _OUT_STR + [_P(LockVerdict), _ERR]),
    "lj_execution_state_set": (_int, [_vp, _int, _cp, _sz]),
    "lj_execution_state_parse": (_int, [c_int_p] + _OUT_STR + [_int, _cp, _sz, _cp, _sz, _ERR]),
    "lj_execution_describe_args": (_int, _OUT_STR + [c_size_p, _P(ExecutionRef), _ERR]),
    "lj_lock_here_init": (_int, [_P(LockHere), _u32]),
    "lj_lock_options_init": (_int, [_P(LockOptions), _u32]),
    "lj_process_alive": (_int, [c_int_p, _dbl, _ERR]),
    "lj_lock_judge": (_int, [_P(LockVerdict), _cp, _sz, _i64, _P(LockOptions), _ERR]),
    "lj_lock_holder_init": (_int, [_P(LockHolder), _u32]),
    "lj_lock_purpose_default": (_int, _OUT_STR + [_cp, _sz, _i32, _ERR]),
    "lj_lock_body_new": (_int, _OUT_STR + [_cp, _sz, _i64, _P(LockHolder), _cp, _sz, _ERR]),
    "lj_lock_body_renew": (_int, _OUT_STR + [_cp, _sz, _i64, _i64, _ERR]),
    "lj_lock_body_parse": (_int, _OUT_STR + [_cp, _sz, _ERR]),
    "lj_lock_body_id": (_int, _OUT_STR + [_cp, _sz, _ERR]),
    "lj_lock_time_format": (_int, _OUT_STR + [_i64, _ERR]),
    "lj_lock_time_parse": (_int, [_P(_i64), _cp, _sz, _ERR]),
    "lj_lock_acquisition_clear": (None, [_P(LockAcquisition)]),
    "lj_lock_acquire": (_int, [c_void_pp, _P(LockAcquisition), _vp, _cp, _sz, _cp, _sz, _P(LockHolder), _i64,
                               _P(LockOptions), _ERR]),
    "lj_lock_renew": (_int, [_vp, _i64, _ERR]),
    "lj_lock_release": (_int, [_vp, _ERR]),
    "lj_lock_revision": (_u64, [_vp]),
    "lj_lock_renew_interval_ms": (_i64, [_vp]),
    "lj_lock_id": (_int, _OUT_STR + [_vp, _ERR]),
    "lj_lock_body": (_int, _OUT_STR + [_vp, _ERR]),
    "lj_lock_destroy": (None, [_vp]),
    "lj_lock_open": (_int, [c_void_pp, _vp, _cp, _sz, _cp, _sz, _i64, _ERR]),
    "lj_lock_wait_options_init": (_int, [_P(LockWaitOptions), _u32]),
    "lj_lock_acquire_wait": (_int, [c_void_pp, _P(LockAcquisition), _vp, _cp, _sz, _cp, _sz, _P(LockHolder),
                                    _P(LockWaitOptions), _P(LockOptions), _ERR]),
    "lj_lock_heartbeat_start": (_int, [c_void_pp, _vp, LOST_FN, _vp, _ERR]),
    "lj_lock_heartbeat_lost": (_int, [_vp]),
    "lj_lock_heartbeat_renewals": (_u64, [_vp]),
    "lj_lock_heartbeat_retries": (_u64, [_vp]),
    "lj_lock_heartbeat_destroy": (None, [_vp]),
    # stores
    "lj_store_sink_put": (_int, [_vp, _cp, _sz, _u64]),
    "lj_store_sink_key": (_int, [_vp, _cp, _sz]),
    "lj_store_callbacks_init": (_int, [_P(StoreCallbacks), _u32]),
    "lj_store_from_callbacks": (_int, [c_void_pp, _P(StoreCallbacks), _vp, _ERR]),
    "lj_store_memory_open": (_int, [c_void_pp, _ERR]),
    "lj_store_file_open": (_int, [c_void_pp, _cp, _sz, _ERR]),
    "lj_store_url_options_init": (_int, [_P(StoreUrlOptions), _u32]),
    "lj_store_open_url": (_int, [c_void_pp, _cp, _sz, _P(StoreUrlOptions), _ERR]),
    "lj_store_destroy": (None, [_vp]),
    "lj_store_get": (_int, _OUT_STR + [_P(_u64), _vp, _cp, _sz, _ERR]),
    "lj_store_create": (_int, [_P(_u64), _vp, _cp, _sz, _cp, _sz, _ERR]),
    "lj_store_update": (_int, [_P(_u64), _vp, _cp, _sz, _cp, _sz, _u64, _ERR]),
    "lj_store_remove": (_int, [_vp, _cp, _sz, _u64, _ERR]),
    "lj_store_keys": (_int, [_vp, STORE_KEY_FN, _vp, _ERR]),
    "lj_store_scan": (_int, [_vp, _cp, _sz, STORE_BATCH_FN, _vp, _ERR]),
    "lj_nats_options_init": (_int, [_P(NatsOptions), _u32]),
    "lj_nats_store_open": (_int, [c_void_pp, _P(NatsOptions), _ERR]),
    # steps
    "lj_step_action_name": (_cp, [_int]),
    "lj_step_reason_name": (_cp, [_int]),
    "lj_step_why": (_int, [ctypes.c_char_p, _sz, c_size_p, _P(StepAction), _ERR]),
    "lj_step_plan_options_init": (_int, [_P(PlanOptions), _u32]),
    "lj_step_plan": (_int, [_P(StepAction)] + _OUT_STR + _OUT_STR + [_cp, _sz, _cp, _sz, _P(PlanOptions), _ERR]),
    "lj_step_plan_lines": (_int, _OUT_STR + [_P(PlanSummary), _cp, _sz, _P(PlanOptions), _ERR]),
    "lj_step_plan_summary_format": (_int, _OUT_STR + [_P(PlanSummary), _ERR]),
    "lj_step_key": (_int, _OUT_STR + [_cp, _sz, _cp, _sz, _ERR]),
    "lj_step_end_value": (_int, _OUT_STR + [_cp, _sz, _cp, _sz, _i64, _ERR]),
    # sweeps
    "lj_sweep_outcome_name": (_cp, [_int]),
    "lj_sweep_options_init": (_int, [_P(SweepOptions), _u32]),
    "lj_sweep_key_text": (_vp, [_vp, _int, c_size_p]),
    "lj_sweep_key_verdict": (_int, [_P(StepAction), _P(_u64), c_int_p, _vp]),
    "lj_sweep_report_ended_count": (_sz, [_vp]),
    "lj_sweep_report_ended": (_vp, [_vp, _sz, c_size_p]),
    "lj_sweep_report_counts": (_int, [_P(SweepCounts), _vp]),
    "lj_sweep_report_code": (_int, [_vp]),
    "lj_sweep_report_message": (_cp, [_vp]),
    "lj_sweep_report_write_count": (_sz, [_vp]),
    "lj_sweep_report_write": (_int, [c_void_pp, c_size_p, c_int_p, c_int_p, _P(_u64), _vp, _sz]),
    "lj_sweep_report_destroy": (None, [_vp]),
    "lj_sweep_end_stale": (_int, [c_void_pp, _vp, _cp, _sz, _i64, _P(SweepOptions), _ERR]),
    "lj_sweep_stale": (_int, [c_void_pp, _vp, _cp, _sz, _P(SweepOptions), _ERR]),
    "lj_sweep_end_one": (_int, [c_void_pp] + _OUT_STR + [_vp, _cp, _sz, _cp, _sz, _cp, _sz, _P(SweepOptions),
                                                         _ERR]),
    "lj_step_destroy": (None, [_vp]),
    # lease directories
    "lj_leasedir_options_init": (_int, [_P(LeasedirOptions), _u32]),
    "lj_leasedir_run": (_int, [c_int_p, c_void_pp, _sz, _cp, _cp, LEASE_LINE_FN, _vp, _P(LeasedirOptions), _ERR]),
    "lj_leasedir_path": (_int, _OUT_STR + [_cp, _sz, _P(LeasedirOptions), _ERR]),
    "lj_leasedir_touch": (_int, [c_int_p, _cp, _sz, _cp, _sz, LEASE_LINE_FN, _vp, _P(LeasedirOptions), _ERR]),
    "lj_leasedir_live": (_int, [c_int_p, _cp, _sz, _cp, _sz, _int, LEASE_LINE_FN, _vp, _P(LeasedirOptions),
                                _ERR]),
    "lj_leasedir_list": (_int, [c_int_p, _cp, _sz, LEASE_LINE_FN, _vp, _P(LeasedirOptions), _ERR]),
    "lj_leasedir_state": (_int, [c_int_p, _cp, _sz, _cp, _sz, _i64, _P(LeasedirOptions), _ERR]),
}


# --- loading -------------------------------------------------------------------------

_NAMES = ("libleasejudge.so", "libleasejudge.so.%d" % ABI_MAJOR)
_lock = threading.Lock()
_lib: Optional[ctypes.CDLL] = None


def _prefix_dirs() -> Iterator[Path]:
    """The library directories of the prefix this package is installed under, then of
    sys.prefix: <prefix>/lib/pythonX.Y/site-packages/leasejudge gives <prefix>."""
    here = Path(__file__).resolve().parent
    prefixes = []
    for parent in here.parents:
        if parent.name in ("site-packages", "dist-packages"):
            prefixes.append(parent.parent.parent.parent if parent.parent.name.startswith("python")
                            else parent.parent.parent)
            break
    prefixes += [Path(sys.prefix), Path(sys.base_prefix)]
    multiarch = sysconfig.get_config_var("MULTIARCH") or ""
    seen = set()
    for prefix in prefixes:
        for sub in ("lib", "lib64", os.path.join("lib", multiarch) if multiarch else None):
            if sub is not None and (prefix / sub) not in seen:
                seen.add(prefix / sub)
                yield prefix / sub


def candidates() -> list[str]:
    """Where the library is looked for, in order (LEASEJUDGE_LIBRARY alone when set)."""
    env = os.environ.get("LEASEJUDGE_LIBRARY")
    if env:
        return [env]
    own = Path(__file__).resolve().parent / _NAMES[1]
    found = [str(own)] if own.exists() else []
    found += [str(d / n) for d in _prefix_dirs() for n in _NAMES if (d / n).exists()]
    name = ctypes.util.find_library("leasejudge")
    if name:
        found.append(name)
    return found


def _declare(cdll: ctypes.CDLL) -> None:
    for name, (restype, argtypes) in PROTOTYPES.items():
        fn = getattr(cdll, name, None)
        if fn is None:
            continue  # a call newer than this library: its wrapper says so when used
        fn.restype = restype
        fn.argtypes = [c_void_pp if a == _ERR else a for a in argtypes]


def load(path: "str | os.PathLike[str] | None" = None) -> ctypes.CDLL:
    """Load libleasejudge from path, or find it (see the module's doc), and check that
    its ABI is the one this package speaks. Returns the ctypes library; later calls of
    the package use it. Raises OSError when no library is found or loadable,
    leasejudge.VersionError when its version does not fit."""
    global _lib
    paths = [os.fspath(path)] if path is not None else candidates()
    if not paths:
        raise OSError("libleasejudge not found: set LEASEJUDGE_LIBRARY to its path, install it next to this "
                      "package's prefix or where the dynamic loader looks, or call leasejudge.load(path)")
    failures = []
    for p in paths:
        try:
            cdll = ctypes.CDLL(p)
        except OSError as e:
            failures.append("%s: %s" % (p, e))
            continue
        if not hasattr(cdll, "lj_version_number"):
            failures.append("%s: not libleasejudge (no lj_version_number)" % p)
            continue
        cdll.lj_version_number.restype = ctypes.c_uint
        number = cdll.lj_version_number()
        if number // 10000 != ABI_MAJOR or number < MIN_VERSION:
            raise errors.VersionError(-7, "%s is libleasejudge %d.%d.%d; this package needs %d.x from %d.%d" % (
                p, number // 10000, number // 100 % 100, number % 100, ABI_MAJOR, MIN_VERSION // 100 % 100,
                MIN_VERSION % 100))
        _declare(cdll)
        with _lock:
            _lib = cdll
        return cdll
    raise OSError("libleasejudge could not be loaded: " + "; ".join(failures))


def lib() -> ctypes.CDLL:
    """The loaded library, loading it on first use."""
    cdll = _lib
    return cdll if cdll is not None else load()


def fn(name: str) -> Any:
    """The C function name of the loaded library; UnsupportedError when it has none."""
    f = getattr(lib(), name, None)
    if f is None:
        raise errors.UnsupportedError(-10, "this libleasejudge has no %s" % name)
    return f


# --- calling -------------------------------------------------------------------------

def raise_for(rc: int, err: ctypes.c_void_p, cause: Optional[BaseException] = None) -> None:
    """Raise the exception of code rc with the message of err (freed here)."""
    message = ""
    if err.value:
        raw = lib().lj_error_message(err)
        message = raw.decode("utf-8", "replace") if raw else ""
        lib().lj_error_destroy(err)
        err.value = None
    if not message:
        name = lib().lj_strerror(rc)
        message = name.decode() if name else "error %d" % rc
    if cause is not None:
        raise cause  # a callback's own exception stopped the call
    raise errors.error_for(rc, message)


def call(name: str, *args: Any, ok: tuple[int, ...] = (), cause: Any = None) -> int:
    """Call lj_<...>(args..., &err); raise the code's exception unless it is 0 or in ok.
    A Python exception a callback raised during the call (cause: the Callbacks, or a
    list of them, the call ran) is raised instead."""
    err = ctypes.c_void_p()
    rc = fn(name)(*args, ctypes.byref(err))
    causes = cause if isinstance(cause, (list, tuple)) else [cause]
    raised = next((c.raised for c in causes if c is not None and c.raised is not None), None)
    if rc != 0 and rc not in ok:
        raise_for(rc, err, raised)
    if err.value:
        lib().lj_error_destroy(err)
    if raised is not None:
        raise raised
    return int(rc)


def take(ptr: ctypes.c_void_p, n: ctypes.c_size_t) -> Optional[bytes]:
    """The bytes the library returned at ptr (n long), freed with lj_free."""
    if not ptr.value:
        return None
    try:
        return ctypes.string_at(ptr.value, n.value)
    finally:
        lib().lj_free(ptr)
        ptr.value = None


def call_bytes(name: str, *args: Any, ok: tuple[int, ...] = (), cause: Any = None) -> Optional[bytes]:
    """A call whose first outputs are (char **out, size_t *out_len)."""
    out, n = ctypes.c_void_p(), ctypes.c_size_t()
    try:
        call(name, ctypes.byref(out), ctypes.byref(n), *args, ok=ok, cause=cause)
    finally:
        value = take(out, n)
    return value


def call_text(name: str, *args: Any, ok: tuple[int, ...] = ()) -> Optional[str]:
    value = call_bytes(name, *args, ok=ok)
    return None if value is None else decode(value)


def decode(raw: bytes) -> str:
    """Text the library wrote (UTF-8); stored bytes that are not UTF-8 keep their bytes
    as surrogate escapes."""
    return raw.decode("utf-8", "surrogateescape")


def static_text(raw: Optional[bytes]) -> str:
    return raw.decode("utf-8", "replace") if raw else ""


# --- arguments -----------------------------------------------------------------------

def data(value: Any, name: str) -> bytes:
    """str (as UTF-8) or bytes-like as bytes; TypeError for anything else."""
    if isinstance(value, str):
        try:
            return value.encode("utf-8")
        except UnicodeEncodeError as e:
            raise ValueError("%s is not encodable as UTF-8: %s" % (name, e)) from None
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    raise TypeError("%s must be str or bytes, not %s" % (name, type(value).__name__))


def optional_data(value: Any, name: str) -> Optional[bytes]:
    return None if value is None else data(value, name)


def c_string(value: Any, name: str) -> bytes:
    """A NUL-terminated argument: as data(), refusing an embedded NUL."""
    raw = data(value, name)
    if b"\0" in raw:
        raise ValueError("%s holds a NUL byte" % name)
    return raw


def integer(value: Any, name: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError("%s must be an int, not %s" % (name, type(value).__name__))
    if not low <= value <= high:
        raise ValueError("%s must be in %d..%d, not %d" % (name, low, high, value))
    return value


def int32(value: Any, name: str) -> int:
    return integer(value, name, -(2**31), 2**31 - 1)


def int64(value: Any, name: str) -> int:
    return integer(value, name, -(2**63), 2**63 - 1)


def uint64(value: Any, name: str) -> int:
    return integer(value, name, 0, 2**64 - 1)


def env_block(env: Any, name: str) -> tuple[Any, list[bytes]]:
    """A NULL-terminated char *[] of "NAME=value" from a mapping (kept alive by the
    returned list)."""
    if not hasattr(env, "items"):
        raise TypeError("%s must be a mapping of names to values, not %s" % (name, type(env).__name__))
    items = [c_string(k, name + " name") + b"=" + c_string(v, name + " value") for k, v in env.items()]
    array = (ctypes.c_char_p * (len(items) + 1))(*items, None)
    return ctypes.cast(array, c_void_pp), [array, *items]  # type: ignore[list-item]


# --- callbacks -----------------------------------------------------------------------

class Callbacks:
    """Wraps Python callables for C: the first exception one raises is kept (the C call
    is asked to stop) and raised when the call returns; the ctypes thunks are kept
    alive as long as this object."""

    def __init__(self) -> None:
        self.raised: Optional[BaseException] = None
        self.keep: list[Any] = []

    def wrap(self, cfunctype: Any, body: Callable[..., int]) -> Any:
        def thunk(*args: Any) -> int:
            if self.raised is not None:
                return 1
            try:
                return body(*args)
            except BaseException as e:  # noqa: B902 - carried to the caller, never lost
                self.raised = e
                return 1
        f = cfunctype(thunk)
        self.keep.append(f)
        return f


def at(ptr: Optional[int], n: int) -> bytes:
    return ctypes.string_at(ptr, n) if ptr and n else b""


def call_bytes_after(first: Any, name: str, *args: Any, cause: Any = None) -> Optional[bytes]:
    """A call whose outputs are (first, char **out, size_t *out_len)."""
    out, n = ctypes.c_void_p(), ctypes.c_size_t()
    try:
        call(name, first, ctypes.byref(out), ctypes.byref(n), *args, cause=cause)
    finally:
        value = take(out, n)
    return value


def time_of(value: Any, name: str, per_second: int) -> int:
    """A time argument in the C unit (per_second ticks a second since the epoch): None
    is LJ_TIME_DEFAULT (now, or the call's default), an aware datetime is converted, an
    int is taken as it is (already in the unit)."""
    import datetime as _dt
    if value is None:
        return TIME_DEFAULT
    if isinstance(value, _dt.datetime):
        if value.tzinfo is None:
            raise ValueError("%s must be an aware datetime (with a tzinfo), not a naive one" % name)
        delta = value - _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
        return (delta.days * 86400 + delta.seconds) * per_second + delta.microseconds * per_second // 1000000
    return int64(value, name)


def call_plain(name: str, *args: Any) -> None:
    """A call without lj_error_t ** (an _init): raise the code's exception."""
    rc = fn(name)(*args)
    if rc != 0:
        raise errors.error_for(rc, static_text(lib().lj_strerror(rc)))
