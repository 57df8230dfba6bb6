// The lock verbs people reach for to see and keep a lock (etcdctl's and flock(1)'s):
// lock show KEY, lock list [PREFIX], lock hold KEY.
#include <simdjson.h>

#include <array>
#include <chrono>
#include <mutex>
#include <thread>

#include "command.hpp"

namespace leasejudge::cli {

namespace {

// One lock as show and list say it: the body's fields, its revision and the verdict now.
struct LockRow {
  std::string key;
  std::uint64_t revision = 0;
  bool readable = false;
  std::string body;  // the body as the schema reads it (JSON), "" when not readable
  std::string purpose, holder, id;
  std::optional<std::int64_t> lease_end_ms;
  int kind = 0, reason = 0, manual = 0;
  std::string why;
};

std::string field(simdjson::dom::element e, std::string_view name) {
  std::string_view s;
  if (e[name].get(s) != simdjson::SUCCESS) return {};
  return std::string(s);
}

// The holder as one phrase: an execution by its name and region, a process by its
// host and pid.
std::string holder_of(simdjson::dom::element body) {
  simdjson::dom::element ex;
  if (body["execution"].get(ex) == simdjson::SUCCESS && ex.is_object())
    return fmt::format("execution {} ({})", field(ex, "name"), field(ex, "region"));
  std::string host = field(body, "host");
  double pid = 0;
  bool has_pid = body["pid"].get(pid) == simdjson::SUCCESS;
  if (host.empty() && !has_pid) return {};
  return fmt::format("{}{}{}", host.empty() ? "a host unnamed" : host, has_pid ? " pid " : "",
                     has_pid ? fmt::format("{}", pid) : "");
}

// The body's fields into row (row.readable false when it is no lock body).
void read_body(LockRow& row, std::string_view value) {
  char* parsed = nullptr;
  size_t len = 0;
  if (lj_lock_body_parse(&parsed, &len, value.data(), value.size(), nullptr) != LJ_OK) return;
  row.body = taken(parsed, len);
  simdjson::dom::parser parser;
  simdjson::dom::element body;
  if (parser.parse(row.body).get(body) != simdjson::SUCCESS) return;
  row.readable = true;
  row.purpose = field(body, "purpose");
  row.id = field(body, "id");
  row.holder = holder_of(body);
  std::string until = field(body, "leaseUntil");
  std::int64_t ms = 0;
  if (!until.empty() && lj_lock_time_parse(&ms, until.data(), until.size(), nullptr) == LJ_OK) row.lease_end_ms = ms;
}

// The verdict into row; v cleared.
void take_verdict(LockRow& row, lj_lock_verdict_t& v) {
  row.kind = v.kind;
  row.reason = v.reason;
  row.manual = v.manual_removal;
  row.why = v.why != nullptr ? std::string(v.why, v.why_len) : std::string();
  lj_lock_verdict_clear(&v);
}

lj_lock_options_t judge_options(const Context& cx) {
  lj_lock_options_t opts = LJ_LOCK_OPTIONS_INIT;
  opts.gcloud_env = const_cast<char* const*>(cx.host().environment);
  return opts;
}

// The row of the body value at key, judged at now_ms by its body alone. LJ_OK or the
// judge's code.
int row_of(const Context& cx, LockRow& row, std::string_view value, std::int64_t now_ms, lj_error_t** err) {
  read_body(row, value);
  const lj_lock_options_t opts = judge_options(cx);
  lj_lock_verdict_t v{};
  int rc = lj_lock_judge(&v, value.data(), value.size(), now_ms, &opts, err);
  if (rc != LJ_OK) return rc;
  take_verdict(row, v);
  return LJ_OK;
}

// The row of the lock stored at row.key, read and judged as acquire judges it: on a
// store with leases (etcd) the key's store lease first, so that a body whose lease
// ended by this machine's clock is no break while the store lease runs. LJ_OK, or
// LJ_ENOTFOUND (no lock), a store's code, the judge's.
int stored_row_of(const Context& cx, lj_store_t* store, LockRow& row, std::int64_t now_ms, lj_error_t** err) {
  const lj_lock_options_t opts = judge_options(cx);
  lj_lock_verdict_t v{};
  char* value = nullptr;
  size_t len = 0;
  int rc =
      lj_lock_judge_stored(&v, &row.revision, &value, &len, store, row.key.data(), row.key.size(), now_ms, &opts, err);
  if (rc != LJ_OK) return rc;
  read_body(row, taken(value, len));
  take_verdict(row, v);
  return LJ_OK;
}

// The row as one JSON line: its values JSON values, the body an object (null when
// it is no lock body), the why capped.
std::string row_json(const LockRow& r) {
  return fmt::format(
      R"({{"key":{},"revision":{},"fencing_token":{},"holder":{},"purpose":{},"id":{},"lease_end_ms":{},"lease_end":{},"verdict":{{"kind":"{}","reason":"{}","manualRemoval":{},"why":{}}},"body":{}}})",
      quote(r.key), r.revision, r.revision, r.readable ? quote(r.holder) : "null",
      r.readable ? quote(r.purpose) : "null", r.readable && !r.id.empty() ? quote(r.id) : "null",
      r.lease_end_ms ? std::to_string(*r.lease_end_ms) : "null",
      r.lease_end_ms ? quote(instant_text(*r.lease_end_ms)) : "null", lj_lock_kind_name(r.kind),
      lj_lock_reason_code(r.reason), r.manual ? "true" : "false", quote(capped(r.why)),
      r.readable ? r.body : "null");
}

// The widest a cell of lock list's table gets, in columns of a terminal.
constexpr std::size_t column_cap = 40;

// How many columns text takes on a terminal, as fmt counts them when it pads (a wide
// character two): the spaces "{:<N}" adds to text of N bytes tell it.
std::size_t columns_of(std::string_view text) {
  std::size_t padded = fmt::formatted_size("{:<{}}", text, text.size());
  return 2 * text.size() - padded;
}

// A cell of the table: the text escaped for a terminal, cut (with its marker, which
// says how long the whole is) to column_cap columns.
std::string cell(std::string_view bytes) {
  std::string whole = terminal_text(bytes);
  if (columns_of(whole) <= column_cap) return whole;
  for (std::size_t keep = std::min(bytes.size(), column_cap); keep > 0; --keep) {
    std::string cut = terminal_text(bytes, keep);
    if (columns_of(cut) <= column_cap) return cut;
  }
  return terminal_text(bytes, 0);
}

std::string lease_end_text(const LockRow& r, std::int64_t now_ms) {
  if (!r.lease_end_ms) return "absent";
  std::int64_t left = *r.lease_end_ms - now_ms;
  return fmt::format("{} ({})", instant_text(*r.lease_end_ms),
                     left >= 0 ? fmt::format("in {}", duration_text(left)) : fmt::format("{} ago", duration_text(-left)));
}

// lock show KEY: the lock at KEY, one field a line.
void show_text(const Context& cx, const LockRow& r, std::int64_t now_ms) {
  cx.out(fmt::format("key:           {}", terminal_text(r.key)));
  cx.out(fmt::format("holder:        {}", r.readable ? terminal_text(r.holder) : "(no lock body)"));
  cx.out(fmt::format("purpose:       {}", r.readable ? terminal_text(r.purpose) : "absent"));
  cx.out(fmt::format("id:            {}", r.id.empty() ? "absent" : terminal_text(r.id)));
  cx.out(fmt::format("lease end:     {}", lease_end_text(r, now_ms)));
  cx.out(fmt::format("fencing token: {} (the revision)", r.revision));
  cx.out(fmt::format("verdict:       {} {}", lj_lock_kind_name(r.kind), lj_lock_reason_code(r.reason)));
  cx.out(fmt::format("why:           {}", terminal_text(r.why)));
}

int now_ms_of(const Context& cx, const Args& args, std::int64_t& now_ms) {
  now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
               .count();
  if (auto now = args.value("--now")) {
    auto ns = time_arg(*now);
    if (!ns) return cx.usage(fmt::format("--now {} is no RFC 3339 time", terminal_text(*now)));
    now_ms = *ns / 1000000 - (*ns % 1000000 < 0 ? 1 : 0);
  }
  return exit_ok;
}

int run_show(Context& cx, const Args& args) {
  if (args.operands.size() != 1) return cx.usage("one KEY is required");
  std::int64_t now_ms = 0;
  if (int rc = now_ms_of(cx, args, now_ms); rc != exit_ok) return rc;
  int exit = exit_ok;
  StoreHandle store;
  if ((store.p = open_store(cx, args, &exit)) == nullptr) return exit;
  LockRow row;
  row.key = args.operands[0];
  lj_error_t* err = nullptr;
  int rc = stored_row_of(cx, store.p, row, now_ms, &err);
  if (rc == LJ_ENOTFOUND) {
    lj_error_destroy(err);
    cx.note(fmt::format("no lock at {}", terminal_text(row.key)));
    return exit_no;
  }
  if (rc == LJ_EUSER) return cx.failed("judging the body", rc, err);
  if (rc != LJ_OK) return cx.store_failed(fmt::format("reading {}", terminal_text(row.key)), rc, err);
  if (cx.json)
    cx.out(row_json(row));
  else
    show_text(cx, row, now_ms);
  return exit_ok;
}

struct ListRun {
  const Context* cx = nullptr;
  std::int64_t now_ms = 0;
  std::vector<LockRow> rows;
  int failed = LJ_OK;
  lj_error_t* err = nullptr;
};

int list_batch(const char* buffer, size_t, size_t, const lj_step_entry_t* entries, size_t count, void* payload) {
  auto* run = static_cast<ListRun*>(payload);
  for (size_t i = 0; i < count; ++i) {
    const lj_step_entry_t& e = entries[i];
    LockRow row;
    row.key.assign(buffer + e.key_offset, e.key_len);
    row.revision = e.revision;
    int rc = row_of(*run->cx, row, std::string_view(buffer + e.value_offset, e.value_len), run->now_ms, &run->err);
    if (rc != LJ_OK) {
      run->failed = rc;
      return 1;
    }
    run->rows.push_back(std::move(row));
  }
  return run->cx->interrupted() ? 1 : 0;
}

// The table: each column as wide as its widest cell (at most column_cap), so that
// every row keeps to its columns, one row a line.
void list_text(const Context& cx, const std::vector<LockRow>& rows, std::int64_t now_ms) {
  using Row = std::array<std::string, 6>;
  std::vector<Row> table{{"KEY", "HOLDER", "PURPOSE", "LEASE END", "TOKEN", "VERDICT"}};
  for (const auto& r : rows)
    table.push_back({cell(r.key), r.readable ? cell(r.holder) : "(no lock body)", r.readable ? cell(r.purpose) : "",
                     lease_end_text(r, now_ms), std::to_string(r.revision),
                     fmt::format("{} {}", lj_lock_kind_name(r.kind), lj_lock_reason_code(r.reason))});
  std::array<std::size_t, 6> width{};
  for (const Row& row : table)
    for (std::size_t c = 0; c < width.size(); ++c) width[c] = std::max(width[c], columns_of(row[c]));
  for (const Row& row : table)
    cx.out(fmt::format("{:<{}}  {:<{}}  {:<{}}  {:<{}}  {:>{}}  {}", row[0], width[0], row[1], width[1], row[2],
                       width[2], row[3], width[3], row[4], width[4], row[5]));
}

int run_list(Context& cx, const Args& args) {
  if (args.operands.size() > 1) return cx.usage(fmt::format("one PREFIX at most, not also {}", args.operands[1]));
  std::string prefix = args.operands.empty() ? "" : args.operands[0];
  ListRun run;
  run.cx = &cx;
  if (int rc = now_ms_of(cx, args, run.now_ms); rc != exit_ok) return rc;
  int exit = exit_ok;
  StoreHandle store;
  if ((store.p = open_store(cx, args, &exit)) == nullptr) return exit;
  lj_error_t* err = nullptr;
  int rc = lj_store_scan(store.p, prefix.data(), prefix.size(), list_batch, &run, &err);
  if (run.failed != LJ_OK) {
    lj_error_destroy(err);
    return cx.failed("judging a body", run.failed, run.err);
  }
  if (rc == LJ_EUSER && cx.interrupted()) {
    lj_error_destroy(err);
    return exit_interrupted;
  }
  if (rc != LJ_OK) return cx.store_failed("reading the store", rc, err);
  // A break read in bulk is judged again as acquire would judge it (its store lease
  // first, on etcd): the few locks that may be broken, not every one, read twice.
  std::vector<LockRow> rows;
  for (auto& row : run.rows) {
    if (row.kind == LJ_LOCK_BREAK) {
      rc = stored_row_of(cx, store.p, row, run.now_ms, &err);
      if (rc == LJ_ENOTFOUND) {  // gone since the bulk read
        lj_error_destroy(err);
        continue;
      }
      if (rc == LJ_EUSER) return cx.failed("judging a body", rc, err);
      if (rc != LJ_OK) return cx.store_failed(fmt::format("reading {}", terminal_text(row.key)), rc, err);
    }
    rows.push_back(std::move(row));
  }
  run.rows = std::move(rows);
  if (cx.json) {
    for (const auto& r : run.rows) cx.out(row_json(r));
  } else {
    list_text(cx, run.rows, run.now_ms);
  }
  return exit_ok;
}

// --- lock hold ---------------------------------------------------------------------------

struct HoldLost {
  std::mutex mu;
  std::string why;
};

void on_hold_lost(int code, const char* message, size_t len, void* payload) {
  auto* lost = static_cast<HoldLost*>(payload);
  std::lock_guard<std::mutex> g(lost->mu);
  lost->why = fmt::format("{}: {}", lj_strerror(code), std::string_view(message, len));
}

// Renew the lock until an interrupt (exit_ok) or its loss (exit_lease_lost).
int keep(Context& cx, lj_lock_t* lock, const std::string& key) {
  HoldLost lost;
  lj_lock_heartbeat_t* beat = nullptr;
  lj_error_t* err = nullptr;
  if (int rc = lj_lock_heartbeat_start(&beat, lock, on_hold_lost, &lost, &err); rc != LJ_OK) {
    int code = cx.failed(fmt::format("renewing {}", terminal_text(key)), rc, err);
    lj_lock_release(lock, nullptr);
    return code;
  }
  bool was_lost = false;
  while (!cx.interrupted()) {
    if (lj_lock_heartbeat_lost(beat) != 0) {
      was_lost = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  lj_lock_heartbeat_destroy(beat);
  if (was_lost) {
    std::lock_guard<std::mutex> g(lost.mu);
    cx.note(fmt::format("lost the lock {}: {}", terminal_text(key),
                        lost.why.empty() ? "the lease ended while a renewal was still unanswered" : lost.why));
    lj_lock_release(lock, nullptr);  // still ours when the store only did not answer in time
    return exit_lease_lost;
  }
  if (int rc = lj_lock_release(lock, &err); rc != LJ_OK)
    return cx.failed(fmt::format("releasing {}", terminal_text(key)), rc, err);
  cx.out(cx.json ? fmt::format(R"({{"key":{},"outcome":"released"}})", quote(key))
                 : fmt::format("released {}", terminal_text(key)));
  return exit_ok;
}

int run_hold(Context& cx, const Args& args) {
  if (args.operands.size() != 1) return cx.usage("one KEY is required");
  const std::string& key = args.operands[0];
  std::int64_t lease_ms = 0, wait_ms = 0;
  if (int rc = lease_ms_of(cx, args, lease_ms); rc != exit_ok) return rc;
  if (int rc = wait_ms_of(cx, args, wait_ms); rc != exit_ok) return rc;
  int conflict = exit_no;
  if (int rc = conflict_exit_of(cx, args, conflict); rc != exit_ok) return rc;
  std::string purpose = args.value("--purpose").value_or(fmt::format("leasejudge lock hold {}", key));
  int exit = exit_ok;
  StoreHandle store;
  if ((store.p = open_store(cx, args, &exit)) == nullptr) return exit;
  lj_lock_holder_t holder = LJ_LOCK_HOLDER_INIT;
  holder.lease_ms = lease_ms;
  holder.pid = 0;  // this process: it holds the lock as long as it runs
  LockWaitCalls wait(cx, wait_ms);
  lj_lock_options_t opts = LJ_LOCK_OPTIONS_INIT;
  opts.gcloud_env = const_cast<char* const*>(cx.host().environment);
  LockHandle lock;
  lj_lock_acquisition_t a{};
  lj_error_t* err = nullptr;
  int rc = lj_lock_acquire_wait(&lock.p, &a, store.p, key.data(), key.size(), purpose.data(), purpose.size(), &holder,
                                &wait.options, &opts, &err);
  if (rc == LJ_EUSER) {
    lj_error_destroy(err);
    cx.note(fmt::format("interrupted while waiting for {}", terminal_text(key)));
    return exit_interrupted;
  }
  if (rc != LJ_OK) return cx.failed(fmt::format("acquiring {}", terminal_text(key)), rc, err);
  std::string why = a.has_verdict && a.verdict.why != nullptr ? std::string(a.verdict.why, a.verdict.why_len) : "";
  const int outcome = a.outcome;
  lj_lock_acquisition_clear(&a);
  if (outcome != LJ_ACQUIRE_ACQUIRED) {
    const char* name = outcome == LJ_ACQUIRE_HELD ? "held" : outcome == LJ_ACQUIRE_UNKNOWN ? "unknown" : "lost-race";
    if (cx.json)
      cx.out(fmt::format(R"({{"key":{},"outcome":"{}","why":{}}})", quote(key), name, quote(capped(why))));
    else
      cx.out(fmt::format("{} {}: {}", name, terminal_text(key), terminal_text(why)));
    if (args.has("--wait")) return args.has("--conflict-exit-code") ? conflict : exit_wait_ended;
    return outcome == LJ_ACQUIRE_UNKNOWN ? exit_unknown : conflict;
  }
  char* id = nullptr;
  size_t n = 0;
  lj_lock_id(&id, &n, lock.p, nullptr);
  std::string id_text = taken(id, n);
  const std::uint64_t token = lj_lock_revision(lock.p);
  cx.out(cx.json ? fmt::format(R"({{"key":{},"outcome":"acquired","fencing_token":{},"revision":{},"id":{},"lease_ms":{}}})",
                               quote(key), token, token, quote(id_text), lease_ms)
                 : fmt::format("{}", token));
  std::fflush(cx.host().out);  // read at once by whoever started the hold
  return keep(cx, lock.p, key);
}

}  // namespace

std::vector<Verb> lock_show_verbs() {
  const Option now = {"--now", "TIME", "judge at TIME (RFC 3339; default: the clock)"};
  std::vector<Option> show_options = {now};
  show_options.insert(show_options.end(), store_options.begin(), store_options.end());
  std::vector<Option> hold_options = {
      {"--wait", "D", "while the lock is held, try again until D has passed (default: one try)"},
      {"--lease", "D", "the lease: 90, 90s, 500ms, 5m, 2h, up to a day (default 10m)"},
      {"--purpose", "TEXT", "what the lock is for (in its body)"},
      conflict_exit_option,
  };
  hold_options.insert(hold_options.end(), store_options.begin(), store_options.end());
  return {
      {"lock show", "KEY", "who holds the lock at KEY: holder, purpose, lease end, fencing token, verdict",
       show_options, run_show,
       "Reads the lock at KEY and judges it now, as lock acquire would (on etcd, the key's store\n"
       "lease first). Text: one field a line, stored text escaped\n"
       "(control bytes and bytes of no UTF-8 as \\xNN) and cut at 4096 bytes; --json: one object\n"
       "(leasejudge(1) gives its schema). Exit 1 when there is no lock at KEY."},
      {"lock list", "[PREFIX]", "every lock under PREFIX, one row each, with its verdict", show_options, run_list,
       "Reads the keys under PREFIX (all without it) in one bulk read and judges each body now;\n"
       "a break is read again and judged as lock acquire would (on etcd, the store lease first).\n"
       "Text: a table (KEY HOLDER PURPOSE LEASE END TOKEN VERDICT), one row a line, each column\n"
       "as wide as its widest cell; a cell past 40 columns is cut there and says how long the\n"
       "whole is ([cut: N bytes in all]). --json: one object a lock, as lock show writes it. A\n"
       "key that holds no lock body is listed with the verdict held not_readable."},
      {"lock hold", "KEY", "take the lock, print its fencing token, keep it renewed until SIGTERM or SIGINT",
       hold_options, run_hold,
       "etcdctl's `lock NAME` without a command: takes the lock for this process (waiting as\n"
       "lock acquire --wait does), prints the fencing token on a line of its own, renews the\n"
       "lease every third of it and, on SIGTERM or SIGINT, releases the lock and exits 0.\n"
       "Exit 9 when the lock is lost (someone else's body, or the lease ended unrenewed);\n"
       "1 (or --conflict-exit-code N) when held by another, 8 when --wait ended without it."},
  };
}

}  // namespace leasejudge::cli
