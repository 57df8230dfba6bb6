/*
 * The addon's step part: the plan of a state given as JSON lines
 * (lj_step_plan_lines), its lines handed to JavaScript as a Buffer over the
 * library's own memory, without a copy.
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

/* Reads args[1..9] (node, owner, beforeNs, nowNs, boundSeconds, rule,
 * startToleranceMs, threads, minAgeMs) into opts; node and owner into texts. */
static int plan_options_of(napi_env env, napi_value* args, lj_step_plan_options_t* opts, ljn_text* node,
                           ljn_text* owner) {
  int rule = 0, threads = 0;
  lj_step_plan_options_init(opts, LJ_STEP_PLAN_OPTIONS_VERSION);
  if (ljn_text_of(env, args[1], "node", LJN_TEXT_MAX, false, node) != 0) return -1;
  opts->node = node->data;
  opts->node_len = node->len;
  if (ljn_type(env, args[2]) != napi_undefined) {
    if (ljn_text_of(env, args[2], "owner", LJN_TEXT_MAX, false, owner) != 0) return -1;
    opts->owner = owner->data;
    opts->owner_len = owner->len;
  }
  if (ljn_type(env, args[3]) != napi_undefined && ljn_bigint_of(env, args[3], "before", &opts->before_ns) != 0)
    return -1;
  if (ljn_type(env, args[4]) != napi_undefined && ljn_bigint_of(env, args[4], "now", &opts->now_ns) != 0) return -1;
  if (ljn_type(env, args[5]) != napi_undefined && ljn_int64_of(env, args[5], "boundSeconds", &opts->bound_seconds) != 0)
    return -1;
  if (ljn_type(env, args[6]) != napi_undefined) {
    if (ljn_int_of(env, args[6], "rule", &rule) != 0) return -1;
    opts->rule = rule;
  }
  if (ljn_type(env, args[7]) != napi_undefined &&
      ljn_int64_of(env, args[7], "startToleranceMs", &opts->start_tolerance_ms) != 0)
    return -1;
  if (ljn_type(env, args[8]) != napi_undefined) {
    if (ljn_int_of(env, args[8], "threads", &threads) != 0) return -1;
    if (threads < 0) {
      ljn_throw_range(env, "threads must not be negative");
      return -1;
    }
    opts->threads = (uint32_t)threads;
  }
  if (ljn_type(env, args[9]) != napi_undefined && ljn_int64_of(env, args[9], "minAgeMs", &opts->min_age_ms) != 0)
    return -1;
  return 0;
}

/* planLines(input, node, owner, beforeNs, nowNs, boundSeconds, rule,
 *           startToleranceMs, threads, minAgeMs): { lines: Buffer, summary }. */
static napi_value plan_lines(napi_env env, napi_callback_info info) {
  napi_value args[10], result, lines, summary;
  size_t argc = 10, len = 0;
  ljn_text input, node, owner;
  lj_step_plan_options_t opts;
  lj_step_plan_summary_t counts;
  char* out = NULL;
  lj_error_t* err = NULL;
  LJN_CALL(env, napi_get_cb_info(env, info, &argc, args, NULL, NULL));
  if (argc < 10) return ljn_throw_type(env, "planLines takes 10 arguments");
  ljn_text_init(&input);
  ljn_text_init(&node);
  ljn_text_init(&owner);
  int rc = 1;
  if (plan_options_of(env, args, &opts, &node, &owner) == 0 &&
      ljn_text_of(env, args[0], "the JSON lines", SIZE_MAX, true, &input) == 0) {
    memset(&counts, 0, sizeof counts);
    rc = lj_step_plan_lines(&out, &len, &counts, input.data, input.len, &opts, &err);
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

int ljn_step_init(napi_env env, napi_value exports) {
  static const ljn_function fns[] = {{"planLines", plan_lines}};
  return ljn_define(env, exports, fns, sizeof fns / sizeof fns[0]);
}
