// The lock verbs: judge, acquire, renew, release.
#include "command.hpp"

namespace leasejudge::cli {

namespace {

// --now TIME as ms since the epoch (one time syntax for every verb: RFC 3339).
int now_of(const Context& cx, const Args& args, int64_t& now_ms) {
  now_ms = LJ_TIME_DEFAULT;
  if (auto now = args.value("--now")) {
    auto ns = time_arg(*now);
    if (!ns) return cx.usage(fmt::format("--now {} is no RFC 3339 time", *now));
    now_ms = *ns / 1000000 - (*ns % 1000000 < 0 ? 1 : 0);  // rounded down, as toISOString reads it
  }
  return exit_ok;
}

// The library's purpose for a lock whose taker names none (every door's same text).
int default_purpose(const Context& cx, const std::string& key, int32_t pid, std::string& purpose) {
  char* out = nullptr;
  size_t len = 0;
  lj_error_t* err = nullptr;
  int rc = lj_lock_purpose_default(&out, &len, key.data(), key.size(), pid, &err);
  if (rc != LJ_OK) return cx.failed(fmt::format("the purpose for {}", key), rc, err);
  purpose.assign(out, len);
  lj_free(out);
  return exit_ok;
}

// A file store's file ("lj1 <revision>\n" then the value) as its value: the body a
// lock judge of the file means; any other bytes as they are.
std::string file_store_value(std::string bytes) {
  constexpr std::string_view magic = "lj1 ";
  if (bytes.compare(0, magic.size(), magic) != 0) return bytes;
  auto newline = bytes.find('\n');
  if (newline == std::string::npos || newline == magic.size()) return bytes;
  for (std::size_t i = magic.size(); i < newline; ++i)
    if (bytes[i] < '0' || bytes[i] > '9') return bytes;
  return bytes.substr(newline + 1);
}

// The verdict written as the verb writes it, and its exit: 0 break, 1 held, 3 unknown.
// Its why capped at text_cap bytes in either form; the text escaped for a terminal.
int say_verdict(Context& cx, lj_lock_verdict_t& v) {
  char* text = nullptr;
  size_t len = 0;
  lj_error_t* err = nullptr;
  std::string why = capped(std::string_view(v.why != nullptr ? v.why : "", v.why_len));
  char* whole = v.why;
  const size_t whole_len = v.why_len;
  v.why = why.data(), v.why_len = why.size();  // the capped why, read during the call only
  int rc = cx.json ? lj_lock_verdict_json(&text, &len, &v, &err) : lj_lock_verdict_text(&text, &len, &v, &err);
  v.why = whole, v.why_len = whole_len;
  int exit = v.kind == LJ_LOCK_BREAK ? exit_ok : v.kind == LJ_LOCK_HELD ? exit_no : exit_unknown;
  lj_lock_verdict_clear(&v);
  if (rc != LJ_OK) {
    cx.failed("the verdict", rc, err);
    return exit_unknown;  // never "break" on that
  }
  std::string line = taken(text, len);
  cx.out(cx.json ? line : terminal_text(line, line.size()));
  return exit;
}

// lock judge [FILE|-] | --store URL KEY: with a store, the lock as acquire judges it
// before a break (a key's store lease, on etcd, before its body's lease).
int run_judge(Context& cx, const Args& args) {
  int64_t now_ms;
  if (int rc = now_of(cx, args, now_ms); rc != exit_ok) return rc;
  lj_lock_options_t opts = LJ_LOCK_OPTIONS_INIT;
  opts.gcloud_env = const_cast<char* const*>(cx.host().environment);
  lj_lock_verdict_t v{};
  lj_error_t* err = nullptr;
  if (args.has("--store")) {
    if (args.operands.size() != 1) return cx.usage("with --store, one KEY is required");
    int exit = exit_ok;
    StoreHandle store;
    if ((store.p = open_store(cx, args, &exit)) == nullptr) return exit;
    const std::string& key = args.operands[0];
    int rc = lj_lock_judge_stored(&v, nullptr, nullptr, nullptr, store.p, key.data(), key.size(), now_ms, &opts, &err);
    if (rc == LJ_ENOTFOUND) {
      lj_error_destroy(err);
      cx.note(fmt::format("no lock at {}", key));
      return exit_no;
    }
    if (rc == LJ_EUSER) {
      cx.failed("judging the lock", rc, err);
      return exit_unknown;  // no verdict: never "break"
    }
    if (rc != LJ_OK) return cx.store_failed(fmt::format("reading {}", key), rc, err);
    return say_verdict(cx, v);
  }
  if (args.operands.size() > 1) return cx.usage(fmt::format("one FILE at most, not also {}", args.operands[1]));
  std::optional<std::string> path;
  if (!args.operands.empty()) path = args.operands[0];
  auto read = read_input(cx, path);
  if (!read) return cx.interrupted() ? exit_interrupted : exit_failed;
  const std::string body = file_store_value(std::move(*read));
  int rc = lj_lock_judge(&v, body.data(), body.size(), now_ms, &opts, &err);
  if (rc != LJ_OK) {
    cx.failed("judging the body", rc, err);
    return rc == LJ_EINVAL ? exit_usage : exit_unknown;  // no verdict: never "break"
  }
  return say_verdict(cx, v);
}

// lock acquire --store URL KEY: the lock for this shell (--pid), once.
int run_acquire(Context& cx, const Args& args) {
  if (args.operands.size() != 1) return cx.usage("one KEY is required");
  const std::string& key = args.operands[0];
  int64_t now_ms, lease_ms;
  if (int rc = now_of(cx, args, now_ms); rc != exit_ok) return rc;
  if (int rc = lease_ms_of(cx, args, lease_ms); rc != exit_ok) return rc;
  int64_t wait_ms = 0;
  if (int rc = wait_ms_of(cx, args, wait_ms); rc != exit_ok) return rc;
  const bool waiting = args.has("--wait");
  int conflict = exit_no;
  if (int rc = conflict_exit_of(cx, args, conflict); rc != exit_ok) return rc;
  const bool flock_code = args.has("--conflict-exit-code");
  if (waiting && args.has("--now")) return cx.usage("--wait takes now from the clock: no --now with it");
  int32_t pid = cx.host().self_pid;
  if (auto p = args.value("--pid")) {
    auto parsed = pid_arg(*p);
    if (!parsed) return cx.usage(fmt::format("--pid {} is not a pid", *p));
    pid = *parsed;
  }
  std::string purpose;
  if (auto p = args.value("--purpose")) {
    purpose = *p;
  } else if (int rc = key.empty() ? exit_ok : default_purpose(cx, key, pid, purpose); rc != exit_ok) {
    return rc;
  }
  int exit = exit_ok;
  StoreHandle store;
  if ((store.p = open_store(cx, args, &exit)) == nullptr) return exit;
  lj_lock_holder_t holder = LJ_LOCK_HOLDER_INIT;
  holder.lease_ms = lease_ms;
  holder.pid = pid;
  lj_lock_options_t opts = LJ_LOCK_OPTIONS_INIT;
  opts.gcloud_env = const_cast<char* const*>(cx.host().environment);
  LockHandle lock;
  lj_lock_acquisition_t a{};
  lj_error_t* err = nullptr;
  int rc;
  if (waiting) {
    LockWaitCalls wait(cx, wait_ms);
    rc = lj_lock_acquire_wait(&lock.p, &a, store.p, key.data(), key.size(), purpose.data(), purpose.size(), &holder,
                              &wait.options, &opts, &err);
  } else {
    rc = lj_lock_acquire(&lock.p, &a, store.p, key.data(), key.size(), purpose.data(), purpose.size(), &holder, now_ms,
                         &opts, &err);
  }
  if (rc == LJ_EUSER && waiting) {
    lj_error_destroy(err);
    cx.note(fmt::format("interrupted while waiting for {}", key));
    return exit_interrupted;
  }
  if (rc != LJ_OK) return cx.failed(fmt::format("acquiring {}", key), rc, err);
  std::string why = a.has_verdict && a.verdict.why != nullptr ? std::string(a.verdict.why, a.verdict.why_len) : "";
  int outcome = a.outcome;
  uint64_t broke = a.broke_at;
  lj_lock_acquisition_clear(&a);
  switch (outcome) {
    case LJ_ACQUIRE_ACQUIRED: {
      char* id = nullptr;
      size_t n = 0;
      lj_lock_id(&id, &n, lock.p, nullptr);
      std::string id_text = taken(id, n);
      uint64_t token = lj_lock_revision(lock.p);
      if (cx.json)
        cx.out(fmt::format(
            R"({{"key":{},"outcome":"acquired","fencing_token":{},"revision":{},"id":{},"pid":{},"lease_ms":{},"broke_at":{}}})",
            quote(key), token, token, quote(id_text), pid, lease_ms, broke));
      else
        cx.out(fmt::format("acquired {}: fencing token {}, id {}{}", terminal_text(key), token, terminal_text(id_text),
                           broke != 0 ? fmt::format(" (broke the body at revision {}: {})", broke, terminal_text(why))
                                      : ""));
      return exit_ok;
    }
    case LJ_ACQUIRE_HELD:
    case LJ_ACQUIRE_UNKNOWN: {
      const char* name = outcome == LJ_ACQUIRE_HELD ? "held" : "unknown";
      if (cx.json)
        cx.out(fmt::format(R"({{"key":{},"outcome":"{}","why":{}{}}})", quote(key), name, quote(capped(why)),
                           waiting ? R"(,"wait":"ended")" : ""));
      else
        cx.out(fmt::format("{} {}: {}{}", name, terminal_text(key), terminal_text(why),
                           waiting ? fmt::format(" (the wait of {} ended)", duration_text(wait_ms)) : ""));
      if (waiting) return flock_code ? conflict : exit_wait_ended;
      return outcome == LJ_ACQUIRE_HELD ? conflict : exit_unknown;
    }
    default:
      if (waiting) {
        cx.out(cx.json ? fmt::format(R"({{"key":{},"outcome":"lost-race","wait":"ended"}})", quote(key))
                       : fmt::format("lost the race for {} as the wait of {} ended", terminal_text(key),
                                     duration_text(wait_ms)));
        return flock_code ? conflict : exit_wait_ended;
      }
      if (cx.json)
        cx.out(fmt::format(R"({{"key":{},"outcome":"lost-race","why":"another writer moved the key meanwhile"}})",
                           quote(key)));
      else
        cx.out(fmt::format("lost the race for {}: another writer moved the key meanwhile", key));
      return flock_code ? conflict : exit_changed;
  }
}

// The lock taken before under --id ID, for renew and release.
int open_held(Context& cx, const Args& args, StoreHandle& store, LockHandle& lock, std::string& key, int64_t lease_ms) {
  if (args.operands.size() != 1) return cx.usage("one KEY is required");
  key = args.operands[0];
  auto id = args.value("--id");
  if (!id || id->empty()) return cx.usage("--id ID is required (the id lock acquire gave)");
  int exit = exit_ok;
  if ((store.p = open_store(cx, args, &exit)) == nullptr) return exit;
  lj_error_t* err = nullptr;
  int rc = lj_lock_open(&lock.p, store.p, key.data(), key.size(), id->data(), id->size(), lease_ms, &err);
  if (rc != LJ_OK) return cx.failed(fmt::format("the lock {}", key), rc, err);
  return exit_ok;
}

int run_renew(Context& cx, const Args& args) {
  int64_t now_ms, lease_ms;
  if (int rc = now_of(cx, args, now_ms); rc != exit_ok) return rc;
  if (int rc = lease_ms_of(cx, args, lease_ms); rc != exit_ok) return rc;
  if (!args.has("--lease")) lease_ms = LJ_LOCK_LEASE_AS_TAKEN;
  StoreHandle store;
  LockHandle lock;
  std::string key;
  if (int rc = open_held(cx, args, store, lock, key, lease_ms); rc != exit_ok) return rc;
  lj_error_t* err = nullptr;
  int rc = lj_lock_renew(lock.p, now_ms, &err);
  if (rc != LJ_OK) return cx.failed(fmt::format("renewing {}", key), rc, err);
  uint64_t token = lj_lock_revision(lock.p);
  lease_ms = lj_lock_lease_ms(lock.p);
  if (cx.json)
    cx.out(fmt::format(R"({{"key":{},"outcome":"renewed","fencing_token":{},"revision":{},"lease_ms":{}}})", quote(key),
                       token, token, lease_ms));
  else
    cx.out(fmt::format("renewed {}: fencing token {}, the lease {} from now", terminal_text(key), token,
                       duration_text(lease_ms)));
  return exit_ok;
}

int run_release(Context& cx, const Args& args) {
  StoreHandle store;
  LockHandle lock;
  std::string key;
  if (int rc = open_held(cx, args, store, lock, key, 0); rc != exit_ok) return rc;
  lj_error_t* err = nullptr;
  int rc = lj_lock_release(lock.p, &err);
  if (rc != LJ_OK) return cx.failed(fmt::format("releasing {}", key), rc, err);
  cx.out(cx.json ? fmt::format(R"({{"key":{},"outcome":"released"}})", quote(key)) : fmt::format("released {}", key));
  return exit_ok;
}

std::vector<Option> with(std::vector<Option> a, const std::vector<Option>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

}  // namespace

std::vector<Verb> lock_verbs() {
  const Option now = {"--now", "TIME", "now (RFC 3339; default: the clock)"};
  const Option lease = {"--lease", "D",
                        "the lease: 90, 90s, 500ms, 5m, 2h, up to a day (default 10m); the body's leaseUntil is "
                        "now + the lease + 5m for clock skew between holder and judge"};
  const Option renew_lease = {"--lease", "D", "the lease to renew with (default: the one the lock was taken with)"};
  const Option id = {"--id", "ID", "the acquisition id lock acquire gave (required)"};
  return {
      {"lock judge", "[FILE|-]", "may the lock with this body be broken? break, held or unknown",
       with({now}, store_options), run_judge,
       "Judges a lock body (FILE or stdin) on this machine, asking Cloud Run (gcloud) where it\n"
       "names an execution; with --store URL, the lock at KEY as lock acquire judges it: on etcd\n"
       "the key's store lease first (a body whose lease ended by this clock is held lease_runs\n"
       "while etcd keeps the lease). Text: `<kind> <reason> <why>`.\n"
       "Exit 0 break, 1 held (\"only a person can remove it\" when so), 3 unknown."},
      {"lock acquire", "KEY", "take the lock at KEY for this shell, once",
       with({{"--purpose", "TEXT", "what the lock is for (in its body)"},
             lease,
             {"--pid", "PID", "the holder process (default: this shell)"},
             {"--wait", "D", "while the lock is held, try again until D has passed (default: one try)"},
             conflict_exit_option,
             now},
            store_options),
       run_acquire,
       "Creates the lock, or breaks a body whose holder is provably gone and creates ours.\n"
       "Prints the fencing token (the body's revision) and the acquisition id renew and\n"
       "release take. Exit 1 held by a live holder, 3 its holder unknown, 5 a lost race.\n"
       "With --wait D: a live holder is waited on (tried again with a backoff of 50 ms up to\n"
       "1 s), one provably gone broken at once; exit 8 when D passed without the lock,\n"
       "130 when interrupted."},
      {"lock renew", "KEY", "move the lease of a lock taken before forward", with({id, renew_lease, now}, store_options),
       run_renew, "Exit 5 when the lock is no longer ours (broken or rewritten), 1 when there is none."},
      {"lock release", "KEY", "remove a lock taken before, while it is still ours", with({id}, store_options),
       run_release, "Exit 5 when the lock is someone else's now, 1 when there is none."},
  };
}

}  // namespace leasejudge::cli
