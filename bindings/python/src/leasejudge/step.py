"""Steps and sweeps: the plan of one key, the plan over bytes of JSON lines (what
`leasejudge step plan` reads), and sweeps over a store (EndStale, EndOne).

Times are nanoseconds since the Unix epoch (int) or aware datetimes; None is the
default (now, or this process's start for before).
"""
from __future__ import annotations

import ctypes
import json
from dataclasses import dataclass, fields, replace
from enum import IntEnum
from typing import Any, Callable, Optional, Union

from . import _lib
from .identity import HolderState
from .lock import _owner_state
from .store import Store

Text = Union[str, bytes]
Time = Any  # int nanoseconds, an aware datetime, or None (the default)

#: The why of a step a previous process left running.
RESTART_REASON = "the build module restarted while it ran"


class StepAction(IntEnum):
    LEAVE = 0
    END = 1     # rewritten as failed
    DELETE = 2  # a pulled ask, left to its stream's redelivery

    @property
    def label(self) -> str:
        return _lib.static_text(_lib.lib().lj_step_action_name(int(self)))


class StepReason(IntEnum):
    """Why a key got its action; the numbers never change. .code: "owner-not-self", ..."""
    OTHER_NODE = 0
    NO_VALUE = 1
    NO_STEP = 2
    NOT_RUNNING = 3
    OWNED_BY_SELF = 4
    OWNER_NOT_SELF = 5
    OWNER_GONE = 6
    OWNER_ALIVE = 7
    OWNER_UNKNOWN = 8
    ASK_WITHIN_BOUND = 9
    ASK_PAST_BOUND = 10
    STARTED_BEFORE = 11
    STARTED_SINCE = 12
    UNDER_MIN_AGE = 13

    @property
    def code(self) -> str:
        return _lib.static_text(_lib.lib().lj_step_reason_name(int(self)))


class StepRule(IntEnum):
    """The owner rule (lj_step_rule_t); also by name: "not-self", "provably-dead", "by-owner"."""
    NOT_SELF = 0        # every owner but the caller's token is gone (the seed); needs an owner
    PROVABLY_DEAD = 1   # only owners proven gone: dead, recycled, other boot
    BY_OWNER = 2        # the library's default: not-self with an owner named, provably-dead without

    @classmethod
    def _missing_(cls, value: object) -> "Optional[StepRule]":
        if isinstance(value, str):
            return cls.__members__.get(value.upper().replace("-", "_"))
        return None


class SweepOutcome(IntEnum):
    LEFT = 0
    PLANNED = 1
    DONE = 2
    CHANGED = 3
    FAILED = 4
    UNKNOWN = 5   # no acknowledgement came: the write may have landed
    NOT_SENT = 6

    @property
    def label(self) -> str:
        return _lib.static_text(_lib.lib().lj_sweep_outcome_name(int(self)))


@dataclass(frozen=True)
class StepVerdict:
    """One key's plan: its action and reason, the why written into an ended step, what
    the sweep's log says of its owner, and an ask's bound (ns; 0 for none)."""
    action: StepAction
    reason: StepReason
    why: str
    said: str
    bound_ns: int = 0


@dataclass(frozen=True)
class PlanSummary:
    ends: int = 0
    deletes: int = 0
    leaves: int = 0
    no_step: int = 0
    other_node: int = 0
    malformed: int = 0

    def text(self) -> str:
        """The summary line `leasejudge step plan` writes on stderr."""
        c = _lib.PlanSummary(self.ends, self.deletes, self.leaves, self.no_step, self.other_node, self.malformed)
        return _lib.call_text("lj_step_plan_summary_format", ctypes.byref(c)) or ""


@dataclass(frozen=True)
class LinesPlan:
    """The answer of plan_lines: one JSON line per input line, and the counts."""
    output: bytes
    summary: PlanSummary

    def lines(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.output.splitlines() if line]


def _summary(c: _lib.PlanSummary) -> PlanSummary:
    return PlanSummary(c.ends, c.deletes, c.leaves, c.no_step, c.other_node, c.malformed)


@dataclass(frozen=True)
class ResolvedRules:
    """What the library makes of Rules: the rule it judges by (NOT_SELF or
    PROVABLY_DEAD), the owner token "self" is, and why, as a person reads it."""
    rule: StepRule
    owner: str
    why: str


