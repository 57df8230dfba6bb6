// The conformance table through the C ABI (leasejudge.h, the shared library): one
// answer line per scenario, "<name>\t<JSON>" (tests/conformance/check.py compares).
// The table is read with simdjson; everything judged is the library's, through lj_*.
#include <fmt/format.h>
#include <simdjson.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "leasejudge.h"

namespace {

using simdjson::dom::element;

std::string error_class(int rc) {
  switch (rc) {
    case LJ_EINVAL: return "invalid";
    case LJ_ESTORE: return "store";
    case LJ_EIO: return "io";
    case LJ_EPARSE: return "parse";
    case LJ_ENOTFOUND: return "notfound";
    case LJ_ECHANGED: return "changed";
    default: return fmt::format("code {}", rc);
  }
}

std::string error_json(int rc) { return fmt::format(R"({{"error":"{}"}})", error_class(rc)); }

// The caller's copy of a string the library handed out.
std::string taken(char* p, size_t n) {
  std::string s = p != nullptr ? std::string(p, n) : std::string();
  lj_free(p);
  return s;
}

std::string json_quoted(std::string_view text) {
  char* out = nullptr;
  size_t n = 0;
  if (lj_json_quote(&out, &n, text.data(), text.size(), nullptr) != LJ_OK) return "null";
  return taken(out, n);
}

void replace_all(std::string& text, std::string_view from, std::string_view to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
}

std::string text_of(element e, const char* field) {
  std::string_view v;
  return e[field].get(v) == simdjson::SUCCESS ? std::string(v) : std::string();
}

bool has(element e, const char* field) { return e[field].error() == simdjson::SUCCESS; }

struct Runner {
  std::string self, host, machine;

  std::string plan(element s, bool owner_kind) {
    lj_step_plan_options_t opts = LJ_STEP_PLAN_OPTIONS_INIT;
    lj_step_rules_t& rules = opts.rules;
    std::string node = text_of(s, "node"), owner = text_of(s, "owner");
    rules.node = node.data();
    rules.node_len = node.size();
    if (has(s, "owner")) {
      rules.owner = owner.data();
      rules.owner_len = owner.size();
    }
    if (has(s, "rule")) {
      std::string rule = text_of(s, "rule");
      // The ABI takes the rule's number; a name it has none for is passed as one out of range.
      rules.rule = rule == "not-self" ? LJ_STEP_RULE_NOT_SELF
                  : rule == "provably-dead" ? LJ_STEP_RULE_PROVABLY_DEAD
                  : rule == "by-owner" ? LJ_STEP_RULE_BY_OWNER
                                       : 99;
    }
    if (has(s, "min_age_ms")) rules.min_age_ms = s["min_age_ms"].get_int64().value();
    for (auto [field, out] : {std::pair{"now", &rules.now_ns}, std::pair{"before", &rules.before_ns}}) {
      std::string t = text_of(s, field);
      if (int rc = lj_step_time_parse(out, t.data(), t.size(), nullptr); rc != LJ_OK) return error_json(rc);
    }
    std::string input;
    for (element line : s["lines"].get_array()) input += std::string(std::string_view(line)) + "\n";
    replace_all(input, "{{SELF}}", self);
    char* out = nullptr;
    size_t out_len = 0;
    lj_error_t* err = nullptr;
    int rc = lj_step_plan_lines(&out, &out_len, nullptr, input.data(), input.size(), &opts, &err);
    lj_error_destroy(err);
    if (rc != LJ_OK) return error_json(rc);
    std::string answer = taken(out, out_len);
    if (owner_kind) return R"({"owner":"accepted"})";
    return fmt::format(R"({{"plan":[{}]}})", rows_of(answer));
  }

