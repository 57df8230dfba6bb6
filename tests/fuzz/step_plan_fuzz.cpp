// Step decode and plan on any entries, every way in at once: one key at a time,
// the batch over an exact-size buffer (no padding: any read past the end is a
// finding) and over a padded one, on one thread or two, and the JSON lines of
// `leasejudge step plan` split at random lines over several calls with blank lines
// between. Properties: every way gives the same verdict for every key; each
// verdict is the one an independent reading of the seed's rules gives from the
// decoded step; the summaries count the verdicts; every output line is valid JSON
// naming its key; a step ended is a failed step with the why, ended now, every
// other field kept; every returned text is UTF-8 without NUL.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "fuzz.hpp"

namespace {

constexpr std::string_view self = fuzz::step_self;

struct Entry {
  std::string key, value;
};

// The caller's judge of owners: a pure function of the token (called from
// several threads at once with threads = 2).
int owner_state(lj_holder_state_t* out, const char* token, size_t len, void*) {
  FUZZ_CHECK(token != nullptr && token[len] == '\0');
  *out = static_cast<lj_holder_state_t>(len % 5);
  return 0;
}

std::string field(const lj_step_t* step, int f) {
  size_t len = 0;
  const char* s = lj_step_string(step, f, &len);
  return s == nullptr ? std::string() : std::string(s, len);
}

// The seed's rules, read again from the decoded step (lj_step.h's reason list).
lj_step_action_t expected(const Entry& e, const lj_step_plan_options_t& o) {
  lj_step_action_t a{};
  a.action = LJ_STEP_LEAVE;
  const std::size_t dot = e.key.find('.');
  if (dot == std::string::npos || dot + 1 == e.key.size() || e.key.substr(0, dot) != "n1") {
    a.reason = LJ_STEP_OTHER_NODE;
    return a;
  }
  if (e.value.empty()) {
    a.reason = LJ_STEP_NO_VALUE;
    return a;
  }
  lj_step_t* step = nullptr;
  if (lj_step_decode(&step, e.value.data(), e.value.size(), nullptr) != LJ_OK) {
    a.reason = LJ_STEP_NO_STEP;
    return a;
  }
  std::unique_ptr<lj_step_t, void (*)(lj_step_t*)> owned(step, lj_step_destroy);
  if (field(step, LJ_STEP_FIELD_STATE) != "running") {
    a.reason = LJ_STEP_NOT_RUNNING;
    return a;
  }
  const std::string owner = field(step, LJ_STEP_FIELD_OWNER), tool = field(step, LJ_STEP_FIELD_TOOL);
  if (owner == self) {
    a.reason = LJ_STEP_OWNED_BY_SELF;
    return a;
  }
  int ask = 0;
  FUZZ_CHECK(lj_step_is_ask(&ask, e.key.data(), e.key.size(), tool.data(), tool.size(), nullptr) == LJ_OK);
  if (!owner.empty()) {
    const std::uint8_t act = ask ? LJ_STEP_DELETE : LJ_STEP_END;
    // By-owner, the options' default, is not-self when the owner is named (lj_step.h).
    if (o.rules.rule == LJ_STEP_RULE_NOT_SELF || (o.rules.rule == LJ_STEP_RULE_BY_OWNER && o.rules.owner_len > 0)) {
      a.action = act;
      a.reason = LJ_STEP_OWNER_NOT_SELF;
      return a;
    }
    switch (owner.size() % 5) {
      case LJ_HOLDER_ALIVE:
        a.reason = LJ_STEP_OWNER_ALIVE;
        return a;
      case LJ_HOLDER_UNKNOWN:
        a.reason = LJ_STEP_OWNER_UNKNOWN;
        return a;
      default:
        a.action = act;
        a.reason = LJ_STEP_OWNER_GONE;
        return a;
    }
  }
  std::int64_t sec = 0;
  std::int32_t nsec = 0;
  FUZZ_CHECK(lj_step_time(&sec, &nsec, step, LJ_STEP_STARTED, nullptr) == LJ_OK);
  const __int128 started = static_cast<__int128>(sec) * 1000000000 + nsec;
  if (ask) {
    const __int128 bound = started + static_cast<__int128>(o.rules.bound_ms) * 1000000;
    a.reason = bound < o.rules.now_ns ? LJ_STEP_ASK_PAST_BOUND : LJ_STEP_ASK_WITHIN_BOUND;
    if (bound < o.rules.now_ns) a.action = LJ_STEP_END;
    __int128 bs = bound / 1000000000, bn = bound % 1000000000;
    if (bn < 0) {
      bn += 1000000000;
      bs -= 1;
    }
    a.bound_sec = static_cast<std::int64_t>(bs);
    a.bound_nsec = static_cast<std::int32_t>(bn);
    return a;
  }
  if (started < o.rules.before_ns) {
    a.action = LJ_STEP_END;
    a.reason = LJ_STEP_STARTED_BEFORE;
  } else {
    a.reason = LJ_STEP_STARTED_SINCE;
  }
  return a;
}

bool same(const lj_step_action_t& a, const lj_step_action_t& b) {
  return a.action == b.action && a.reason == b.reason && a.reserved == 0 && b.reserved == 0 &&
         a.bound_sec == b.bound_sec && a.bound_nsec == b.bound_nsec;
}

std::string why_of(const lj_step_action_t& a) {
  char buf[LJ_STEP_WHY_MAX];
  size_t len = 0;
  FUZZ_CHECK(lj_step_why(buf, sizeof buf, &len, &a, nullptr) == LJ_OK);
  FUZZ_CHECK(fuzz::c_text(buf, len));
  return std::string(buf, len);
}

void check_summary(const lj_step_plan_summary_t& s, const std::vector<lj_step_action_t>& want) {
  lj_step_plan_summary_t c{};
  for (const auto& a : want) {
    if (a.action == LJ_STEP_END)
      ++c.ends;
    else if (a.action == LJ_STEP_DELETE)
      ++c.deletes;
    else if (a.reason == LJ_STEP_OTHER_NODE)
      ++c.other_node;
    else if (a.reason == LJ_STEP_NO_VALUE || a.reason == LJ_STEP_NO_STEP)
      ++c.no_step;
    else
      ++c.leaves;
  }
  FUZZ_CHECK(s.ends == c.ends && s.deletes == c.deletes && s.leaves == c.leaves && s.no_step == c.no_step &&
             s.other_node == c.other_node);
}

// A JSON string whose undoing gives bytes back (for UTF-8 bytes).
void append_quoted(std::string& out, std::string_view s) {
  static const char hex[] = "0123456789abcdef";
  out.push_back('"');
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(static_cast<char>(c));
    } else if (c < 0x20) {
      out.append("\\u00");
      out.push_back(hex[c >> 4]);
      out.push_back(hex[c & 15]);
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
  out.push_back('"');
}

void check_batches(const std::vector<Entry>& entries, const std::vector<lj_step_action_t>& want,
                   const lj_step_plan_options_t& o) {
  std::string data;
  std::vector<lj_step_entry_t> es;
  for (const Entry& e : entries) {
    lj_step_entry_t x{};
    x.key_offset = data.size();
    x.key_len = static_cast<std::uint32_t>(e.key.size());
    data += e.key;
    x.value_offset = data.size();
    x.value_len = static_cast<std::uint32_t>(e.value.size());
    data += e.value;
    x.revision = es.size() + 1;
    es.push_back(x);
  }
  // Exactly the bytes, no padding: a read past them is caught.
  std::unique_ptr<char[]> exact(new char[data.size() == 0 ? 1 : data.size()]);
  std::memcpy(exact.get(), data.data(), data.size());
  std::vector<lj_step_action_t> got(entries.size());
  lj_step_plan_summary_t sum{};
  lj_error_t* err = nullptr;
  int rc = lj_step_plan_batch(got.data(), got.size(), &sum, data.empty() ? nullptr : exact.get(), data.size(), 0,
                              es.data(), es.size(), &o, &err);
  fuzz::check_error(err, rc);
  FUZZ_CHECK(rc == LJ_OK);
  for (std::size_t i = 0; i < got.size(); ++i) FUZZ_CHECK(same(got[i], want[i]));
  check_summary(sum, want);
  // Padded: values read in place.
  std::string padded = data + std::string(LJ_STEP_PADDING, '\0');
  std::vector<lj_step_action_t> got2(entries.size());
  FUZZ_CHECK(lj_step_plan_batch(got2.data(), got2.size(), nullptr, padded.data(), data.size(), LJ_STEP_PADDING,
                                es.data(), es.size(), &o, nullptr) == LJ_OK);
  for (std::size_t i = 0; i < got2.size(); ++i) FUZZ_CHECK(same(got2[i], want[i]));
}

// The JSON lines, cut at the given entries into several calls.
void check_lines(const std::vector<Entry>& entries, const std::vector<lj_step_action_t>& want,
                 const lj_step_plan_options_t& o, fuzz::Input& in) {
  std::string all_out;
  std::size_t i = 0;
  lj_step_plan_summary_t total{};
  while (i < entries.size() || i == 0) {
    std::size_t n = 1 + in.byte() % 4;
    std::string text;
    std::vector<std::size_t> lines;  // entry of each non-blank line
    for (std::size_t k = i; k < entries.size() && k < i + n; ++k) {
      const Entry& e = entries[k];
      const std::uint8_t how = in.byte();
      if (how & 1) text += (how & 2) ? " \t\r\n" : "\n";  // a blank line: skipped
      text += "{\"key\":";
      append_quoted(text, e.key);
      text += ",\"revision\":" + std::to_string(k + 1);
      if (!e.value.empty()) {
        text += ",\"value\":";
        append_quoted(text, e.value);
      }
      text += "}";
      if (k + 1 < entries.size() || (how & 4)) text += "\n";
      lines.push_back(k);
    }
    char* out = nullptr;
    size_t len = 0;
    lj_step_plan_summary_t sum{};
    lj_error_t* err = nullptr;
    int rc = lj_step_plan_lines(&out, &len, &sum, text.data(), text.size(), &o, &err);
    fuzz::check_error(err, rc);
    FUZZ_CHECK(rc == LJ_OK);
    FUZZ_CHECK(fuzz::c_text(out, len));
    std::string_view rest(out, len);
    for (std::size_t k : lines) {
      std::size_t nl = rest.find('\n');
      FUZZ_CHECK(nl != std::string_view::npos);
      std::string_view line = rest.substr(0, nl);
      rest.remove_prefix(nl + 1);
      simdjson::dom::parser parser;
      simdjson::padded_string p(line);
      simdjson::dom::element doc;
      FUZZ_CHECK(parser.parse(p).get(doc) == simdjson::SUCCESS);
      std::string_view key, action, why;
      FUZZ_CHECK(doc["action"].get(action) == simdjson::SUCCESS);
      FUZZ_CHECK(doc["why"].get(why) == simdjson::SUCCESS);
      if (!fuzz::utf8(entries[k].key) || !fuzz::utf8(entries[k].value)) continue;
      // Stored bytes that are UTF-8 travel through the lines as they are.
      FUZZ_CHECK(doc["key"].get(key) == simdjson::SUCCESS && key == entries[k].key);
      FUZZ_CHECK(action == lj_step_action_name(want[k].action));
      // A line says why a key is left too, in the words lj_step_leave_why has for it.
      FUZZ_CHECK(why == (want[k].action == LJ_STEP_LEAVE ? std::string(lj_step_leave_why(want[k].reason))
                                                         : why_of(want[k])));
    }
    FUZZ_CHECK(rest.empty());
    FUZZ_CHECK(sum.malformed == 0);
    total.ends += sum.ends;
    total.deletes += sum.deletes;
    total.leaves += sum.leaves;
    total.no_step += sum.no_step;
    total.other_node += sum.other_node;
    all_out.append(out, len);
    lj_free(out);
    i += n;
    if (entries.empty()) break;
  }
  bool all_utf8 = true;
  for (const Entry& e : entries) all_utf8 = all_utf8 && fuzz::utf8(e.key) && fuzz::utf8(e.value);
  if (all_utf8) check_summary(total, want);
}

// One key at a time, with its texts; a step ended is read back.
void check_one(const Entry& e, const lj_step_action_t& want, const lj_step_plan_options_t& o) {
  lj_step_action_t a;
  char *why = nullptr, *said = nullptr;
  size_t why_len = 0, said_len = 0;
  lj_error_t* err = nullptr;
  int rc = lj_step_plan(&a, &why, &why_len, &said, &said_len, e.key.data(), e.key.size(), e.value.data(),
                        e.value.size(), &o, &err);
  fuzz::check_error(err, rc);
  FUZZ_CHECK(rc == LJ_OK);
  FUZZ_CHECK(same(a, want));
  FUZZ_CHECK(fuzz::c_text(why, why_len) && fuzz::c_text(said, said_len));
  FUZZ_CHECK(std::string_view(why, why_len) == why_of(want));
  FUZZ_CHECK((a.action == LJ_STEP_LEAVE) == (said_len == 0));
  lj_free(why);
  lj_free(said);
  if (a.action != LJ_STEP_END) return;
  const std::string w = why_of(a);
  char* ended = nullptr;
  size_t len = 0;
  FUZZ_CHECK(lj_step_end_value(&ended, &len, e.value.data(), e.value.size(), w.data(), w.size(), o.rules.now_ns, nullptr) ==
             LJ_OK);
  lj_step_t *before = nullptr, *after = nullptr;
  FUZZ_CHECK(lj_step_decode(&before, e.value.data(), e.value.size(), nullptr) == LJ_OK);
  FUZZ_CHECK(lj_step_decode(&after, ended, len, nullptr) == LJ_OK);
  FUZZ_CHECK(field(after, LJ_STEP_FIELD_STATE) == "failed");
  FUZZ_CHECK(field(after, LJ_STEP_FIELD_REASON) == w);
  FUZZ_CHECK(lj_step_string(after, LJ_STEP_FIELD_RESULT, nullptr) == nullptr);
  for (int f : {LJ_STEP_FIELD_ID, LJ_STEP_FIELD_TOOL, LJ_STEP_FIELD_OWNER, LJ_STEP_FIELD_ASK_WHAT})
    FUZZ_CHECK(field(after, f) == field(before, f));
  std::int64_t sec = 0;
  std::int32_t nsec = 0;
  FUZZ_CHECK(lj_step_time(&sec, &nsec, after, LJ_STEP_ENDED, nullptr) == LJ_OK);
  FUZZ_CHECK(static_cast<__int128>(sec) * 1000000000 + nsec == o.rules.now_ns);
  lj_step_destroy(before);
  lj_step_destroy(after);
  lj_free(ended);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::Input in(data, size);
  const std::uint8_t mode = in.byte();
  lj_step_plan_options_t o = fuzz::step_plan_options();
  if (mode & 1) o.rules.now_ns = in.i64();
  if (mode & 2) o.rules.before_ns = in.i64();
  if (o.rules.now_ns == LJ_TIME_DEFAULT) o.rules.now_ns += 1;  // the system clock is no input
  if (o.rules.before_ns == LJ_TIME_DEFAULT) o.rules.before_ns += 1;
  if (mode & 4) o.rules.bound_ms = (1 + in.byte() * 60) * 1000;
  if (mode & 8) {
    o.rules.rule = LJ_STEP_RULE_PROVABLY_DEAD;
    o.owner_state = owner_state;
  }
  o.threads = (mode & 16) ? 2 : 1;
  std::vector<Entry> entries;
  const std::size_t count = in.byte() % 9;
  for (std::size_t i = 0; i < count; ++i) {
    Entry e;
    const std::uint8_t how = in.byte();
    std::string_view key = in.small();
    e.key = (how & 1) ? std::string(key) : "n1." + std::string(key);
    e.value = std::string((how & 2) ? in.medium() : in.small());
    entries.push_back(std::move(e));
  }
  std::vector<lj_step_action_t> want;
  for (const Entry& e : entries) want.push_back(expected(e, o));
  for (std::size_t i = 0; i < entries.size(); ++i) check_one(entries[i], want[i], o);
  check_batches(entries, want, o);
  check_lines(entries, want, o, in);
  return 0;
}