@dataclass(frozen=True)
class Rules:
    """The rules a plan or a sweep judges by: built once, handed to plan_step,
    plan_lines, sweep and end_one alike (lj_step_rules_t). A field left None takes the
    library's default (lj_step_rules_init): no node (a plan needs one; a sweep takes
    its own, and node must then be None or the same), self_pid's owner token and its
    start for before (self_pid: this process), the system clock, a bound of an hour,
    the rule BY_OWNER, a start tolerance of 5 s, owners judged on this node. resolve()
    says what the library makes of them."""
    node: Optional[Text] = None
    owner: Optional[Text] = None
    before: Time = None
    now: Time = None
    bound_ms: Optional[int] = None
    rule: "StepRule | str | None" = None
    start_tolerance_ms: Optional[int] = None
    owner_state: Optional[Callable[[str], HolderState]] = None
    # A running step started less than this before now is left, whoever owns it
    # (StepReason.UNDER_MIN_AGE): a guard when a node's boot time is in doubt.
    min_age_ms: Optional[int] = None
    # Whose owner token "self" is when no owner is named, and whose start the default
    # before is: a process acting for another (a shell's pid).
    self_pid: Optional[int] = None

    def _rules(self) -> tuple[_lib.StepRules, list[bytes]]:
        """The given fields over lj_step_rules_init's defaults, and the bytes the
        struct points at, to keep while it is used."""
        r = _lib.StepRules()
        _lib.call_plain("lj_step_rules_init", ctypes.byref(r), _lib.STEP_RULES_VERSION)
        node, owner = _lib.optional_data(self.node, "node"), _lib.optional_data(self.owner, "owner")
        if node:
            r.node, r.node_len = node, len(node)
        if owner:
            r.owner, r.owner_len = owner, len(owner)
        r.before_ns, r.now_ns = _lib.time_of(self.before, "before", 10**9), _lib.time_of(self.now, "now", 10**9)
        if self.bound_ms is not None:
            r.bound_ms = _lib.int64(self.bound_ms, "bound_ms")
        if self.rule is not None:
            r.rule = int(StepRule(self.rule))
        if self.start_tolerance_ms is not None:
            r.start_tolerance_ms = _lib.int64(self.start_tolerance_ms, "start_tolerance_ms")
        if self.min_age_ms is not None:
            r.min_age_ms = _lib.int64(self.min_age_ms, "min_age_ms")
        if self.self_pid is not None:
            r.self_pid = _lib.int64(self.self_pid, "self_pid")
        return r, [b for b in (node, owner) if b]

    def _into(self, opts: Any, cb: _lib.Callbacks) -> list[bytes]:
        """The rules written into opts (either options struct: both hold them as rules,
        the owner_state callback beside them); the bytes opts points at, to keep."""
        opts.rules, kept = self._rules()
        if self.owner_state is not None:
            opts.owner_state = cb.wrap(_lib.OWNER_STATE_FN, _owner_state(self.owner_state))
        return kept

    def resolve(self) -> ResolvedRules:
        """The rule the library judges by, the owner token and why, as a plan resolves
        them (out of the owners' processes). InvalidError for rules a plan refuses (no
        node, a node holding '.', an owner that is no owner token, NOT_SELF with no owner
        named, ...); NotFoundError for a self_pid of no process."""
        r, _kept = self._rules()
        rule = ctypes.c_int()
        owner, owner_n, why, why_n = ctypes.c_void_p(), ctypes.c_size_t(), ctypes.c_void_p(), ctypes.c_size_t()
        try:
            _lib.call("lj_step_rules_resolve", ctypes.byref(rule), ctypes.byref(owner), ctypes.byref(owner_n),
                      ctypes.byref(why), ctypes.byref(why_n), ctypes.byref(r))
        finally:
            owner_text, why_text = _lib.take(owner, owner_n) or b"", _lib.take(why, why_n) or b""
        return ResolvedRules(StepRule(rule.value), _lib.decode(owner_text), _lib.decode(why_text))