  static std::string rows_of(const std::string& answer) {
    simdjson::dom::parser parser;
    std::string rows;
    size_t start = 0;
    while (start < answer.size()) {
      size_t end = answer.find('\n', start);
      if (end == std::string::npos) end = answer.size();
      element line = parser.parse(answer.substr(start, end - start));
      std::string_view key;
      std::string k = line["key"].get(key) == simdjson::SUCCESS ? json_quoted(key) : "null";
      rows += fmt::format("{}[{},{},{}]", rows.empty() ? "" : ",", k, json_quoted(text_of(line, "action")),
                          json_quoted(text_of(line, "reason")));
      start = end + 1;
    }
    return rows;
  }

  static int open(lj_store_t** store, const std::string& url, bool create) {
    lj_store_url_options_t opts;
    lj_store_url_options_init(&opts, LJ_STORE_URL_OPTIONS_VERSION);
    opts.create = create ? 1 : 0;
    lj_error_t* err = nullptr;
    int rc = lj_store_open_url(store, url.data(), url.size(), &opts, &err);
    lj_error_destroy(err);
    return rc;
  }

  std::string open_store(element s) {
    bool create = false;
    if (s["create"].get(create) != simdjson::SUCCESS) create = false;
    lj_store_t* store = nullptr;
    int rc = open(&store, text_of(s, "url"), create);
    lj_store_destroy(store);
    std::string answer = rc == LJ_OK ? R"({"opened":true)" : fmt::format(R"({{"error":"{}")", error_class(rc));
    if (has(s, "probe"))
      answer += fmt::format(R"(,"exists_after":{})", access(text_of(s, "probe").c_str(), F_OK) == 0);
    return answer + "}";
  }

  static std::string lease_until(lj_lock_t* lock) {
    char* body = nullptr;
    size_t n = 0;
    if (lj_lock_body(&body, &n, lock, nullptr) != LJ_OK) return "null";
    std::string text = taken(body, n);
    simdjson::dom::parser parser;
    return json_quoted(text_of(parser.parse(text), "leaseUntil"));
  }

  static int64_t ms_of(element s, const char* field) {
    std::string t = text_of(s, field);
    int64_t ms = 0;
    lj_lock_time_parse(&ms, t.data(), t.size(), nullptr);
    return ms;
  }

  std::string lease(element s, bool reopen) {
    lj_store_t* store = nullptr;
    if (int rc = open(&store, text_of(s, "url"), true); rc != LJ_OK) return error_json(rc);
    std::string key = text_of(s, "key"), purpose = "conformance lease";
    lj_lock_holder_t holder = LJ_LOCK_HOLDER_INIT;
    holder.lease_ms = int64_t(s["lease_ms"]);
    lj_lock_t* lock = nullptr;
    lj_lock_acquisition_t a{};
    int rc = lj_lock_acquire(&lock, &a, store, key.data(), key.size(), purpose.data(), purpose.size(), &holder,
                             ms_of(s, "now0"), nullptr, nullptr);
    lj_lock_acquisition_clear(&a);
    if (rc != LJ_OK || lock == nullptr) {
      lj_store_destroy(store);
      return rc != LJ_OK ? error_json(rc) : R"({"outcome":"not acquired"})";
    }
    std::string first = lease_until(lock);
    if (reopen) {  // another run renews it: only the key and the acquisition id are known
      char* id = nullptr;
      size_t n = 0;
      lj_lock_id(&id, &n, lock, nullptr);
      std::string id_text = taken(id, n);
      lj_lock_destroy(lock);
      lock = nullptr;
      rc = lj_lock_open(&lock, store, key.data(), key.size(), id_text.data(), id_text.size(), LJ_LOCK_LEASE_AS_TAKEN,
                        nullptr);
    }
    if (rc == LJ_OK) rc = lj_lock_renew(lock, ms_of(s, "now1"), nullptr);
    std::string answer = rc == LJ_OK ? fmt::format(R"({{"leaseUntil":[{},{}]}})", first, lease_until(lock))
                                     : error_json(rc);
    lj_lock_destroy(lock);
    lj_store_destroy(store);
    return answer;
  }

