/*
 * leasejudge C ABI: steps and sweeps (included by leasejudge.h).
 *
 * A step is the record a build module keeps of each tool run, under the key
 * "<node>.<id>", as a JSON value. A value is a step only when Go's encoding/json
 * would decode it into the build SDK's struct (one JSON value, only white space
 * after it, every known field of its type); anything else is never touched.
 *
 * A sweep reads the node's keys in one bulk pass (lj_store_scan), plans them batch by
 * batch and sends its ends and deletes with write_window in flight, each at the
 * revision read; a write that fails, or whose acknowledgement never comes (unknown:
 * it may have landed), stops the sweep, and the report lists every write with its
 * outcome. Nothing is retried.
 *
 * A sweep judges the running steps of one node: owned by this process, leave; owned
 * by another (rule NOT_SELF) or by a process proven gone (rule PROVABLY_DEAD), end it
 * (a pulled ask: delete it, its stream redelivers it); with no owner, end an ask past
 * the step bound or a hand-started step older than this process. Each verdict has a
 * stable reason code (LJ_STEP_*). Ending rewrites only state, reason, ended and
 * result of the value and keeps every other byte.
 *
 *   - lj_step_*: keys, the codec, one plan, the batch plan over one buffer of many
 *     entries into arrays the caller owns (one call per batch, nothing allocated per
 *     key), the JSON-lines plan of `leasejudge step plan`.
 *   - lj_sweep_*: the step seed's EndStale, EndOne, EndStaleAtStart and
 *     EndStaleRound over an lj_store_t (lj_store.h): every write at the revision
 *     read; a key moved since is skipped and counted, never overwritten.
 *
 * Times are nanoseconds since the Unix epoch (UTC, 1677 to 2262);
 * LJ_TIME_DEFAULT stands for the default wherever a time is taken.
 */
#ifndef LEASEJUDGE_LJ_STEP_H
#define LEASEJUDGE_LJ_STEP_H

#include "leasejudge/lj_identity.h"
#include "leasejudge/lj_store.h"