def _rules_of(rules: Optional[Rules], **given: Any) -> Rules:
    """rules (None: the defaults) with the fields a call names beside it."""
    if rules is not None and not isinstance(rules, Rules):
        raise TypeError("rules must be Rules, not %s" % type(rules).__name__)
    named = {f.name: given[f.name] for f in fields(Rules) if given.get(f.name) is not None}
    return replace(rules or Rules(), **named)


class _Planning:
    """The lj_step_plan_options_t of one call."""

    def __init__(self, rules: Rules, threads: int) -> None:
        self.cb = _lib.Callbacks()
        self.opts = _lib.PlanOptions()
        _lib.call_plain("lj_step_plan_options_init", ctypes.byref(self.opts), _lib.STEP_PLAN_OPTIONS_VERSION)
        self.kept = rules._into(self.opts, self.cb)
        self.opts.threads = _lib.integer(threads, "threads", 0, 2**32 - 1)


def _why_of(action: _lib.StepAction) -> str:
    buf = ctypes.create_string_buffer(128)
    n = ctypes.c_size_t()
    _lib.call("lj_step_why", buf, len(buf), ctypes.byref(n), ctypes.byref(action))
    return _lib.decode(buf.raw[:n.value])


def plan_step(key: Text, value: Optional[Text], *, node: Optional[Text] = None, rules: Optional[Rules] = None,
              owner: Optional[Text] = None, before: Time = None, now: Time = None, bound_ms: Optional[int] = None,
              rule: "StepRule | str | None" = None, start_tolerance_ms: Optional[int] = None,
              owner_state: Optional[Callable[[str], HolderState]] = None) -> StepVerdict:
    """Plan one key and its value (None or empty: the key holds none) by rules, and the
    fields of Rules named beside it. A value that is no step is a verdict (NO_STEP), not
    an error."""
    k, v = _lib.data(key, "key"), _lib.optional_data(value, "value") or b""
    r = _rules_of(rules, node=node, owner=owner, before=before, now=now, bound_ms=bound_ms, rule=rule,
                  start_tolerance_ms=start_tolerance_ms, owner_state=owner_state)
    p = _Planning(r, 1)
    action = _lib.StepAction()
    why, why_n, said, said_n = ctypes.c_void_p(), ctypes.c_size_t(), ctypes.c_void_p(), ctypes.c_size_t()
    try:
        _lib.call("lj_step_plan", ctypes.byref(action), ctypes.byref(why), ctypes.byref(why_n), ctypes.byref(said),
                  ctypes.byref(said_n), k, len(k), v, len(v), ctypes.byref(p.opts), cause=p.cb)
    finally:
        why_text, said_text = _lib.take(why, why_n) or b"", _lib.take(said, said_n) or b""
    return StepVerdict(StepAction(action.action), StepReason(action.reason), _lib.decode(why_text),
                       _lib.decode(said_text), action.bound_sec * 10**9 + action.bound_nsec)


def plan_lines(data: Text, *, node: Optional[Text] = None, rules: Optional[Rules] = None,
               owner: Optional[Text] = None, before: Time = None, now: Time = None, bound_ms: Optional[int] = None,
               rule: "StepRule | str | None" = None, start_tolerance_ms: Optional[int] = None,
               owner_state: Optional[Callable[[str], HolderState]] = None, threads: int = 1) -> LinesPlan:
    """The plan of `leasejudge step plan` over bytes of JSON lines
    {"key":"<node>.<id>","revision":N,"value":...}: one answer line per input line."""
    raw = _lib.data(data, "data")
    r = _rules_of(rules, node=node, owner=owner, before=before, now=now, bound_ms=bound_ms, rule=rule,
                  start_tolerance_ms=start_tolerance_ms, owner_state=owner_state)
    p = _Planning(r, threads)
    summary = _lib.PlanSummary()
    out = _lib.call_bytes("lj_step_plan_lines", ctypes.byref(summary), raw, len(raw), ctypes.byref(p.opts),
                          cause=p.cb)
    return LinesPlan(out or b"", _summary(summary))


def step_key(node: Text, id: Text) -> str:
    """"<node>.<id>". InvalidArgumentError for an empty node or id, or a '.' in node."""
    n, i = _lib.data(node, "node"), _lib.data(id, "id")
    return _lib.call_text("lj_step_key", n, len(n), i, len(i)) or ""