  // The holder's body, with this machine's name and id, created at the key.
  int seed(lj_store_t* store, const std::string& key, element s) {
    if (!has(s, "holder")) return LJ_OK;
    std::string body = simdjson::minify(element(s["holder"]));
    replace_all(body, "{{HOST}}", host);
    replace_all(body, "{{MACHINE}}", machine);
    return lj_store_create(nullptr, store, key.data(), key.size(), body.data(), body.size(), nullptr);
  }

  std::string lock(element s, bool wait) {
    lj_store_t* store = nullptr;
    if (int rc = open(&store, text_of(s, "url"), true); rc != LJ_OK) return error_json(rc);
    std::string key = text_of(s, "key"), purpose = "conformance lock";
    int rc = seed(store, key, s);
    lj_lock_holder_t holder = LJ_LOCK_HOLDER_INIT;
    holder.lease_ms = int64_t(s["lease_ms"]);
    lj_lock_t* lock = nullptr;
    lj_lock_acquisition_t a{};
    if (rc == LJ_OK && wait) {
      lj_lock_wait_options_t w = LJ_LOCK_WAIT_OPTIONS_INIT;
      w.wait_ms = int64_t(s["wait_ms"]);
      rc = lj_lock_acquire_wait(&lock, &a, store, key.data(), key.size(), purpose.data(), purpose.size(), &holder,
                                &w, nullptr, nullptr);
    } else if (rc == LJ_OK) {
      rc = lj_lock_acquire(&lock, &a, store, key.data(), key.size(), purpose.data(), purpose.size(), &holder,
                           ms_of(s, "now"), nullptr, nullptr);
    }
    std::string answer = rc != LJ_OK ? error_json(rc) : wait ? waited(store, key, s, a) : acquired(a);
    lj_lock_acquisition_clear(&a);
    if (lock != nullptr) lj_lock_release(lock, nullptr);
    lj_lock_destroy(lock);
    lj_store_destroy(store);
    return answer;
  }

  static std::string acquired(const lj_lock_acquisition_t& a) {
    const char* names[] = {"acquired", "held", "unknown", "lost-race"};
    std::string answer = fmt::format(R"({{"outcome":"{}")", names[a.outcome]);
    if (a.outcome == LJ_ACQUIRE_ACQUIRED) answer += fmt::format(R"(,"broke":{})", a.broke_at != 0);
    if (a.has_verdict) answer += fmt::format(R"(,"reason":"{}")", lj_lock_reason_code(a.verdict.reason));
    return answer + "}";
  }

  // After a wait: is the lock ours, and does the key still hold the holder's body?
  static std::string waited(lj_store_t* store, const std::string& key, element s, const lj_lock_acquisition_t& a) {
    char* value = nullptr;
    size_t n = 0;
    uint64_t revision = 0;
    bool kept = false;
    if (lj_store_get(&value, &n, &revision, store, key.data(), key.size(), nullptr) == LJ_OK) {
      std::string body = taken(value, n);
      char* id = nullptr;
      size_t id_len = 0;
      if (lj_lock_body_id(&id, &id_len, body.data(), body.size(), nullptr) == LJ_OK)
        kept = taken(id, id_len) == text_of(s["holder"], "id");
    }
    return fmt::format(R"({{"acquired":{},"holder_kept":{}}})", a.outcome == LJ_ACQUIRE_ACQUIRED, kept);
  }

  // A body's verdict at now: kind, reason code, whether only a person can clear it.
  std::string judge(element s) {
    std::string body = text_of(s, "body");
    replace_all(body, "{{HOST}}", host);
    replace_all(body, "{{MACHINE}}", machine);
    replace_all(body, "{{SELF}}", self);
    lj_lock_verdict_t v{};
    if (int rc = lj_lock_judge(&v, body.data(), body.size(), ms_of(s, "now"), nullptr, nullptr); rc != LJ_OK)
      return error_json(rc);
    std::string answer = fmt::format(R"({{"kind":"{}","reason":"{}","manual":{}}})", lj_lock_kind_name(v.kind),
                                     lj_lock_reason_code(v.reason), v.manual_removal != 0);
    lj_lock_verdict_clear(&v);
    return answer;
  }

