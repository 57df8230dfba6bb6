/*
 * leasejudge C ABI: stores (included by leasejudge.h).
 *
 * A store holds keys with values and revisions. Every write names the revision it
 * read, and a write that finds the key moved says LJ_ECHANGED instead of
 * overwriting; create-if-absent says LJ_EEXISTS when the key holds a value. Locks
 * and sweeps act only through an lj_store_t:
 *   - lj_store_memory_open: in this process (tests, benchmarks);
 *   - lj_store_file_open: a directory of files, for locks on one machine (one file
 *     per key holding "lj1 <revision>\n" and the value; writes under flock(2));
 *   - lj_store_from_callbacks: any store the caller has (a database, a Go value);
 *   - lj_nats_store_open (lj_nats.h): a NATS JetStream key/value bucket;
 *   - lj_store_open_url: any of these by its URL, the one grammar of every door.
 * An lj_store_t may be used from several threads at once when its backend can:
 * the memory and file stores can; a callback store can when its callbacks can.
 */
#ifndef LEASEJUDGE_LJ_STORE_H
#define LEASEJUDGE_LJ_STORE_H

#include "leasejudge/lj_common.h"

/* A store: opaque; lj_store_destroy closes it. */
typedef struct lj_store_t lj_store_t;

/* Where one entry's key and value sit in a batch buffer (offsets from its start):
 * what lj_store_scan hands over and lj_step_plan_batch plans. */
typedef struct lj_step_entry_t {
  uint64_t key_offset;
  uint64_t value_offset;
  uint32_t key_len;
  uint32_t value_len; /* 0: the key holds no value */
  uint64_t revision;
} lj_step_entry_t;

/* Where a store callback hands values back; the library copies what it is given,
 * so the callback's memory may be freed as soon as the call returns. A sink lives
 * only during the callback it was passed to. */
typedef struct lj_store_sink_t lj_store_sink_t;