def end_value(value: Text, why: Text, ended: Time = None) -> bytes:
    """The step value ended as failed with why; every other byte kept."""
    v, w = _lib.data(value, "value"), _lib.data(why, "why")
    return _lib.call_bytes("lj_step_end_value", v, len(v), w, len(w), _lib.time_of(ended, "ended", 10**9)) or b""


# --- sweeps ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class SweepCounts:
    ends: int = 0
    deletes: int = 0
    changed: int = 0
    leaves: int = 0
    no_step: int = 0
    other_node: int = 0


@dataclass(frozen=True)
class SweepWrite:
    """One end or delete a sweep sent, and what became of it."""
    key: bytes
    action: StepAction
    outcome: SweepOutcome
    revision: int


@dataclass(frozen=True)
class SweepKey:
    """A key a sweep read, with its verdict and outcome (on_key gets each): a key left
    when planned, an end or delete when its outcome is known (planned, in a dry run).
    Texts are "" where the key has none (error: what the store said)."""
    key: bytes
    id: str
    tool: str
    owner: str
    why: str
    said: str
    error: str
    action: StepAction
    reason: StepReason
    revision: int
    outcome: SweepOutcome


def _sweep_key(ptr: int) -> SweepKey:
    lib, n = _lib.lib(), ctypes.c_size_t()

    def text(field: int) -> bytes:
        return _lib.at(lib.lj_sweep_key_text(ptr, field, ctypes.byref(n)), n.value)
    action, rev, outcome = _lib.StepAction(), ctypes.c_uint64(), ctypes.c_int()
    _lib.call_plain("lj_sweep_key_verdict", ctypes.byref(action), ctypes.byref(rev), ctypes.byref(outcome), ptr)
    return SweepKey(text(0), *(_lib.decode(text(f)) for f in range(1, 7)), StepAction(action.action),
                    StepReason(action.reason), rev.value, SweepOutcome(outcome.value))


@dataclass(frozen=True)
class SweepReport:
    """What a sweep did: the ids ended or deleted, in order, its counts, every write
    with its outcome, and what stopped it (code 0: nothing)."""
    ended: list[str]
    counts: SweepCounts
    writes: list[SweepWrite]
    code: int
    message: str


def _report(ptr: int) -> SweepReport:
    lib = _lib.lib()
    n = ctypes.c_size_t()
    ended = []
    for i in range(lib.lj_sweep_report_ended_count(ptr)):
        text = lib.lj_sweep_report_ended(ptr, i, ctypes.byref(n))
        ended.append(_lib.decode(_lib.at(text, n.value)))
    counts = _lib.SweepCounts()
    lib.lj_sweep_report_counts(ctypes.byref(counts), ptr)
    writes = []
    for i in range(lib.lj_sweep_report_write_count(ptr)):
        key, action, outcome, rev = ctypes.c_void_p(), ctypes.c_int(), ctypes.c_int(), ctypes.c_uint64()
        lib.lj_sweep_report_write(ctypes.byref(key), ctypes.byref(n), ctypes.byref(action), ctypes.byref(outcome),
                                  ctypes.byref(rev), ptr, i)
        writes.append(SweepWrite(_lib.at(key.value, n.value), StepAction(action.value), SweepOutcome(outcome.value),
                                 rev.value))
    return SweepReport(ended, SweepCounts(counts.ends, counts.deletes, counts.changed, counts.leaves, counts.no_step,
                                          counts.other_node), writes, lib.lj_sweep_report_code(ptr),
                       _lib.static_text(lib.lj_sweep_report_message(ptr)))


