// The step codec's texts on any bytes: AskWhat of a step or of an ask object, a
// step ended with any why at any time, a decoded step's fields. Properties: AskWhat
// answers exactly for steps that decode (not found for one without an ask), the
// same line by both forms and by the decoded step's field, UTF-8 without NUL; an
// ended step decodes as failed with the why (when the why is UTF-8), ended at the
// time given, no result, its other fields as they were, and ending it again with
// the same why and time changes nothing.
#include <memory>
#include <optional>
#include <string>

#include "fuzz.hpp"

namespace {

using StepPtr = std::unique_ptr<lj_step_t, void (*)(lj_step_t*)>;

StepPtr decode(std::string_view value) {
  lj_step_t* step = nullptr;
  lj_error_t* err = nullptr;
  int rc = lj_step_decode(&step, value.data(), value.size(), &err);
  fuzz::check_error(err, rc);
  FUZZ_CHECK(rc == LJ_OK || rc == LJ_EPARSE);
  FUZZ_CHECK((rc == LJ_OK) == (step != nullptr));
  return StepPtr(step, lj_step_destroy);
}

std::string field(const lj_step_t* step, int f) {
  size_t len = 0;
  const char* s = lj_step_string(step, f, &len);
  if (s == nullptr) return "<none>";
  FUZZ_CHECK(s[len] == '\0');
  FUZZ_CHECK(fuzz::utf8(std::string_view(s, len)) || f == LJ_STEP_FIELD_RESULT);
  return std::string(s, len);
}

std::optional<std::string> ask_what(std::string_view json, int form, int* rc_out) {
  char* out = nullptr;
  size_t len = 0;
  lj_error_t* err = nullptr;
  int rc = lj_step_ask_what(&out, &len, json.data(), json.size(), form, &err);
  fuzz::check_error(err, rc);
  *rc_out = rc;
  if (rc != LJ_OK) {
    FUZZ_CHECK(out == nullptr && (rc == LJ_EPARSE || rc == LJ_ENOTFOUND));
    return std::nullopt;
  }
  FUZZ_CHECK(fuzz::c_text(out, len));
  std::string s(out, len);
  lj_free(out);
  return s;
}

void fuzz_ask_what(std::string_view json) {
  StepPtr step = decode(json);
  int rc = 0;
  auto line = ask_what(json, LJ_STEP_JSON_STEP, &rc);
  if (!step) {
    FUZZ_CHECK(rc == LJ_EPARSE);
  } else {
    const std::string field_line = field(step.get(), LJ_STEP_FIELD_ASK_WHAT);
    FUZZ_CHECK(rc == (field_line == "<none>" ? LJ_ENOTFOUND : LJ_OK));
    if (line) FUZZ_CHECK(*line == field_line);
  }
  // The ask object form: the same as that object inside a step.
  auto as_ask = ask_what(json, LJ_STEP_JSON_ASK, &rc);
  if (as_ask) {
    StepPtr wrapped = decode("{\"ask\":" + std::string(json) + "}");
    FUZZ_CHECK(wrapped != nullptr);
    FUZZ_CHECK(field(wrapped.get(), LJ_STEP_FIELD_ASK_WHAT) == *as_ask);
  }
}

void fuzz_end(std::string_view value, std::string_view why, std::int64_t ended_ns) {
  char* out = nullptr;
  size_t len = 0;
  lj_error_t* err = nullptr;
  int rc = lj_step_end_value(&out, &len, value.data(), value.size(), why.data(), why.size(), ended_ns, &err);
  fuzz::check_error(err, rc);
  StepPtr before = decode(value);
  if (rc != LJ_OK) {
    FUZZ_CHECK(out == nullptr);
    FUZZ_CHECK(rc == LJ_EPARSE);
    // A step that decodes but could not be ended is the JSON null alone.
    if (before) FUZZ_CHECK(field(before.get(), LJ_STEP_FIELD_ID).empty());
    return;
  }
  FUZZ_CHECK(before != nullptr);
  std::string ended(out, len);
  lj_free(out);
  StepPtr after = decode(ended);
  FUZZ_CHECK(after != nullptr);
  FUZZ_CHECK(field(after.get(), LJ_STEP_FIELD_STATE) == "failed");
  if (fuzz::utf8(why)) FUZZ_CHECK(field(after.get(), LJ_STEP_FIELD_REASON) == why);
  FUZZ_CHECK(field(after.get(), LJ_STEP_FIELD_RESULT) == "<none>");
  for (int f : {LJ_STEP_FIELD_ID, LJ_STEP_FIELD_TOOL, LJ_STEP_FIELD_OWNER, LJ_STEP_FIELD_ASK_WHAT})
    FUZZ_CHECK(field(after.get(), f) == field(before.get(), f));
  std::int64_t s0 = 0, s1 = 0;
  std::int32_t n0 = 0, n1 = 0;
  FUZZ_CHECK(lj_step_time(&s0, &n0, before.get(), LJ_STEP_STARTED, nullptr) == LJ_OK);
  FUZZ_CHECK(lj_step_time(&s1, &n1, after.get(), LJ_STEP_STARTED, nullptr) == LJ_OK);
  FUZZ_CHECK(s0 == s1 && n0 == n1);
  FUZZ_CHECK(lj_step_time(&s1, &n1, after.get(), LJ_STEP_ENDED, nullptr) == LJ_OK);
  if (ended_ns != LJ_TIME_DEFAULT) FUZZ_CHECK(static_cast<__int128>(s1) * 1000000000 + n1 == ended_ns);
  if (ended_ns == LJ_TIME_DEFAULT) return;
  FUZZ_CHECK(lj_step_end_value(&out, &len, ended.data(), ended.size(), why.data(), why.size(), ended_ns, nullptr) ==
             LJ_OK);
  FUZZ_CHECK(std::string_view(out, len) == ended);
  lj_free(out);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::Input in(data, size);
  const std::uint8_t mode = in.byte();
  if (mode & 1) {
    std::int64_t ended_ns = (mode & 2) ? in.i64() : INT64_C(1714564800123456789);
    if (ended_ns == LJ_TIME_DEFAULT) ended_ns += 1;
    std::string_view why = in.small();
    fuzz_end(in.rest(), why, ended_ns);
  } else {
    fuzz_ask_what(in.rest());
  }
  return 0;
}