  // release: our lock released while ours, after another writer took its key
  // (another), or after its key was removed (gone); loss: renewed after another
  // writer took its key.
  std::string release(element s, bool loss) {
    lj_store_t* store = nullptr;
    if (int rc = open(&store, text_of(s, "url"), true); rc != LJ_OK) return error_json(rc);
    std::string key = text_of(s, "key"), purpose = "conformance release", c = text_of(s, "case");
    lj_lock_holder_t holder = LJ_LOCK_HOLDER_INIT;
    holder.lease_ms = int64_t(s["lease_ms"]);
    lj_lock_t* lock = nullptr;
    lj_lock_acquisition_t a{};
    int rc = lj_lock_acquire(&lock, &a, store, key.data(), key.size(), purpose.data(), purpose.size(), &holder,
                             LJ_TIME_DEFAULT, nullptr, nullptr);
    lj_lock_acquisition_clear(&a);
    if (rc == LJ_OK && lock == nullptr) rc = LJ_EBUSY;
    if (rc == LJ_OK && (c.empty() || c == "another")) {
      char* body = nullptr;
      size_t n = 0;
      rc = lj_lock_body_new(&body, &n, "another writer", 14, LJ_TIME_DEFAULT, nullptr, nullptr, 0, nullptr);
      std::string other = taken(body, n);
      if (rc == LJ_OK)
        rc = lj_store_update(nullptr, store, key.data(), key.size(), other.data(), other.size(),
                             lj_lock_revision(lock), nullptr);
    } else if (rc == LJ_OK && c == "gone") {
      rc = lj_store_remove(store, key.data(), key.size(), lj_lock_revision(lock), nullptr);
    }
    std::string answer = fmt::format(R"({{"error":"not disturbed: {}"}})", error_class(rc));
    if (rc == LJ_OK) {
      int got = loss ? lj_lock_renew(lock, LJ_TIME_DEFAULT, nullptr) : lj_lock_release(lock, nullptr);
      answer = got != LJ_OK ? error_json(got) : loss ? R"({"renewed":true})" : R"({"released":true})";
    }
    lj_lock_destroy(lock);
    lj_store_destroy(store);
    return answer;
  }

  std::string answer(element s) {
    std::string kind = text_of(s, "kind");
    if (kind == "plan" || kind == "plan-self" || kind == "owner") return plan(s, kind == "owner");
    if (kind == "open") return open_store(s);
    if (kind == "lease" || kind == "lease-reopen") return lease(s, kind == "lease-reopen");
    if (kind == "lock" || kind == "wait") return lock(s, kind == "wait");
    if (kind == "judge") return judge(s);
    if (kind == "release" || kind == "loss") return release(s, kind == "loss");
    return "unsupported";
  }
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s SCENARIOS.json\n", argv[0]);
    return 2;
  }
  Runner r;
  char* p = nullptr;
  size_t n = 0;
  if (lj_owner_token(&p, &n, 0, nullptr) != LJ_OK) return 1;
  r.self = taken(p, n);
  if (lj_machine_id(&p, &n, nullptr) == LJ_OK) r.machine = taken(p, n);
  char host[256] = {0};
  gethostname(host, sizeof host - 1);
  r.host = host;
  simdjson::dom::parser parser;
  element table = parser.load(argv[1]);
  for (element s : table["scenarios"].get_array())
    std::printf("%s\t%s\n", std::string(std::string_view(s["name"])).c_str(), r.answer(s).c_str());
  return 0;
}
