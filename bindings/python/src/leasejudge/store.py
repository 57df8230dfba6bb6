"""Stores: keys with values and revisions, every write at the revision read.

memory_store() lives in this process; file_store(dir) is a directory of files for
locks on one machine; nats_store(urls, bucket) a NATS JetStream key/value bucket;
callback_store(backend) any store a Python object implements (see Backend).
"""
from __future__ import annotations

import ctypes
import os
import threading
import weakref
from dataclasses import dataclass
from typing import Any, Optional, Protocol, Union

from . import _lib
from .errors import ChangedError, ExistsError, NotFoundError, code_of

Text = Union[str, bytes]


@dataclass(frozen=True)
class Entry:
    """One key's value and revision."""
    key: bytes
    value: bytes
    revision: int


class Store:
    """An open store; close() (or the end of a with block) closes it, once nothing
    uses it any more (a Lock keeps its store open). Safe to use from several threads
    where its backend is (memory, file, NATS)."""

    def __init__(self, handle: int, keep: Any = None) -> None:
        self._handle: Optional[int] = handle
        self._keep = keep
        self._mutex = threading.Lock()
        self._beats: Any = weakref.WeakSet()  # the heartbeats renewing locks on it

    def _ptr(self) -> int:
        handle = self._handle
        if handle is None:
            raise ValueError("the store is closed")
        return handle

    def _cause(self) -> Any:
        """The callbacks a call on this store may run (a callback store's)."""
        return None

    def close(self) -> None:
        """Close the store, stopping the heartbeats of locks on it first."""
        for beat in list(self._beats):
            beat.stop()
        with self._mutex:
            handle, self._handle = self._handle, None
        if handle is not None:
            _lib.lib().lj_store_destroy(handle)

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # interpreter shutdown
            pass

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def get(self, key: Text) -> Entry:
        """The key's value and revision. NotFoundError when it holds nothing."""
        k, rev = _lib.data(key, "key"), ctypes.c_uint64()
        out, n = ctypes.c_void_p(), ctypes.c_size_t()
        try:
            _lib.call("lj_store_get", ctypes.byref(out), ctypes.byref(n), ctypes.byref(rev), self._ptr(), k, len(k),
                      cause=self._cause())
        finally:
            value = _lib.take(out, n)
        return Entry(k, value or b"", rev.value)

    def create(self, key: Text, value: Text) -> int:
        """Create-if-absent; the new revision. ExistsError when the key holds a value."""
        k, v, rev = _lib.data(key, "key"), _lib.data(value, "value"), ctypes.c_uint64()
        _lib.call("lj_store_create", ctypes.byref(rev), self._ptr(), k, len(k), v, len(v), cause=self._cause())
        return rev.value

    def update(self, key: Text, value: Text, revision: int) -> int:
        """Update-if-revision; the new revision. ChangedError when the key moved."""
        k, v, rev = _lib.data(key, "key"), _lib.data(value, "value"), ctypes.c_uint64()
        _lib.call("lj_store_update", ctypes.byref(rev), self._ptr(), k, len(k), v, len(v),
                  _lib.uint64(revision, "revision"), cause=self._cause())
        return rev.value

    def delete(self, key: Text, revision: int) -> None:
        """Delete-if-revision. ChangedError when the key moved."""
        k = _lib.data(key, "key")
        _lib.call("lj_store_remove", self._ptr(), k, len(k), _lib.uint64(revision, "revision"), cause=self._cause())

    def keys(self) -> list[bytes]:
        """Every key that holds a value now."""
        found: list[bytes] = []
        cb = _lib.Callbacks()
        each = cb.wrap(_lib.STORE_KEY_FN, lambda key, n, _p: found.append(_lib.at(key, n)) or 0)
        _lib.call("lj_store_keys", self._ptr(), each, None, cause=[cb, self._cause()])
        return found

    def scan(self, prefix: Text = b"") -> list[Entry]:
        """Every key starting with prefix that holds a value, with value and revision."""
        p, found = _lib.data(prefix, "prefix"), []  # type: list[Entry]
        cb = _lib.Callbacks()

        def batch(buf: Optional[int], buf_len: int, _pad: int, entries: Any, count: int, _p: Any) -> int:
            whole = _lib.at(buf, buf_len)
            for i in range(count):
                e = entries[i]
                found.append(Entry(whole[e.key_offset:e.key_offset + e.key_len],
                                   whole[e.value_offset:e.value_offset + e.value_len], int(e.revision)))
            return 0
        _lib.call("lj_store_scan", self._ptr(), p, len(p), cb.wrap(_lib.STORE_BATCH_FN, batch), None,
                  cause=[cb, self._cause()])
        return found


