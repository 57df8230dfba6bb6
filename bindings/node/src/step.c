/*
 * The addon's step part: the plan of a state given as JSON lines
 * (lj_step_plan_lines), its lines handed to JavaScript as a Buffer over the
 * library's own memory, without a copy, and the rules resolved
 * (lj_step_rules_resolve). Both take one rules object.
 */
#include <stdlib.h>
#include <string.h>

#include "step.h"

static void lines_free(napi_env env, void* data, void* hint) {
  (void)env;
  (void)hint;
  lj_free(data);
}

static napi_value summary_object(napi_env env, const lj_step_plan_summary_t* s) {
  static const char* const names[] = {"ends", "deletes", "leaves", "noStep", "otherNode", "malformed"};
  const uint64_t counts[] = {s->ends, s->deletes, s->leaves, s->no_step, s->other_node, s->malformed};
  napi_value obj;
  LJN_CALL(env, napi_create_object(env, &obj));
  for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
    napi_value v;
    LJN_CALL(env, napi_create_double(env, (double)counts[k], &v));
    if (ljn_set(env, obj, names[k], v) != 0) return NULL;
  }
  return obj;
}

/* obj.name into *out; *given says whether it is set (not undefined). */
static int field(napi_env env, napi_value obj, const char* name, napi_value* out, bool* given) {
  if (napi_get_named_property(env, obj, name, out) != napi_ok) {
    ljn_napi_failed(env);
    return -1;
  }
  *given = ljn_type(env, *out) != napi_undefined;
  return 0;
}

/* The rules object index.js builds (rulesOf: node, owner, beforeNs, nowNs, boundMs,
 * rule, startToleranceMs, minAgeMs, selfPid, each left undefined for the library's
 * default) into r, over lj_step_rules_init's defaults; node and owner into texts. */
static int rules_of(napi_env env, napi_value obj, lj_step_rules_t* r, ljn_text* node, ljn_text* owner) {
  static const char* const int64s[] = {"beforeNs", "nowNs", "boundMs", "startToleranceMs", "minAgeMs", "selfPid"};
  int64_t* const to[] = {&r->before_ns, &r->now_ns, &r->bound_ms, &r->start_tolerance_ms, &r->min_age_ms, &r->self_pid};
  napi_value v;
  bool given;
  lj_step_rules_init(r, LJ_STEP_RULES_VERSION);
  if (ljn_type(env, obj) != napi_object) {
    ljn_throw_type(env, "the rules must be an object");
    return -1;
  }
  if (field(env, obj, "node", &v, &given) != 0) return -1;
  if (given) {
    if (ljn_text_of(env, v, "node", LJN_TEXT_MAX, false, node) != 0) return -1;
    r->node = node->data;
    r->node_len = node->len;
  }
  if (field(env, obj, "owner", &v, &given) != 0) return -1;
  if (given) {
    if (ljn_text_of(env, v, "owner", LJN_TEXT_MAX, false, owner) != 0) return -1;
    r->owner = owner->data;
    r->owner_len = owner->len;
  }
  if (field(env, obj, "rule", &v, &given) != 0) return -1;
  if (given && ljn_int_of(env, v, "rule", &r->rule) != 0) return -1;
  for (size_t k = 0; k < sizeof int64s / sizeof int64s[0]; k++) {
    if (field(env, obj, int64s[k], &v, &given) != 0) return -1;
    if (!given) continue;
    /* The times come as bigint ns (index.js nsOf), the rest as numbers. */
    int rc = k < 2 ? ljn_bigint_of(env, v, int64s[k], to[k]) : ljn_int64_of(env, v, int64s[k], to[k]);
    if (rc != 0) return -1;
  }
  return 0;
}