#ifdef __cplusplus
extern "C" {
#endif

/* From a get callback: the key holds value at revision (> 0). Call at most once;
 * not calling it says the key holds nothing. LJ_EINVAL for a revision of 0 or a
 * second call. */
LJ_API int lj_store_sink_put(lj_store_sink_t *sink, const char *value, size_t value_len,
                             uint64_t revision);
/* From a keys callback: one key that holds a value (call once per key). */
LJ_API int lj_store_sink_key(lj_store_sink_t *sink, const char *key, size_t key_len);
/* From a scan callback: one key under the prefix, its value and revision (> 0), each
 * key once. A non-zero return (LJ_EUSER: the reader stopped; or the code of a failure
 * while the batch was used) asks the callback to stop and return it. LJ_EINVAL for
 * a revision of 0 or a key outside the prefix. */
LJ_API int lj_store_sink_entry(lj_store_sink_t *sink, const char *key, size_t key_len, const char *value,
                               size_t value_len, uint64_t revision);

/*
 * A store made of the caller's functions. Each returns LJ_OK, or:
 *   - update, remove: LJ_ECHANGED when the key is not at revision (or is gone);
 *   - create: LJ_EEXISTS when the key holds a value;
 *   - any other negative LJ_E* code (LJ_ESTORE for a store that is down, ...):
 *     the operation failed with that code;
 *   - a positive value: stop; the work in progress returns LJ_EUSER.
 * Revisions are the store's own, > 0, and should only grow for a key (a lock's
 * fencing token is its revision). All five functions are required; release may
 * be NULL.
 */
#define LJ_STORE_CALLBACKS_VERSION 2
typedef struct lj_store_callbacks_t {
  uint32_t version; /* LJ_STORE_CALLBACKS_VERSION */
  int (*keys)(lj_store_sink_t *sink, void *payload);
  int (*get)(lj_store_sink_t *sink, const char *key, size_t key_len, void *payload);
  int (*update)(uint64_t *out_revision, const char *key, size_t key_len, const char *value,
                size_t value_len, uint64_t revision, void *payload);
  int (*create)(uint64_t *out_revision, const char *key, size_t key_len, const char *value,
                size_t value_len, void *payload);
  int (*remove)(const char *key, size_t key_len, uint64_t revision, void *payload);
  /* Called with payload when the store is destroyed (or when creating it fails). */
  void (*release)(void *payload);
  /* Version 2. A bulk read, optional: every key starting with prefix that holds a
   * value, each through lj_store_sink_entry. NULL: keys and a get of each. */
  int (*scan)(lj_store_sink_t *sink, const char *prefix, size_t prefix_len, void *payload);
} lj_store_callbacks_t;
#define LJ_STORE_CALLBACKS_INIT {LJ_STORE_CALLBACKS_VERSION, NULL, NULL, NULL, NULL, NULL, NULL, NULL}
LJ_API int lj_store_callbacks_init(lj_store_callbacks_t *callbacks, uint32_t version);

/* A store over callbacks (copied) and payload (borrowed until destroy, when
 * release gets it). LJ_EINVAL when a required function is NULL; LJ_EVERSION. */
LJ_API int lj_store_from_callbacks(lj_store_t **out, const lj_store_callbacks_t *callbacks,
                                   void *payload, lj_error_t **err);
/* An empty store in memory. */
LJ_API int lj_store_memory_open(lj_store_t **out, lj_error_t **err);
/* The file store in directory dir (created, one level, when missing). LJ_EIO when
 * it cannot be made or is not a directory. */
LJ_API int lj_store_file_open(lj_store_t **out, const char *dir, size_t dir_len, lj_error_t **err);

/*
 * A store by its URL, the grammar the command, the bash builtin and the Go, Python
 * and Node packages all open stores with:
 *   mem:                                          a store in this process, empty
 *   file:DIR                                      a directory of files
 *   nats://[user:pass@]host:port[,host:port...]/BUCKET   a NATS bucket (tls:// for TLS)
 *   etcd://[user:pass@]host:port[,host:port...]/PREFIX   an etcd v3 cluster's keys under
 *                                                 PREFIX/ (TLS with the tls_* files)
 * A store that is not there is refused, never made, unless create is set: a file:
 * directory that does not exist, a NATS bucket that does not exist (LJ_ESTORE,
 * naming it, and how to ask for creation: create_name, the caller's own spelling). Any
 * other text, a NUL byte in it, or an option that is no path: LJ_EINVAL saying which
 * form it misses. Messages show a password as ***.
 */
#define LJ_STORE_URL_OPTIONS_VERSION 2
typedef struct lj_store_url_options_t {
  uint32_t version; /* LJ_STORE_URL_OPTIONS_VERSION */
  int32_t create;   /* non-zero: make a missing file: directory (one level) or NATS
                       bucket (one replica, history 1). Default 0. */
  /* NATS (the tls_* files etcd too; ignored by the other stores); (pointer, length),
     NULL or 0: not set. */
  const char *credentials_file;
  size_t credentials_file_len;
  const char *tls_ca_file;
  size_t tls_ca_file_len;
  const char *tls_cert_file;
  size_t tls_cert_file_len;
  const char *tls_key_file;
  size_t tls_key_file_len;
  int32_t refuse_unfenced; /* as lj_nats_options_t's */
  void (*note)(const char *line, size_t line_len, void *payload); /* as lj_nats_options_t's */
  void *note_payload;
  /* Version 2. How the caller asks for creation, named by the message of a store that
   * does not exist: the command's "--create-bucket", a package's "create=True". NULL
   * or 0: "creation". (pointer, length), no NUL. */
  const char *create_name;
  size_t create_name_len;
} lj_store_url_options_t;
#define LJ_STORE_URL_OPTIONS_INIT \
  {LJ_STORE_URL_OPTIONS_VERSION, 0, NULL, 0, NULL, 0, NULL, 0, NULL, 0, 0, NULL, NULL, NULL, 0}
/* Fill opts with the defaults. LJ_EINVAL for NULL; LJ_EVERSION for an unknown version. */
LJ_API int lj_store_url_options_init(lj_store_url_options_t *opts, uint32_t version);
/* Open the store url names (url_len bytes; opts NULL: the defaults). *out is the
 * caller's, closed with lj_store_destroy. LJ_EINVAL for NULL out or url, and as
 * above; LJ_ESTORE, LJ_EIO when the store cannot be opened; LJ_EUNSUPPORTED for a
 * NATS URL in a build without NATS. */
LJ_API int lj_store_open_url(lj_store_t **out, const char *url, size_t url_len, const lj_store_url_options_t *opts,
                             lj_error_t **err);

/* Close the store; NULL does nothing. */
LJ_API void lj_store_destroy(lj_store_t *store);

/* The operations themselves, for callers that keep their own records in a store.
 * get: *out_value (caller's, lj_free) and *out_revision; LJ_ENOTFOUND when the key
 * holds nothing. */
LJ_API int lj_store_get(char **out_value, size_t *out_len, uint64_t *out_revision, lj_store_t *store,
                        const char *key, size_t key_len, lj_error_t **err);
/* Create-if-absent; the new revision (out_revision may be NULL). LJ_EEXISTS. */
LJ_API int lj_store_create(uint64_t *out_revision, lj_store_t *store, const char *key, size_t key_len,
                           const char *value, size_t value_len, lj_error_t **err);
/* Update-if-revision; the new revision (out_revision may be NULL). LJ_ECHANGED. */
LJ_API int lj_store_update(uint64_t *out_revision, lj_store_t *store, const char *key, size_t key_len,
                           const char *value, size_t value_len, uint64_t revision, lj_error_t **err);
/* Delete-if-revision. LJ_ECHANGED. */
LJ_API int lj_store_remove(lj_store_t *store, const char *key, size_t key_len, uint64_t revision,
                           lj_error_t **err);
/* Every key that holds a value now, one call of each per key (key lives during the
 * call; it is NUL-terminated too, but may hold NUL: use key_len). A non-zero return
 * stops the listing: LJ_EUSER. */
typedef int (*lj_store_key_cb)(const char *key, size_t key_len, void *payload);
LJ_API int lj_store_keys(lj_store_t *store, lj_store_key_cb each, void *payload, lj_error_t **err);
/* The bulk read: every key starting with prefix (a node's "<node>."; may be empty)
 * that holds a value, each once with its value and revision, batch by batch. A
 * batch's keys and values sit in buffer (buffer_len bytes, followed by buffer_padding
 * readable bytes of any content, LJ_STEP_PADDING or more: lj_step_plan_batch takes it
 * as it is); buffer and entries live during the call only. The NATS store reads a
 * node's keys in one server-side filtered pass; the memory and file stores read
 * natively; a callback store through its scan callback, or keys and a get of each.
 * A non-zero return stops the read: LJ_EUSER. */
typedef int (*lj_store_batch_cb)(const char *buffer, size_t buffer_len, size_t buffer_padding,
                                 const lj_step_entry_t *entries, size_t entry_count, void *payload);
LJ_API int lj_store_scan(lj_store_t *store, const char *prefix, size_t prefix_len, lj_store_batch_cb each,
                         void *payload, lj_error_t **err);

/* Writes in flight: the store's pipeline (leasejudge's WritePipeline). Each write is
 * sent at once (within the window); lj_store_pipeline_next gives each one's outcome,
 * in the order sent. The NATS store publishes asynchronously, the etcd store keeps
 * txns in flight, the others write each as it is sent. Nothing is ever sent twice: a
 * write whose answer was lost is LJ_EUNKNOWN. The pipeline borrows store: destroy it
 * first. window: writes in flight at once, at most (0: the store's own, where its writes go
 * fastest: 1024 for an etcd store, 8 txns of 128, 256 for the others; over 1048576
 * LJ_EINVAL). */
typedef struct lj_store_pipeline_t lj_store_pipeline_t;
LJ_API int lj_store_pipeline_open(lj_store_pipeline_t **out, lj_store_t *store, size_t window, lj_error_t **err);
/* Close the pipeline: writes still in flight are abandoned (they may land); NULL does
 * nothing. */
LJ_API void lj_store_pipeline_destroy(lj_store_pipeline_t *pipeline);
/* Send a create-if-absent of value at key (both copied before the call returns).
 * LJ_EINVAL for a NULL argument (nothing sent). */
LJ_API int lj_store_pipeline_create(lj_store_pipeline_t *pipeline, const char *key, size_t key_len,
                                    const char *value, size_t value_len);
/* Writes sent whose outcome next has not given yet; of those, how many it gives
 * without waiting. */
LJ_API size_t lj_store_pipeline_in_flight(const lj_store_pipeline_t *pipeline);
LJ_API size_t lj_store_pipeline_ready(const lj_store_pipeline_t *pipeline);
/* The writes in flight the pipeline was opened for: its window, or the store's own
 * when it was opened with 0. The pipeline does not hold the caller to it: keep
 * lj_store_pipeline_in_flight below it. 0 for NULL. */
LJ_API size_t lj_store_pipeline_window(const lj_store_pipeline_t *pipeline);
/* The outcome of the oldest write in flight, waiting for it (within the store's
 * timeouts): LJ_OK (it landed: *out_revision, which may be NULL), LJ_EEXISTS (a
 * create found a value: left as it is), LJ_ECHANGED (another writer was first),
 * LJ_EUNKNOWN (no answer came: it may have landed), another code (it did not land).
 * LJ_ENOTFOUND when none is in flight. */
LJ_API int lj_store_pipeline_next(uint64_t *out_revision, lj_store_pipeline_t *pipeline, lj_error_t **err);

#ifdef __cplusplus
}
#endif

#endif