def memory_store() -> Store:
    """An empty store in memory."""
    out = ctypes.c_void_p()
    _lib.call("lj_store_memory_open", ctypes.byref(out))
    return Store(out.value or 0)


def file_store(directory: "Text | os.PathLike[str]") -> Store:
    """The file store in directory (created, one level, when missing). SystemFailureError
    when it cannot be made or is not a directory."""
    raw = _lib.data(os.fspath(directory) if isinstance(directory, os.PathLike) else directory, "directory")
    out = ctypes.c_void_p()
    _lib.call("lj_store_file_open", ctypes.byref(out), raw, len(raw))
    return Store(out.value or 0)


def _set_texts(opts: Any, keep: list[bytes], fields: Any) -> None:
    """Each (field, text) given set as the struct's (pointer, length) pair; the bytes
    kept alive in keep for the call."""
    for fname, value in fields:
        raw = _lib.optional_data(value, fname)
        if raw:
            keep.append(raw)
            setattr(opts, fname, raw)
            setattr(opts, fname + "_len", len(raw))


def nats_store(urls: Optional[Text], bucket: Text, *, create_bucket: bool = False, history: int = 1,
               replicas: int = 1, credentials_file: Optional[Text] = None, tls: bool = False,
               tls_ca_file: Optional[Text] = None, tls_cert_file: Optional[Text] = None,
               tls_key_file: Optional[Text] = None, name: Optional[Text] = None, connect_timeout_ms: int = 0,
               request_timeout_ms: int = 0, list_timeout_ms: int = 0, reconnect_wait_ms: int = 0,
               direct_reads: bool = False) -> Store:
    """A NATS JetStream key/value bucket. urls: comma-separated (None:
    nats://127.0.0.1:4222). Times in ms, 0 the default. StoreError when no server
    answers or the bucket is missing; UnsupportedError when the library was built
    without NATS."""
    opts, keep = _lib.NatsOptions(), [_lib.data(bucket, "bucket")]
    _lib.call_plain("lj_nats_options_init", ctypes.byref(opts), 1)
    opts.bucket, opts.bucket_len = keep[0], len(keep[0])
    _set_texts(opts, keep, (("urls", urls), ("credentials_file", credentials_file), ("tls_ca_file", tls_ca_file),
                            ("tls_cert_file", tls_cert_file), ("tls_key_file", tls_key_file), ("name", name)))
    for fname, ms in (("connect_timeout_ms", connect_timeout_ms), ("request_timeout_ms", request_timeout_ms),
                      ("list_timeout_ms", list_timeout_ms), ("reconnect_wait_ms", reconnect_wait_ms)):
        setattr(opts, fname, _lib.int64(ms, fname))
    opts.tls, opts.direct_reads, opts.create_bucket = int(bool(tls)), int(bool(direct_reads)), int(bool(create_bucket))
    opts.history, opts.replicas = _lib.int32(history, "history"), _lib.int32(replicas, "replicas")
    out = ctypes.c_void_p()
    _lib.call("lj_nats_store_open", ctypes.byref(out), ctypes.byref(opts))
    return Store(out.value or 0)


def open_store(url: str, *, create: bool = False, credentials_file: Optional[Text] = None,
               tls_ca_file: Optional[Text] = None, tls_cert_file: Optional[Text] = None,
               tls_key_file: Optional[Text] = None, refuse_unfenced: bool = False) -> Store:
    """A store by its URL, the library's one grammar (the command's --store): "mem:",
    "file:DIR" or "nats://[user:pass@]host:port[,...]/BUCKET" (tls:// too). A file:
    directory or NATS bucket that does not exist is refused (StoreError), and nothing
    is made, unless create. InvalidArgumentError (a ValueError) for any other text."""
    if not isinstance(url, str):
        raise TypeError("url must be a str, not %s" % type(url).__name__)
    raw = _lib.data(url, "url")
    opts, keep = _lib.StoreUrlOptions(), []
    _lib.call_plain("lj_store_url_options_init", ctypes.byref(opts), 1)
    _set_texts(opts, keep, (("credentials_file", credentials_file), ("tls_ca_file", tls_ca_file),
                            ("tls_cert_file", tls_cert_file), ("tls_key_file", tls_key_file)))
    opts.create, opts.refuse_unfenced = int(bool(create)), int(bool(refuse_unfenced))
    out = ctypes.c_void_p()
    _lib.call("lj_store_open_url", ctypes.byref(out), raw, len(raw), ctypes.byref(opts))
    return Store(out.value or 0)