/* planLines(input, rules, threads): { lines: Buffer, summary }. */
static napi_value plan_lines(napi_env env, napi_callback_info info) {
  napi_value args[3], result, lines, summary;
  size_t argc = 3, len = 0;
  ljn_text input, node, owner;
  lj_step_plan_options_t opts;
  lj_step_plan_summary_t counts;
  char* out = NULL;
  lj_error_t* err = NULL;
  int threads = 0;
  LJN_CALL(env, napi_get_cb_info(env, info, &argc, args, NULL, NULL));
  if (argc < 3) return ljn_throw_type(env, "planLines takes 3 arguments");
  ljn_text_init(&input);
  ljn_text_init(&node);
  ljn_text_init(&owner);
  lj_step_plan_options_init(&opts, LJ_STEP_PLAN_OPTIONS_VERSION);
  int rc = 1;
  if (rules_of(env, args[1], &opts.rules, &node, &owner) == 0 &&
      (ljn_type(env, args[2]) == napi_undefined || ljn_int_of(env, args[2], "threads", &threads) == 0)) {
    if (threads < 0) {
      ljn_throw_range(env, "threads must not be negative");
    } else if (ljn_text_of(env, args[0], "the JSON lines", SIZE_MAX, true, &input) == 0) {
      opts.threads = (uint32_t)threads;
      memset(&counts, 0, sizeof counts);
      rc = lj_step_plan_lines(&out, &len, &counts, input.data, input.len, &opts, &err);
    }
  }
  ljn_text_release(&input);
  ljn_text_release(&node);
  ljn_text_release(&owner);
  if (rc == 1) return NULL;
  if (rc != LJ_OK) return ljn_throw_code(env, rc, err);
  if (len == 0) {
    lj_free(out);
    LJN_CALL(env, napi_create_buffer(env, 0, NULL, &lines));
  } else if (napi_create_external_buffer(env, len, out, lines_free, NULL, &lines) != napi_ok) {
    lj_free(out);
    return ljn_napi_failed(env);
  }
  if ((summary = summary_object(env, &counts)) == NULL) return NULL;
  LJN_CALL(env, napi_create_object(env, &result));
  if (ljn_set(env, result, "lines", lines) != 0 || ljn_set(env, result, "summary", summary) != 0) return NULL;
  return result;
}

/* resolveRules(rules): { rule (lj_step_rule_t), owner, why }, as a plan resolves them. */
static napi_value resolve_rules(napi_env env, napi_callback_info info) {
  napi_value args[1], result, rule_v, owner_v, why_v;
  size_t argc = 1, owner_len = 0, why_len = 0;
  ljn_text node, owner;
  lj_step_rules_t rules;
  char *owner_out = NULL, *why = NULL;
  lj_error_t* err = NULL;
  int rule = 0;
  LJN_CALL(env, napi_get_cb_info(env, info, &argc, args, NULL, NULL));
  if (argc < 1) return ljn_throw_type(env, "resolveRules takes 1 argument");
  ljn_text_init(&node);
  ljn_text_init(&owner);
  int rc = 1;
  if (rules_of(env, args[0], &rules, &node, &owner) == 0)
    rc = lj_step_rules_resolve(&rule, &owner_out, &owner_len, &why, &why_len, &rules, &err);
  ljn_text_release(&node);
  ljn_text_release(&owner);
  if (rc == 1) return NULL;
  if (rc != LJ_OK) return ljn_throw_code(env, rc, err);
  owner_v = ljn_string(env, owner_out, owner_len);
  why_v = ljn_string(env, why, why_len);
  lj_free(owner_out);
  lj_free(why);
  if (owner_v == NULL || why_v == NULL) return NULL;
  LJN_CALL(env, napi_create_int32(env, rule, &rule_v));
  LJN_CALL(env, napi_create_object(env, &result));
  if (ljn_set(env, result, "rule", rule_v) != 0 || ljn_set(env, result, "owner", owner_v) != 0 ||
      ljn_set(env, result, "why", why_v) != 0)
    return NULL;
  return result;
}

int ljn_step_init(napi_env env, napi_value exports) {
  static const ljn_function fns[] = {{"planLines", plan_lines}, {"resolveRules", resolve_rules}};
  return ljn_define(env, exports, fns, sizeof fns / sizeof fns[0]);
}
