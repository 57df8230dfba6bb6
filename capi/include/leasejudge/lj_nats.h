/*
 * leasejudge C ABI: the NATS store (included by leasejudge.h).
 *
 * An lj_store_t over a NATS JetStream key/value bucket, the store a fleet of build
 * nodes shares: sweeps, EndOne and the lock's acquire / renew / release run on it
 * as on any lj_store_t (lj_store.h).
 *
 * Its rules:
 *   - A revision is the bucket stream's sequence number of the key's last write.
 *   - Updates and deletes land only while the key's last write is still the one at
 *     the revision read; a delete publishes the KV delete marker with that
 *     expectation, so a write landing between a read and a delete is never deleted.
 *     A lost race is LJ_ECHANGED (LJ_EEXISTS for create), never an overwrite.
 *   - A read sees every write acknowledged before it (reads go to the stream
 *     leader) unless direct_reads is set. A deleted or purged key holds nothing.
 *   - Keys follow the NATS KV rules: non-empty, only [-/_=.a-zA-Z0-9], no leading or
 *     trailing '.', no "..": any other key is LJ_EINVAL.
 *   - The write path follows the servers' versions, read from their INFO lines at
 *     every connection: from nats-server 2.9.21 a write needs only the key's
 *     expected revision, which fences every writer that sends it, on any number
 *     of replicas, and the pipeline keeps many in flight. Before 2.9.21 a
 *     replicated bucket checks that expectation only before it proposes a write,
 *     so leasejudge's updates and deletes also expect the stream's last revision
 *     (one at a time): they are fenced from each other, but other clients' writes
 *     are not fenced from them. The store says so once (note), or refuses such
 *     writes with LJ_EUNSUPPORTED (refuse_unfenced). lj_nats_store_server tells
 *     which path a store takes.
 *   - A write sent without an answer (a time-out, a lost connection, a leader
 *     change) is LJ_EUNKNOWN: it may have landed, and nothing resends it.
 *   - A server that is down or unreachable, a timeout, a missing bucket, JetStream
 *     switched off: LJ_ESTORE with a sentence saying which. A lost connection is
 *     replaced by a later call (at most one try per reconnect_wait_ms); no write is
 *     queued meanwhile to land after its caller was told it failed.
 *   - One store may be used from several threads at once.
 */
#ifndef LEASEJUDGE_LJ_NATS_H
#define LEASEJUDGE_LJ_NATS_H

#include "leasejudge/lj_store.h"


#ifdef __cplusplus
extern "C" {
#endif

/*
 * Where and how to connect. Strings are (pointer, length); a NULL pointer or a
 * length of 0 means "not set". Times are milliseconds; 0 means the default; a
 * negative time or one over a day (86400000) is LJ_EINVAL.
 */
#define LJ_NATS_OPTIONS_VERSION 2
typedef struct lj_nats_options_t {
  uint32_t version; /* LJ_NATS_OPTIONS_VERSION */
  /* Server URLs separated by commas ("nats://host:4222,tls://other:4222"); a user
   * and password may ride in a URL (messages show them as ***). Not set:
   * nats://127.0.0.1:4222. */
  const char *urls;
  size_t urls_len;
  /* The key/value bucket ([A-Za-z0-9_-]+). Required. */
  const char *bucket;
  size_t bucket_len;
  /* A credentials file (user JWT and nkey seed), for servers with accounts. */
  const char *credentials_file;
  size_t credentials_file_len;
  /* TLS: the client follows a server that requires it; non-zero tls requires it
   * even where the server only offers it. The CA file verifies the server
   * (default: the system's trust store); certificate and key identify the client. */
  int32_t tls;
  const char *tls_ca_file;
  size_t tls_ca_file_len;
  const char *tls_cert_file;
  size_t tls_cert_file_len;
  const char *tls_key_file;
  size_t tls_key_file_len;
  /* The connection's name in the server's monitoring; not set: "leasejudge". */
  const char *name;
  size_t name_len;
  int64_t connect_timeout_ms; /* default 2000 */
  int64_t request_timeout_ms; /* each read, write and lookup; default 5000 */
  int64_t list_timeout_ms;    /* a whole key listing; default 60000 */
  int64_t reconnect_wait_ms;  /* least time between tries to connect again; default 500 */
  /* Non-zero: let any replica answer reads (faster on a cluster; a read may miss
   * the latest write, and a write at a stale revision is still LJ_ECHANGED). */
  int32_t direct_reads;
  /* Non-zero: create the bucket when missing, with history (values kept per key,
   * 1 to 64, default 1) and replicas (1 to 5, default 1). An existing bucket is
   * used as it is. */
  int32_t create_bucket;
  int32_t history;
  int32_t replicas;
  /* Version 2. */
  /* Non-zero: on a replicated bucket of a server before 2.9.21, which does not fence
   * other clients' writes, refuse updates and deletes (LJ_EUNSUPPORTED) instead of
   * fencing only leasejudge's own. Default 0. */
  int32_t refuse_unfenced;
  /* Said once a store, when it finds such a server: one line (living during the
   * call), on the thread of the store call that finds it, at the open or later.
   * payload must live as long as the store. NULL: nothing is said. */
  void (*note)(const char *line, size_t line_len, void *payload);
  void *note_payload;
} lj_nats_options_t;
#define LJ_NATS_OPTIONS_INIT                                                                     \
  {LJ_NATS_OPTIONS_VERSION, NULL, 0, NULL, 0, NULL, 0, 0, NULL, 0, NULL, 0, NULL, 0, NULL, 0, 2000, \
   5000, 60000, 500, 0, 0, 1, 1, 0, NULL, NULL}
/* Fill opts with the defaults. LJ_EINVAL for NULL; LJ_EVERSION for an unknown version. */
LJ_API int lj_nats_options_init(lj_nats_options_t *opts, uint32_t version);

/*
 * Connect and bind to the bucket (creating it when asked): *out is the caller's,
 * closed with lj_store_destroy. LJ_EINVAL for NULL out or opts, a missing or bad
 * bucket name, options out of range; LJ_EVERSION; LJ_ESTORE when no server answers,
 * the credentials or TLS files cannot be used, JetStream is off or the bucket is
 * missing; LJ_EUNSUPPORTED when this build of the library has no NATS support.
 */
LJ_API int lj_nats_store_open(lj_store_t **out, const lj_nats_options_t *opts, lj_error_t **err);

/* The servers a NATS store writes through, as their INFO lines said at its last
 * connection. */
typedef struct lj_nats_server_t {
  char version[32]; /* the lowest version read ("2.10.27"), NUL-terminated; "" when
                       none could be read */
  int32_t fenced;   /* 1: every server read is 2.9.21 or later, and every writer that
                       sends a key's revision is fenced; 0: the path before 2.9.21 */
} lj_nats_server_t;

/* Fill *out for store. LJ_EINVAL for NULL store or out, or a store that is no NATS
 * store; LJ_EUNSUPPORTED in a build without NATS support. */
LJ_API int lj_nats_store_server(const lj_store_t *store, lj_nats_server_t *out, lj_error_t **err);

#ifdef __cplusplus
}
#endif

#endif