#ifdef __cplusplus
extern "C" {
#endif

/* Deprecated: an older name of LJ_TIME_DEFAULT (lj_common.h). The default of a time:
 * now is the system clock, before this process's start (as the kernel recorded it). */
#define LJ_STEP_DEFAULT_TIME LJ_TIME_DEFAULT
/* Readable bytes a store's scan keeps after each batch it hands over (lj_store.h).
 * lj_step_plan_batch needs none: it reads no byte past an entry. */
#define LJ_STEP_PADDING 64
/* Room lj_step_why needs, its NUL included. */
#define LJ_STEP_WHY_MAX 128
/* The why of a step a previous process left running. */
#define LJ_STEP_RESTART_REASON "the build module restarted while it ran"

/* --- verdicts ------------------------------------------------------------------ */

typedef enum lj_step_action_kind_t {
  LJ_STEP_LEAVE = 0,
  LJ_STEP_END = 1,    /* rewritten as failed */
  LJ_STEP_DELETE = 2  /* a pulled ask, left to its stream's redelivery */
} lj_step_action_kind_t;

/* Why a key got its action. Numbers never change. */
typedef enum lj_step_reason_t {
  LJ_STEP_OTHER_NODE = 0,        /* no step key of this node: untouched */
  LJ_STEP_NO_VALUE = 1,          /* the key holds no value */
  LJ_STEP_NO_STEP = 2,           /* Go's decoder fails on the value: untouched */
  LJ_STEP_NOT_RUNNING = 3,       /* a step, not running */
  LJ_STEP_OWNED_BY_SELF = 4,     /* this process owns it: leave */
  LJ_STEP_OWNER_NOT_SELF = 5,    /* another owner (rule NOT_SELF): end or delete */
  LJ_STEP_OWNER_GONE = 6,        /* an owner proven gone (rule PROVABLY_DEAD): end or delete */
  LJ_STEP_OWNER_ALIVE = 7,       /* rule PROVABLY_DEAD: its owner runs: leave */
  LJ_STEP_OWNER_UNKNOWN = 8,     /* rule PROVABLY_DEAD: its owner cannot be judged: leave */
  LJ_STEP_ASK_WITHIN_BOUND = 9,  /* no owner, an ask its asker still waits for: leave */
  LJ_STEP_ASK_PAST_BOUND = 10,   /* no owner, an ask past the step bound: end */
  LJ_STEP_STARTED_BEFORE = 11,   /* no owner, hand-started before `before`: end */
  LJ_STEP_STARTED_SINCE = 12,    /* no owner, started since `before`: leave */
  LJ_STEP_UNDER_MIN_AGE = 13     /* started less than min_age_ms before now: leave, whoever owns it */
} lj_step_reason_t;

typedef enum lj_step_rule_t {
  /* Every owner but the caller's token is gone (the seed). A plan or lj_sweep_stale
   * needs the owner named (LJ_EINVAL otherwise); EndOne, the sweep at start and the
   * round, the seed's in-process sweeps, take this process's token. */
  LJ_STEP_RULE_NOT_SELF = 0,
  LJ_STEP_RULE_PROVABLY_DEAD = 1, /* only owners proven gone: dead, recycled, other boot */
  /* The library's default: not-self when owner names the caller's token, provably-dead
   * when owner is not set, so that a plan or sweep run from outside the owners'
   * processes never ends a step whose owner is alive. */
  LJ_STEP_RULE_BY_OWNER = 2 /* the options' default */
} lj_step_rule_t;

/* "leave", "end", "delete"; "" for a number that names none. Static storage. */
LJ_API const char *lj_step_action_name(int action);
/* "other-node", "no-value", "no-step", "not-running", "owned-by-self",
 * "owner-not-self", "owner-gone", "owner-alive", "owner-unknown",
 * "ask-within-bound", "ask-past-bound", "started-before", "started-since", "under-min-age";
 * "" for a number that names none. Static storage. */
LJ_API const char *lj_step_reason_name(int reason);

/* One key's verdict: 16 bytes, plain data. */
typedef struct lj_step_action_t {
  uint8_t action;     /* lj_step_action_kind_t */
  uint8_t reason;     /* lj_step_reason_t */
  uint16_t reserved;  /* 0 */
  int32_t bound_nsec; /* ASK_PAST_BOUND, ASK_WITHIN_BOUND: when its asker stops waiting, */
  int64_t bound_sec;  /* seconds since the epoch and nanoseconds */
} lj_step_action_t;

/* Why a key is left, for a leave's reason ("the step is not running", the words of
 * step plan's leave lines); "" for a reason that is no leave's or out of range. Static,
 * NUL-terminated. */
LJ_API const char *lj_step_leave_why(int reason);

/* The why of an action into out (out_cap >= LJ_STEP_WHY_MAX), NUL-terminated:
 * LJ_STEP_RESTART_REASON, "past the step bound: its asker stopped waiting at
 * <RFC 3339 UTC>", or "" for leave. Allocates nothing. out_len may be NULL. */
LJ_API int lj_step_why(char *out, size_t out_cap, size_t *out_len, const lj_step_action_t *action,
                       lj_error_t **err);
/* What the sweep's log says of the step's owner: "its owner <owner> is not this
 * process <self>" and the like; "" for leave. self NULL: this process's token.
 * *out is the caller's: UTF-8 without NUL, a NUL or ill-formed byte of owner or
 * self given as U+FFFD (the same for the said of lj_step_plan). */
LJ_API int lj_step_said(char **out, size_t *out_len, const lj_step_action_t *action, const char *owner,
                        size_t owner_len, const char *self, size_t self_len, lj_error_t **err);

/* --- the rules -------------------------------------------------------------------- */

/* The rules a plan or a sweep judges by: one struct, held as the member `rules` by
 * lj_step_plan_options_t and lj_sweep_options_t alike (build it once, hand it to
 * both), versioned on its own. A field left at its INIT value takes the library's
 * default, decided in the library alone (lj_step_rules_resolve says which). */
#define LJ_STEP_RULES_VERSION 1
typedef struct lj_step_rules_t {
  uint32_t version;
  /* The node whose keys are judged: non-empty, no '.' (a NUL it may hold: keys are
   * bytes). A plan requires it;
   * the sweep calls take their node argument, and rules.node must then be empty or
   * equal to it (LJ_EINVAL otherwise). */
  const char *node;
  size_t node_len;
  const char *owner; /* the caller's owner token; NULL or empty: none named, "self" is
                        self_pid's token */
  size_t owner_len;
  int64_t before_ns; /* a step with no owner started before it is ended;
                        LJ_TIME_DEFAULT: self_pid's start (as the kernel recorded it) */
  int64_t now_ns;    /* LJ_TIME_DEFAULT: the system clock; else fixed (tests) */
  int64_t bound_ms;  /* how long an asker waits; > 0; default 3600000 (an hour) */
  int rule;          /* lj_step_rule_t; default LJ_STEP_RULE_BY_OWNER */
  int64_t start_tolerance_ms; /* rule PROVABLY_DEAD, judged here: default 5000; >= 0 */
  /* A running step started less than this before now is left, whoever owns it
   * (LJ_STEP_UNDER_MIN_AGE): a guard when a node's boot time is in doubt. 0: none; >= 0. */
  int64_t min_age_ms;
  /* Whose owner token "self" is when no owner is named, and whose start the default
   * before_ns is, as lj_owner_token(pid) reads it: a command acting for the shell that
   * ran it. 0: this process. LJ_EINVAL when negative or past a pid's range; the
   * error of lj_owner_token (LJ_ENOTFOUND) for a pid of no process. */
  int64_t self_pid;
} lj_step_rules_t;
#define LJ_STEP_RULES_INIT \
  {LJ_STEP_RULES_VERSION, NULL, 0, NULL, 0, LJ_TIME_DEFAULT, LJ_TIME_DEFAULT, 3600000, LJ_STEP_RULE_BY_OWNER, 5000, 0, 0}
LJ_API int lj_step_rules_init(lj_step_rules_t *rules, uint32_t version);

/* The rules resolved as a plan resolves them (out of the owners' processes): *out_rule
 * the rule chosen (LJ_STEP_RULE_NOT_SELF or LJ_STEP_RULE_PROVABLY_DEAD), *out_owner the
 * owner token taken for "self", *out_why the rule chosen and why, as a person reads it
 * ("rule provably-dead (no owner named): only owners proven gone ..."). Each out may be
 * NULL; the strings are the caller's (lj_free). LJ_EINVAL for NULL rules and for the
 * rules a plan refuses (no node, a node holding '.', an owner that is no owner
 * token, a NULL owner with a length, a rule out of range, not-self with no owner named,
 * a bound, tolerance, minimum age or self_pid out of range); LJ_EVERSION for a version
 * of 0 or newer than the library's; LJ_ENOTFOUND for a self_pid of no process. */
LJ_API int lj_step_rules_resolve(int *out_rule, char **out_owner, size_t *out_owner_len, char **out_why,
                                 size_t *out_why_len, const lj_step_rules_t *rules, lj_error_t **err);

/* --- plan options ------------------------------------------------------------------ */

/* Version 3 holds the rules as one member; versions 1 and 2 (the rule fields side by
 * side, bound_seconds for bound_ms) are still read, by their version, from programs
 * built against an older header. */
#define LJ_STEP_PLAN_OPTIONS_VERSION 3
typedef struct lj_step_plan_options_t {
  uint32_t version;
  lj_step_rules_t rules; /* rules.node is required */
  /* Rule PROVABLY_DEAD: the state of the holder an owner token names. NULL: judged
   * on this node (lj_owner_judge). Non-zero: stop (LJ_EUSER). With threads > 1 it
   * is called from several threads at once. */
  int (*owner_state)(lj_holder_state_t *out_state, const char *token, size_t token_len, void *payload);
  void *payload;
  uint32_t threads; /* batch plans: split over this many threads; 0 or 1: one */
} lj_step_plan_options_t;
#define LJ_STEP_PLAN_OPTIONS_INIT {LJ_STEP_PLAN_OPTIONS_VERSION, LJ_STEP_RULES_INIT, NULL, NULL, 1}
LJ_API int lj_step_plan_options_init(lj_step_plan_options_t *opts, uint32_t version);

/* --- one key ------------------------------------------------------------------------- */

/* Plan one key and its value (value_len 0: the key holds none). *out is set; why
 * and said (each optional: NULL) receive the texts, the caller's. LJ_EINVAL for
 * options without a node; a value that is no step is a verdict (LJ_STEP_NO_STEP),
 * not an error. */
LJ_API int lj_step_plan(lj_step_action_t *out, char **why, size_t *why_len, char **said, size_t *said_len,
                        const char *key, size_t key_len, const char *value, size_t value_len,
                        const lj_step_plan_options_t *opts, lj_error_t **err);

/* --- batches ------------------------------------------------------------------------- */

/* lj_step_entry_t, where one entry's key and value sit in a batch buffer, is in
 * lj_store.h: a store's bulk read hands batches over in the same layout. */

/* Counts of a plan: ends + deletes + leaves + no_step + other_node is the number
 * of keys. */
typedef struct lj_step_plan_summary_t {
  uint64_t ends;
  uint64_t deletes;
  uint64_t leaves;     /* steps of the node left: not running, owned, young, ... */
  uint64_t no_step;    /* no value, or a value that is no step */
  uint64_t other_node; /* keys that are no step key of the node */
  uint64_t malformed;  /* lj_step_plan_lines: lines that are no entry */
} lj_step_plan_summary_t;

/* Plan every entry of buffer into out[i] (out_count >= entry_count), in one call.
 * Values are read where they are, and no byte past an entry is read. summary may be
 * NULL. LJ_EINVAL for an entry outside the buffer, a short out, or no node. Nothing is
 * allocated per key. */
LJ_API int lj_step_plan_entries(lj_step_action_t *out, size_t out_count, lj_step_plan_summary_t *summary,
                                const char *buffer, size_t buffer_len, const lj_step_entry_t *entries,
                                size_t entry_count, const lj_step_plan_options_t *opts, lj_error_t **err);
/* Deprecated: lj_step_plan_entries with a buffer_padding it ignores (any value will do). */
LJ_API int lj_step_plan_batch(lj_step_action_t *out, size_t out_count, lj_step_plan_summary_t *summary,
                              const char *buffer, size_t buffer_len, size_t buffer_padding,
                              const lj_step_entry_t *entries, size_t entry_count,
                              const lj_step_plan_options_t *opts, lj_error_t **err);

/* The plan of `leasejudge step plan`. input holds JSON lines
 *   {"key":"<node>.<id>","revision":N,"value":<the stored value>}
 * where value is the stored JSON itself, or a JSON string holding the stored bytes
 * (for values that are not JSON), and absent when the key holds none; revision is
 * optional. *out gets one line per input line (blank lines skipped), in order:
 *   {"key":"..","action":"end"|"delete"|"leave","reason":"<lj_step_reason_name>","why":".."}
 * (why: the sweep's for an end or a delete, why the key is left for a leave); a line
 * that is no entry gives
 *   {"key":null,"action":"leave","reason":"malformed","why":"<what is wrong>","malformed":"<the same>"}
 * (its key when it could be read) and counts as malformed. The input is read where
 * it is (each line indexed once); the answer is the only other copy held. With
 * opts->threads > 1 (at most 64 are used) each 256 KiB a thread of input is cut at
 * newlines into that many parts planned at once; the answer is the same.
 * *out is the caller's; summary may be NULL. */
LJ_API int lj_step_plan_lines(char **out, size_t *out_len, lj_step_plan_summary_t *summary, const char *input,
                              size_t input_len, const lj_step_plan_options_t *opts, lj_error_t **err);
/* The same plan streamed: the lines read from in_fd until its end, the answer lines
 * written to out_fd as they are planned (a line cut across reads is joined first), so
 * that a state larger than memory plans in bounded memory: about 512 KiB of input, the
 * longest line and the answers of a few hundred KiB of it are held at a time. With
 * opts->threads > 1 (at most 64), each read's lines are cut into that many parts
 * planned at once, 64 KiB a part at least; the answer is the same. Blocking reads and
 * writes; a pipe, a socket or a file. summary (optional) counts what was planned, also
 * when an error stopped the plan. LJ_EINVAL for a negative descriptor; LJ_EIO when a
 * read or a write fails (what was answered before stays written); LJ_EUSER when
 * owner_state asked to stop. */
LJ_API int lj_step_plan_lines_fd(lj_step_plan_summary_t *summary, int in_fd, int out_fd,
                                 const lj_step_plan_options_t *opts, lj_error_t **err);

/* The same plan fed by the caller, for input that comes in pieces (a read loop that
 * must stay interruptible, a socket, a decompressor): create a plan, feed it the input
 * in pieces cut anywhere, finish it. Each feed plans the lines its piece completes and
 * hands their answer lines to write, in order, in chunks of at most about 256 KiB
 * (data lives during the call), before it returns; the end of a line cut short is kept
 * for the next feed (so a plan holds one piece, the longest line and one chunk of
 * answers). finish plans what is left (the last line, when the input did not end with
 * a newline) and fills summary (optional). write returning non-zero stops the plan:
 * LJ_EUSER, as does owner_state asking to stop. With opts->threads > 1 (at most 64),
 * the lines of a piece are cut into that many parts planned at once on threads the
 * plan keeps until destroyed (64 KiB a part at least; signals blocked on them); the
 * answers are the same. A plan is one thread's at a time; destroy(NULL) does nothing. */
typedef struct lj_step_lines_plan_t lj_step_lines_plan_t;
typedef int (*lj_step_lines_write_fn)(const char *data, size_t len, void *payload);
LJ_API int lj_step_lines_plan_create(lj_step_lines_plan_t **out, const lj_step_plan_options_t *opts,
                                     lj_error_t **err);
LJ_API int lj_step_lines_plan_feed(lj_step_lines_plan_t *plan, const char *input, size_t input_len,
                                   lj_step_lines_write_fn write, void *payload, lj_error_t **err);
LJ_API int lj_step_lines_plan_finish(lj_step_plan_summary_t *summary, lj_step_lines_plan_t *plan,
                                     lj_step_lines_write_fn write, void *payload, lj_error_t **err);
LJ_API void lj_step_lines_plan_destroy(lj_step_lines_plan_t *plan);

/* A steps state's JSON lines themselves (`leasejudge step export` writes them, step
 * import and step plan read them). lj_step_lines_entry writes the line of one key
 * ({"key":..,"revision":N,"value":..}, newline included): the value as it is when it
 * is one JSON value on one line that is no string, else a JSON string of its bytes;
 * no value when value_len is 0. *out_kept (optional) is 0 when key or value held
 * bytes that are no UTF-8, written as U+FFFD (they do not read back the same). *out is
 * the caller's. */
LJ_API int lj_step_lines_entry(char **out, size_t *out_len, int *out_kept, const char *key, size_t key_len,
                               uint64_t revision, const char *value, size_t value_len, lj_error_t **err);
/* Read every line of input (blank lines skipped), each through each: its key (NULL
 * when the line names none it could read), revision and value (the stored bytes;
 * value_len 0: none), and malformed (NULL for an entry, else what is wrong, with
 * whatever key came first). They live during the call. Non-zero: stop, LJ_EUSER. */
typedef int (*lj_step_line_cb)(const char *key, size_t key_len, uint64_t revision, const char *value,
                               size_t value_len, const char *malformed, void *payload);
LJ_API int lj_step_lines_read(const char *input, size_t input_len, lj_step_line_cb each, void *payload,
                              lj_error_t **err);

/* The summary line `leasejudge step plan` writes on stderr (no newline):
 * "step plan: <k> keys: <e> end, <d> delete, <l> leave, <n> no-step, <o> other-node,
 * <m> malformed lines". *out is the caller's. LJ_EINVAL when the counts add up
 * beyond 2^64-1 keys (no plan gives such a summary). */
LJ_API int lj_step_plan_summary_format(char **out, size_t *out_len, const lj_step_plan_summary_t *summary,
                                       lj_error_t **err);

/* --- keys and times ------------------------------------------------------------------- */

/* "<node>.<id>". LJ_EINVAL for an empty node, a node holding '.', an empty id, a
 * node or id holding a NUL (no returned string may). */
LJ_API int lj_step_key(char **out, size_t *out_len, const char *node, size_t node_len, const char *id,
                       size_t id_len, lj_error_t **err);
/* Split key at its first '.': the node is key[0, *out_node_len), the id follows
 * the dot. LJ_EPARSE when there is no dot or a side is empty. */
LJ_API int lj_step_key_parse(size_t *out_node_len, const char *key, size_t key_len, lj_error_t **err);
/* The same for an ask's key, whose id is a canonical UUID (either case). */
LJ_API int lj_step_ask_key_parse(size_t *out_node_len, const char *key, size_t key_len, lj_error_t **err);
/* *out = 1 when key is an ask's and tool ends in " ask", else 0. */
LJ_API int lj_step_is_ask(int *out, const char *key, size_t key_len, const char *tool, size_t tool_len,
                          lj_error_t **err);
/* RFC 3339 as Go's time.Parse reads it, to nanoseconds since the epoch. LJ_EPARSE
 * when unreadable; LJ_EINVAL beyond 1677..2262. */
LJ_API int lj_step_time_parse(int64_t *out_ns, const char *text, size_t text_len, lj_error_t **err);

/* --- the codec ---------------------------------------------------------------------------- */

/* A decoded step (every field as Go decodes it). */
typedef struct lj_step_t lj_step_t;
typedef enum lj_step_field_t {
  LJ_STEP_FIELD_ID = 0,
  LJ_STEP_FIELD_TOOL = 1,
  LJ_STEP_FIELD_STATE = 2,
  LJ_STEP_FIELD_OWNER = 3,
  LJ_STEP_FIELD_REASON = 4,
  LJ_STEP_FIELD_RESULT = 5, /* the JSON text of result; absent: NULL */
  LJ_STEP_FIELD_ASK_WHAT = 6 /* AskWhat of its ask; no ask: NULL */
} lj_step_field_t;
typedef enum lj_step_time_field_t { LJ_STEP_STARTED = 0, LJ_STEP_ENDED = 1 } lj_step_time_field_t;

/* Decode value. LJ_EPARSE (with why) when it is no step; the JSON null decodes to
 * a step with every field empty. *out is the caller's (lj_step_destroy). */
LJ_API int lj_step_decode(lj_step_t **out, const char *value, size_t value_len, lj_error_t **err);
/* A field's text (UTF-8, may hold NUL: use *out_len; LJ_STEP_FIELD_ASK_WHAT holds
 * none), living as long as step; NULL for a field out of range or absent. out_len
 * may be NULL. */
LJ_API const char *lj_step_string(const lj_step_t *step, int field, size_t *out_len);
/* started or ended; Go's zero time (0001-01-01T00:00:00Z) when absent. */
LJ_API int lj_step_time(int64_t *out_sec, int32_t *out_nsec, const lj_step_t *step, int which,
                        lj_error_t **err);
LJ_API void lj_step_destroy(lj_step_t *step);

/* The value ended as failed: state "failed", reason why, ended at ended_ns
 * (RFC3339Nano UTC; LJ_TIME_DEFAULT: now), result removed; every other byte
 * kept. *out is the caller's. LJ_EPARSE when value is no step object. */
LJ_API int lj_step_end_value(char **out, size_t *out_len, const char *value, size_t value_len, const char *why,
                             size_t why_len, int64_t ended_ns, lj_error_t **err);

/* The seed's AskWhat: one line saying what an ask is. json is a step value
 * (form LJ_STEP_JSON_STEP) or an ask object (LJ_STEP_JSON_ASK). LJ_EPARSE when it
 * is no step (or no ask object); LJ_ENOTFOUND when the step has no ask. The line is
 * the seed's, its commits and fingerprint cut to 12 bytes as the seed cuts them,
 * handed out as UTF-8 without NUL: a NUL, or a character the cut split, is given
 * as U+FFFD (so is LJ_STEP_FIELD_ASK_WHAT). */
#define LJ_STEP_JSON_STEP 0
#define LJ_STEP_JSON_ASK 1
LJ_API int lj_step_ask_what(char **out, size_t *out_len, const char *json, size_t json_len, int form,
                            lj_error_t **err);

/* --- sweeps --------------------------------------------------------------------------------- */

/* A key a sweep read, as the on_key callback sees it (living during the call). */
typedef struct lj_sweep_key_t lj_sweep_key_t;

/* What became of a key a sweep read. Numbers never change. */
typedef enum lj_sweep_outcome_t {
  LJ_SWEEP_LEFT = 0,     /* nothing to do (its reason says why) */
  LJ_SWEEP_PLANNED = 1,  /* a dry run's end or delete */
  LJ_SWEEP_DONE = 2,     /* ended or deleted */
  LJ_SWEEP_CHANGED = 3,  /* skipped: the key moved since it was read */
  LJ_SWEEP_FAILED = 4,   /* the write did not land (it stopped the sweep) */
  LJ_SWEEP_UNKNOWN = 5,  /* no acknowledgement came: the write may have landed */
  LJ_SWEEP_NOT_SENT = 6  /* the sweep had stopped before it */
} lj_sweep_outcome_t;
/* "left", "planned", "done", "changed", "failed", "unknown", "not-sent"; "" for a
 * number that names none. Static storage. */
LJ_API const char *lj_sweep_outcome_name(int outcome);

/* Version 4 holds the rules as one member (lj_step_rules_t, as the plan options do);
 * versions 1 to 3 (the rule fields side by side) are still read by their version. */
#define LJ_SWEEP_OPTIONS_VERSION 4
typedef struct lj_sweep_options_t {
  uint32_t version;
  /* The rules. rules.node: empty, or the node argument of the sweep call. The
   * in-process calls (EndOne, the sweep at start, the round) judge as the owners' own
   * process: the rule by-owner is not-self there, and not-self needs no owner named
   * (self_pid's token stands for it). */
  lj_step_rules_t rules;
  /* As in lj_step_plan_options_t; NULL: judged on this node. */
  int (*owner_state)(lj_holder_state_t *out_state, const char *token, size_t token_len, void *payload);
  /* One line per action and the sweep's notes (line lives during the call). NULL:
   * none. Non-zero: the sweep stops before its next store call (LJ_EUSER). */
  int (*log)(const char *line, size_t line_len, void *payload);
  /* EndOne: sets *out_live to 1 when this process runs step id now. NULL: none
   * does. Non-zero: stop (LJ_EUSER). */
  int (*live)(int *out_live, const char *id, size_t id_len, void *payload);
  void *payload;         /* handed to every callback above */
  int32_t attempts;      /* lj_sweep_end_stale_at_start's tries: default 6 */
  int64_t retry_ms;      /* and the wait between them: default 5000 */
  uint32_t write_window; /* ends and deletes in flight at once; 1: one at a time; 0 (the
                            default): the store's own (lj_store_pipeline_window): 1024 on
                            etcd, 8 txns of 128 keys, 256 on the others */
  uint32_t batch_keys;   /* keys read and planned per batch: default 4096 */
  int dry_run;           /* non-zero: plan only, nothing is written */
  /* Each key read, with its verdict and outcome: a key left when planned, an end or
   * delete when its outcome is known (planned, in a dry run). NULL: none. Non-zero:
   * the sweep stops before its next write (LJ_EUSER). */
  int (*on_key)(const lj_sweep_key_t *key, void *payload);
} lj_sweep_options_t;
#define LJ_SWEEP_OPTIONS_INIT \
  {LJ_SWEEP_OPTIONS_VERSION, LJ_STEP_RULES_INIT, NULL, NULL, NULL, NULL, 6, 5000, 0, 4096, 0, NULL}
LJ_API int lj_sweep_options_init(lj_sweep_options_t *opts, uint32_t version);

/* A key's texts (living as long as the call; NUL-terminated too); "" for a field the
 * key has not (an id of a value that is no step, a why of a key left); NULL for a
 * field out of range. out_len may be NULL. */
typedef enum lj_sweep_key_field_t {
  LJ_SWEEP_KEY_KEY = 0,
  LJ_SWEEP_KEY_ID = 1,
  LJ_SWEEP_KEY_TOOL = 2,
  LJ_SWEEP_KEY_OWNER = 3,
  LJ_SWEEP_KEY_WHY = 4,
  LJ_SWEEP_KEY_SAID = 5,  /* what the sweep's log says of the owner */
  LJ_SWEEP_KEY_ERROR = 6  /* FAILED, UNKNOWN: what the store said */
} lj_sweep_key_field_t;
LJ_API const char *lj_sweep_key_text(const lj_sweep_key_t *key, int field, size_t *out_len);
/* Its verdict (action, reason, the ask's bound), revision read, outcome
 * (lj_sweep_outcome_t) and start. LJ_EINVAL for NULL. */
LJ_API int lj_sweep_key_verdict(lj_step_action_t *out, uint64_t *out_revision, int *out_outcome,
                                const lj_sweep_key_t *key);
LJ_API int lj_sweep_key_started(int64_t *out_sec, int32_t *out_nsec, const lj_sweep_key_t *key);

/* What a sweep did: the ids it ended or deleted, in order, its counts, and what
 * stopped it (LJ_OK when nothing did). */
typedef struct lj_sweep_report_t lj_sweep_report_t;
typedef struct lj_sweep_counts_t {
  uint64_t ends;
  uint64_t deletes;
  uint64_t changed;    /* skipped: the key moved since it was read */
  uint64_t leaves;
  uint64_t no_step;
  uint64_t other_node;
} lj_sweep_counts_t;
LJ_API size_t lj_sweep_report_ended_count(const lj_sweep_report_t *report);
/* The i-th id (living as long as report); NULL past the end. out_len may be NULL. */
LJ_API const char *lj_sweep_report_ended(const lj_sweep_report_t *report, size_t i, size_t *out_len);
LJ_API int lj_sweep_report_counts(lj_sweep_counts_t *out, const lj_sweep_report_t *report);
/* The code that stopped the sweep (LJ_OK: none) and its message ("" for none). */
LJ_API int lj_sweep_report_code(const lj_sweep_report_t *report);
LJ_API const char *lj_sweep_report_message(const lj_sweep_report_t *report);
/* Every end and delete sent, in order, with its outcome: the i-th write's key
 * (living as long as report), action (lj_step_action_kind_t), outcome
 * (lj_sweep_outcome_t) and the revision it was sent at. LJ_EINVAL past the end. */
LJ_API size_t lj_sweep_report_write_count(const lj_sweep_report_t *report);
LJ_API int lj_sweep_report_write(const char **out_key, size_t *out_key_len, int *out_action, int *out_outcome,
                                 uint64_t *out_revision, const lj_sweep_report_t *report, size_t i);
/* A figure of the sweep; 0 for a number that names none. Times in nanoseconds. */
typedef enum lj_sweep_stat_t {
  LJ_SWEEP_STAT_FAILED = 0,    /* ends and deletes that did not land */
  LJ_SWEEP_STAT_UNKNOWN = 1,   /* ... whose acknowledgement never came */
  LJ_SWEEP_STAT_NOT_SENT = 2,  /* ... planned after the sweep stopped */
  LJ_SWEEP_STAT_KEYS = 3,      /* keys read */
  LJ_SWEEP_STAT_BYTES = 4,     /* their keys' and values' bytes */
  LJ_SWEEP_STAT_BATCHES = 5,
  LJ_SWEEP_STAT_WRITES = 6,    /* ends and deletes sent */
  LJ_SWEEP_STAT_MAX_IN_FLIGHT = 7,
  LJ_SWEEP_STAT_WAITS = 8,     /* waits past the store's patience, each logged */
  LJ_SWEEP_STAT_RETRIES = 9,   /* reads started again, each logged */
  LJ_SWEEP_STAT_SKIPPED = 10,  /* keys written during the read, left to the next sweep */
  LJ_SWEEP_STAT_REJECTED = 11, /* keys the store cannot write (its key rules), left */
  LJ_SWEEP_STAT_READ_NS = 12,
  LJ_SWEEP_STAT_PLAN_NS = 13,
  LJ_SWEEP_STAT_APPLY_NS = 14,
  LJ_SWEEP_STAT_TOTAL_NS = 15
} lj_sweep_stat_t;
LJ_API uint64_t lj_sweep_report_stat(const lj_sweep_report_t *report, int stat);
LJ_API void lj_sweep_report_destroy(lj_sweep_report_t *report);

/* The seed's EndStale: end node's steps no process runs any more, by opts->rules (its
 * before_ns: a step with no owner started before it is ended; LJ_TIME_DEFAULT:
 * self_pid's start). *out (optional) is what was done, also when an error stopped the
 * sweep; the return is that error's code (a store failure keeps the store's code; a
 * callback's stop is LJ_EUSER). */
LJ_API int lj_sweep_stale(lj_sweep_report_t **out, lj_store_t *store, const char *node, size_t node_len,
                          const lj_sweep_options_t *opts, lj_error_t **err);
/* Deprecated: lj_sweep_stale with a before_ns beside the options' rules.before_ns
 * (LJ_TIME_DEFAULT: the rules'; any other value stands for it). */
LJ_API int lj_sweep_end_stale(lj_sweep_report_t **out, lj_store_t *store, const char *node, size_t node_len,
                              int64_t before_ns, const lj_sweep_options_t *opts, lj_error_t **err);

/* The seed's EndOne: end node's running step id (or the key <node>.<id>) as failed
 * with why. *out_step (optional) is the step as the seed answers it (state failed,
 * reason why); *out_value (optional) the value written. Refusals: LJ_EINVAL (another
 * node, no why, no key), LJ_ENOTFOUND, LJ_EPARSE (no step), LJ_EREFUSED (not
 * running, this process's, live), LJ_ECHANGED (moved while ended); store errors as
 * they come. */
LJ_API int lj_sweep_end_one(lj_step_t **out_step, char **out_value, size_t *out_value_len, lj_store_t *store,
                            const char *node, size_t node_len, const char *id, size_t id_len, const char *why,
                            size_t why_len, const lj_sweep_options_t *opts, lj_error_t **err);

/* What a module's start sweep waits on: the runtime serving, and a cancel. */
typedef struct lj_sweep_signals_t lj_sweep_signals_t;
LJ_API int lj_sweep_signals_create(lj_sweep_signals_t **out, lj_error_t **err);
/* One-way, thread-safe. LJ_EINVAL for NULL. */
LJ_API int lj_sweep_signals_serve(lj_sweep_signals_t *signals);
LJ_API int lj_sweep_signals_cancel(lj_sweep_signals_t *signals);
/* Only once nothing waits on it. NULL does nothing. */
LJ_API void lj_sweep_signals_destroy(lj_sweep_signals_t *signals);

/* The seed's EndStaleAtStart, with before_ns for the rules' (LJ_TIME_DEFAULT: the
 * rules' before_ns): blocks until served (or cancelled), says once when
 * the owner's boot id is unreadable, then sweeps up to attempts times, retry_ms
 * apart (a cancel ends the wait), logging each failure and the count at success.
 * LJ_OK; *out (optional) is the last sweep's report, NULL when cancelled before
 * any. */
LJ_API int lj_sweep_end_stale_at_start(lj_sweep_report_t **out, lj_store_t *store, const char *node,
                                       size_t node_len, int64_t before_ns, lj_sweep_signals_t *signals,
                                       const lj_sweep_options_t *opts, lj_error_t **err);
/* The seed's EndStaleRound: only when already served, a sweep with before = boot,
 * its error logged. LJ_OK; *out (optional) NULL when not served. */
LJ_API int lj_sweep_end_stale_round(lj_sweep_report_t **out, lj_store_t *store, const char *node,
                                    size_t node_len, lj_sweep_signals_t *signals, const lj_sweep_options_t *opts,
                                    lj_error_t **err);

#ifdef __cplusplus
}
#endif

#endif
