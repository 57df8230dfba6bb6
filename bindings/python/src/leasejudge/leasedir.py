"""Lease directories: the workflow leases several sessions keep on one shared
checkout, byte-compatible with the gstack-lease script. Each verb returns the lines
the script prints and its exit code."""
from __future__ import annotations

import ctypes
import os
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any, Callable, Mapping, Optional, Sequence, Union

from . import _lib

Text = Union[str, bytes]

STDOUT = 1
STDERR = 2


class LeaseState(IntEnum):
    ALIVE = 0
    DEAD = 1
    STALE = 2


@dataclass(frozen=True)
class LeaseOutput:
    """A verb's exit code (the script's: 0, 1 live found none, 2 usage, 3 lock) and the
    lines it printed, each (STDOUT or STDERR, text) in order."""
    exit_code: int
    lines: list[tuple[int, str]] = field(default_factory=list)

    @property
    def stdout(self) -> list[str]:
        return [t for s, t in self.lines if s == STDOUT]

    @property
    def stderr(self) -> list[str]:
        return [t for s, t in self.lines if s == STDERR]


@dataclass
class LeaseOptions:
    """lj_leasedir_options_t. lock_tries -1: LEASEJUDGE_LEASE_LOCK_TRIES, else
    GSTACK_LEASE_LOCK_TRIES, else 300. environment None: this process's.
    interrupted() is polled while the lock is awaited; True stops the verb."""
    lock_tries: int = -1
    lock_time_limit_s: int = 30
    lock_retry_ms: int = 100
    shared_harness: Optional[Text] = None
    self_pid: int = 0
    environment: Optional[Mapping[str, str]] = None
    interrupted: Optional[Callable[[], bool]] = None


class _Verb:
    """One verb's options and line collector."""

    def __init__(self, options: Optional[LeaseOptions]) -> None:
        o = options if options is not None else LeaseOptions()
        if not isinstance(o, LeaseOptions):
            raise TypeError("options must be LeaseOptions, not %s" % type(o).__name__)
        self.cb, self.keep, self.lines = _lib.Callbacks(), [], []  # type: ignore[var-annotated]
        self.opts = _lib.LeasedirOptions()
        _lib.call_plain("lj_leasedir_options_init", ctypes.byref(self.opts), 1)
        self.opts.lock_tries = _lib.int64(o.lock_tries, "lock_tries")
        self.opts.lock_time_limit_s = _lib.int64(o.lock_time_limit_s, "lock_time_limit_s")
        self.opts.lock_retry_ms = _lib.int64(o.lock_retry_ms, "lock_retry_ms")
        self.opts.self_pid = _lib.int32(o.self_pid, "self_pid")
        if o.shared_harness is not None:
            raw = _lib.c_string(o.shared_harness, "shared_harness")
            self.keep.append(raw)
            self.opts.shared_harness = raw
        if o.environment is not None:
            self.opts.environment, kept = _lib.env_block(o.environment, "environment")
            self.keep.append(kept)
        if o.interrupted is not None:
            stop = o.interrupted
            self.opts.interrupted = self.cb.wrap(_lib.LEASE_INTERRUPTED_FN, lambda _p: 1 if stop() else 0)
        self.line = self.cb.wrap(_lib.LEASE_LINE_FN, self._line)

    def _line(self, stream: int, text: Optional[int], n: int, _p: Any) -> int:
        self.lines.append((stream, _lib.decode(_lib.at(text, n))))
        return 0

    def run(self, name: str, *args: Any) -> LeaseOutput:
        code = ctypes.c_int(-1)
        _lib.call(name, ctypes.byref(code), *args, self.line, None, ctypes.byref(self.opts), cause=self.cb)
        return LeaseOutput(code.value, list(self.lines))


def run_lease_command(args: Sequence[Text], default_root: Optional[Text] = None, default_pid: Optional[Text] = None,
                      options: Optional[LeaseOptions] = None) -> LeaseOutput:
    """The lease command as the script parses it: the verb ("touch", "live", "list")
    then its options (--root R, --pid P, --from P, --exclude-ancestry-of P,
    --count-shared-harness)."""
    if isinstance(args, (str, bytes)) or not isinstance(args, Sequence):
        raise TypeError("args must be a sequence of str or bytes")
    raw = [_lib.c_string(a, "args[%d]" % i) for i, a in enumerate(args)]
    array = (ctypes.c_char_p * max(len(raw), 1))(*raw)
    root = None if default_root is None else _lib.c_string(default_root, "default_root")
    pid = None if default_pid is None else _lib.c_string(default_pid, "default_pid")
    verb = _Verb(options)
    return verb.run("lj_leasedir_run", ctypes.cast(array, _lib.c_void_pp), len(raw), root, pid)


def lease_dir_path(root: "Text | os.PathLike[str]", options: Optional[LeaseOptions] = None) -> str:
    """The lease directory of the checkout at root. NotFoundError: not a git checkout."""
    raw = _lib.data(os.fspath(root) if isinstance(root, os.PathLike) else root, "root")
    verb = _Verb(options)
    return _lib.call_text("lj_leasedir_path", raw, len(raw), ctypes.byref(verb.opts)) or ""


@dataclass(frozen=True)
class LeaseDir:
    """A lease directory and its verbs."""
    path: str
    options: Optional[LeaseOptions] = None

    @classmethod
    def of(cls, root: "Text | os.PathLike[str]", options: Optional[LeaseOptions] = None) -> "LeaseDir":
        return cls(lease_dir_path(root, options), options)

    def _dir(self) -> bytes:
        return _lib.data(self.path, "path")

    def touch(self, pid: Union[int, Text]) -> LeaseOutput:
        """Write pid's identity as its lease and prune, under the lock."""
        p = _lib.data(str(_lib.int32(pid, "pid")) if isinstance(pid, int) else pid, "pid")
        d = self._dir()
        return _Verb(self.options).run("lj_leasedir_touch", d, len(d), p, len(p))

    def live(self, exclude: Union[int, Text, None] = None, count_shared_harness: bool = False) -> LeaseOutput:
        """Leases of live processes outside exclude's ancestry (stale ones reclaimed)."""
        e = b"" if exclude is None else _lib.data(str(_lib.int32(exclude, "exclude")) if isinstance(exclude, int)
                                                  else exclude, "exclude")
        d = self._dir()
        return _Verb(self.options).run("lj_leasedir_live", d, len(d), e, len(e), int(bool(count_shared_harness)))

    def list(self) -> LeaseOutput:
        """`<pid> <age>m alive|dead|stale` per lease."""
        d = self._dir()
        return _Verb(self.options).run("lj_leasedir_list", d, len(d))


def lease_state(pid: Text, record: Text, age_min: int, options: Optional[LeaseOptions] = None) -> LeaseState:
    """The state of one lease as list judges it."""
    p, r = _lib.data(pid, "pid"), _lib.data(record, "record")
    verb = _Verb(options)
    out = ctypes.c_int(-1)
    _lib.call("lj_leasedir_state", ctypes.byref(out), p, len(p), r, len(r), _lib.int64(age_min, "age_min"),
              ctypes.byref(verb.opts))
    return LeaseState(out.value)