# --- a store over Python methods -------------------------------------------------------------

class Backend(Protocol):
    """What callback_store() calls. Revisions are the backend's own, > 0, growing per
    key. Raise ChangedError (update, delete: the key is not at revision), ExistsError
    (create: the key holds a value), or any LeasejudgeError for a failure with its
    code; any other exception stops the work and is raised to the caller."""

    def keys(self) -> list[bytes]: ...
    def get(self, key: bytes) -> Optional[tuple[bytes, int]]: ...
    def create(self, key: bytes, value: bytes) -> int: ...
    def update(self, key: bytes, value: bytes, revision: int) -> int: ...
    def delete(self, key: bytes, revision: int) -> None: ...


class _Trampolines(_lib.Callbacks):
    """The C callbacks of a callback store: a LeasejudgeError answers its code, any
    other exception stops the work (kept, raised by the call that ran it)."""

    def __init__(self, backend: Backend) -> None:
        super().__init__()
        self.backend = backend

    def guarded(self, cfunctype: Any, body: Any) -> Any:
        def thunk(*args: Any) -> int:
            try:
                return int(body(*args))
            except (_lib.errors.LeasejudgeError, MemoryError) as e:
                return code_of(e)
            except BaseException as e:  # noqa: B902 - raised to the caller of the store
                if self.raised is None:
                    self.raised = e
                return 1
        f = cfunctype(thunk)
        self.keep.append(f)
        return f

    def keys(self, sink: int, _p: Any) -> int:
        for key in self.backend.keys():
            raw = _lib.data(key, "key")
            rc = _lib.lib().lj_store_sink_key(sink, raw, len(raw))
            if rc != 0:
                return rc
        return 0

    def get(self, sink: int, key: Optional[int], n: int, _p: Any) -> int:
        found = self.backend.get(_lib.at(key, n))
        if found is None:
            return 0
        value, revision = found
        raw = _lib.data(value, "value")
        return int(_lib.lib().lj_store_sink_put(sink, raw, len(raw), _lib.uint64(revision, "revision")))

    def update(self, out: Any, key: Optional[int], n: int, value: Optional[int], vn: int, rev: int, _p: Any) -> int:
        out[0] = _lib.uint64(self.backend.update(_lib.at(key, n), _lib.at(value, vn), rev), "revision")
        return 0

    def create(self, out: Any, key: Optional[int], n: int, value: Optional[int], vn: int, _p: Any) -> int:
        out[0] = _lib.uint64(self.backend.create(_lib.at(key, n), _lib.at(value, vn)), "revision")
        return 0

    def remove(self, key: Optional[int], n: int, rev: int, _p: Any) -> int:
        self.backend.delete(_lib.at(key, n), rev)
        return 0


class CallbackStore(Store):
    """A store whose operations a Python backend does. A Python exception its backend
    raises (other than a LeasejudgeError) is raised by the call that ran it. Used by
    one thread at a time."""

    def __init__(self, backend: Backend) -> None:
        for method in ("keys", "get", "create", "update", "delete"):
            if not callable(getattr(backend, method, None)):
                raise TypeError("the backend has no %s method" % method)
        t = _Trampolines(backend)
        cbs = _lib.StoreCallbacks()
        _lib.call_plain("lj_store_callbacks_init", ctypes.byref(cbs), 2)
        cbs.keys, cbs.get = t.guarded(_lib.KEYS_FN, t.keys), t.guarded(_lib.GET_FN, t.get)
        cbs.update, cbs.create = t.guarded(_lib.UPDATE_FN, t.update), t.guarded(_lib.CREATE_FN, t.create)
        cbs.remove = t.guarded(_lib.REMOVE_FN, t.remove)
        out = ctypes.c_void_p()
        _lib.call("lj_store_from_callbacks", ctypes.byref(out), ctypes.byref(cbs), None)
        super().__init__(out.value or 0, keep=t)
        self._trampolines = t

    def _ptr(self) -> int:
        self._trampolines.raised = None
        return super()._ptr()

    def _cause(self) -> Any:
        return self._trampolines


def callback_store(backend: Backend) -> CallbackStore:
    """A store over backend's keys, get, create, update and delete."""
    return CallbackStore(backend)


__all__ = ["Entry", "Store", "Backend", "CallbackStore", "memory_store", "file_store", "nats_store", "open_store",
           "callback_store", "ChangedError", "ExistsError", "NotFoundError"]