class _Sweeping:
    """The lj_sweep_options_t of one call."""

    def __init__(self, rules: Rules, log: Optional[Callable[[str], Any]], live: Optional[Callable[[str], bool]],
                 write_window: Optional[int] = None, batch_keys: Optional[int] = None, dry_run: bool = False,
                 on_key: Optional[Callable[[SweepKey], Any]] = None) -> None:
        self.cb = _lib.Callbacks()
        self.opts = _lib.SweepOptions()
        _lib.call_plain("lj_sweep_options_init", ctypes.byref(self.opts), _lib.SWEEP_OPTIONS_VERSION)
        self.kept = rules._into(self.opts, self.cb)
        if write_window is not None:
            self.opts.write_window = _lib.integer(write_window, "write_window", 0, 2**32 - 1)
        if batch_keys is not None:
            self.opts.batch_keys = _lib.integer(batch_keys, "batch_keys", 0, 2**32 - 1)
        self.opts.dry_run = int(bool(dry_run))
        if log is not None:
            self.opts.log = self.cb.wrap(_lib.LOG_FN, lambda line, n, _p: 1 if log(_lib.decode(
                _lib.at(line, n))) is False else 0)
        if live is not None:
            def run_live(out: Any, id: Optional[int], n: int, _p: Any) -> int:
                answer = live(_lib.decode(_lib.at(id, n)))
                if not isinstance(answer, bool):
                    raise TypeError("live must return a bool, not %s" % type(answer).__name__)
                out[0] = int(answer)
                return 0
            self.opts.live = self.cb.wrap(_lib.LIVE_FN, run_live)
        if on_key is not None:
            self.opts.on_key = self.cb.wrap(_lib.ON_KEY_FN, lambda key, _p: 1 if on_key(_sweep_key(key)) is False
                                            else 0)


def sweep(store: Store, node: Text, *, rules: Optional[Rules] = None, before: Time = None,
          owner: Optional[Text] = None, now: Time = None, bound_ms: Optional[int] = None,
          rule: "StepRule | str | None" = None, start_tolerance_ms: Optional[int] = None,
          owner_state: Optional[Callable[[str], HolderState]] = None, log: Optional[Callable[[str], Any]] = None,
          on_key: Optional[Callable[[SweepKey], Any]] = None, write_window: Optional[int] = None,
          batch_keys: Optional[int] = None, dry_run: bool = False) -> SweepReport:
    """The seed's EndStale: end node's steps no process runs any more, every write at
    the revision read. log(line) gets each line of the sweep's log, on_key(key) each key
    read with its verdict and outcome (either returning False stops the sweep:
    StoppedError). An error that stopped the sweep is raised with .report, what was
    done before it."""
    if not isinstance(store, Store):
        raise TypeError("store must be a Store, not %s" % type(store).__name__)
    n = _lib.data(node, "node")
    r = _rules_of(rules, owner=owner, before=before, now=now, bound_ms=bound_ms, rule=rule,
                  start_tolerance_ms=start_tolerance_ms, owner_state=owner_state)
    s = _Sweeping(r, log, None, write_window, batch_keys, dry_run, on_key)
    out = ctypes.c_void_p()
    try:
        try:
            _lib.call("lj_sweep_stale", ctypes.byref(out), store._ptr(), n, len(n), ctypes.byref(s.opts),
                      cause=[s.cb, store._cause()])
        except BaseException as e:
            if out.value:
                e.report = _report(out.value)  # type: ignore[attr-defined]
            raise
        return _report(out.value) if out.value else SweepReport([], SweepCounts(), [], 0, "")
    finally:
        _lib.lib().lj_sweep_report_destroy(out)


def end_one(store: Store, node: Text, id: Text, why: Text, *, rules: Optional[Rules] = None,
            owner: Optional[Text] = None, before: Time = None, now: Time = None,
            live: Optional[Callable[[str], bool]] = None, log: Optional[Callable[[str], Any]] = None) -> bytes:
    """The seed's EndOne: end node's running step id (or key) as failed with why; the
    value written. RefusedError: not running, this process's, or live(id) said so;
    NotFoundError, ParseError (no step), ChangedError (moved while ended)."""
    if not isinstance(store, Store):
        raise TypeError("store must be a Store, not %s" % type(store).__name__)
    n, i, w = _lib.data(node, "node"), _lib.data(id, "id"), _lib.data(why, "why")
    s = _Sweeping(_rules_of(rules, owner=owner, before=before, now=now), log, live)
    step = ctypes.c_void_p()
    try:
        return _lib.call_bytes_after(ctypes.byref(step), "lj_sweep_end_one", store._ptr(), n, len(n), i, len(i), w,
                                     len(w), ctypes.byref(s.opts), cause=[s.cb, store._cause()]) or b""
    finally:
        _lib.lib().lj_step_destroy(step)
