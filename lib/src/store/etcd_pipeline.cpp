// The etcd store's pipeline (leasejudge/store/etcd.hpp): writes grouped into txns of
// many keys, the txns in flight on a curl multi handle.
//
// Why it is safe to send a write again: a txn is atomic. When its answer says the
// compares did not all hold, its success branch wrote nothing, and its failure branch
// read each key at the txn's own revision, so which keys moved is exact; the others
// are known not written and go again. A txn whose answer did not come (or came to a
// request curl sent twice) may have landed whole: each of its writes is unknown and
// none is sent again.
//
// The txns go to the endpoints in turn, the one the store reached first first: each
// member then translates its share of the requests from JSON (etcd's gateway), where a
// single endpoint did it all for the cluster. An endpoint that refuses the connection
// (nothing was sent) is passed over for the others from then on.
#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <memory>
#include <optional>
#include <unordered_set>

#include "etcd_wire.hpp"
#include "leasejudge/json_text.hpp"

namespace leasejudge {

namespace {

using namespace etcd_wire;

// The bytes of keys and values a txn carries at most: etcd refuses a request over its
// --max-request-bytes (1.5 MiB by default), and base64 makes 4 bytes of 3.
constexpr std::size_t kTxnBytes = 768 * 1024;

enum class Op : std::uint8_t { update, remove, create };

const char* op_name(Op op) {
  return op == Op::remove ? "deletion" : op == Op::create ? "creation" : "update";
}

struct Write {
  std::string key, value;  // value: an update's or a create's
  Revision revision = 0;
  Op op = Op::update;
  bool sent = false;  // in a txn under way
  std::optional<WriteOutcome> outcome;
};

// A txn under way: the writes it carries (their sequence numbers), its request, and
// the handle it goes on.
struct Txn {
  std::vector<std::uint64_t> writes;
  std::string body, response;
  Http* http = nullptr;
  std::size_t endpoint = 0;  // the index in the pipeline's endpoints it went to
};

// etcd's refusal of a txn too large for it, before proposing it (nothing of it was
// written): too many operations (--max-txn-ops) or bytes (--max-request-bytes).
enum class TooLarge : std::uint8_t { no, ops, bytes };

TooLarge too_large(const Transfer& t, const std::string& response) {
  if (t.code != CURLE_OK || t.http != 400) return TooLarge::no;
  if (response.find("too many operations in txn request") != std::string::npos) return TooLarge::ops;
  if (response.find("request is too large") != std::string::npos) return TooLarge::bytes;
  return TooLarge::no;
}

class EtcdPipeline final : public WritePipeline {
 public:
  EtcdPipeline(EtcdStore::Connection& c, const PipelineOptions& options);
  ~EtcdPipeline() override;
  void update(std::string_view key, std::string_view value, Revision revision) override {
    send(key, value, revision, Op::update);
  }
  void remove(std::string_view key, Revision revision) override { send(key, {}, revision, Op::remove); }
  void create(std::string_view key, std::string_view value) override { send(key, value, 0, Op::create); }
  std::size_t in_flight() const override { return writes_.size(); }
  std::size_t ready() const override;
  bool broken() const override { return broken_; }
  std::optional<WriteOutcome> next() override;

 private:
  Write& at(std::uint64_t seq) { return writes_[seq - first_]; }
  void send(std::string_view key, std::string_view value, Revision revision, Op op);
  void close_open();
  void start_txns();
  void build(Txn& txn);
  void drive(int wait_ms) {
    m_.drive(wait_ms, [this](CURL* easy, CURLcode code) { finish(easy, code); });
  }
  void finish(CURL* easy, CURLcode code);
  void settle(Txn& txn, const Transfer& t);
  void settle_compares(Txn& txn, dom::element doc);
  void split(Txn& txn, TooLarge why);
  void all(const Txn& txn, WriteOutcome::Kind kind, const Error& e);
  void resolve(std::uint64_t seq, WriteOutcome::Kind kind, Error e, Revision revision = 0);
  void abandon();
  std::size_t next_endpoint();
  bool pass_over(Txn& txn, const Transfer& t);
  std::string where(const Write& w, std::size_t keys, std::size_t endpoint = 0) const;

  EtcdStore::Connection& c_;
  Multi m_;
  PipelineOptions options_;
  std::size_t txn_keys_, txns_in_flight_;
  std::vector<std::string> urls_;  // the txn URL of each endpoint, the store's current one first
  std::vector<bool> refused_;      // an endpoint that refused a connection: passed over
  std::size_t next_url_ = 0;
  std::deque<Write> writes_;                        // whose outcome next() has not given, in the order sent
  std::uint64_t first_ = 0;                         // writes_.front()'s sequence number
  std::vector<std::uint64_t> open_;                 // the next txn's writes, not sent yet
  std::unordered_set<std::string_view> open_keys_;  // their keys: etcd refuses a key twice in a txn
  std::size_t open_bytes_ = 0;
  std::deque<std::vector<std::uint64_t>> queued_;  // txns to send, oldest writes first
  std::vector<std::unique_ptr<Txn>> active_;       // txns in flight
  std::vector<std::unique_ptr<Http>> handles_;
  std::vector<Http*> free_;
  std::string full_key_, scratch_;
  dom::parser parser_;
  bool broken_ = false, noted_slow_ = false;
};

EtcdPipeline::EtcdPipeline(EtcdStore::Connection& c, const PipelineOptions& options)
    : c_(c),
      m_(c, "/v3/kv/txn"),
      options_(options),
      txn_keys_(std::max<std::size_t>(c.txn_keys.load(), 1)),
      txns_in_flight_(std::max<std::size_t>(c.o.txns_in_flight, 1)) {
  curl_multi_setopt(m_.multi, CURLMOPT_MAXCONNECTS, static_cast<long>(txns_in_flight_ + 4));
  std::lock_guard lock(c.mu);
  for (std::size_t i = 0; i < c.endpoints.size(); ++i)
    urls_.push_back(c.endpoints[(c.current + i) % c.endpoints.size()] + "/v3/kv/txn");
  refused_.assign(urls_.size(), false);
}

EtcdPipeline::~EtcdPipeline() {
  for (auto& txn : active_) curl_multi_remove_handle(m_.multi, txn->http->easy);
}

std::string EtcdPipeline::where(const Write& w, std::size_t keys, std::size_t endpoint) const {
  return fmt::format("etcd at {}: the {} of {}{}", urls_[endpoint], op_name(w.op), w.key,
                     keys > 1 ? fmt::format(" (in a txn of {} keys)", keys) : std::string());
}

void EtcdPipeline::resolve(std::uint64_t seq, WriteOutcome::Kind kind, Error e, Revision revision) {
  Write& w = at(seq);
  w.sent = false;
  w.outcome = WriteOutcome{kind, revision, std::move(e)};
}

void EtcdPipeline::send(std::string_view key, std::string_view value, Revision revision, Op op) {
  const std::uint64_t seq = first_ + writes_.size();
  Write& w = writes_.emplace_back();
  w.key.assign(key);
  w.op = op;
  w.revision = revision;
  if (key.empty())
    return resolve(seq, WriteOutcome::Kind::failed, Error{Errc::invalid_argument, "an etcd store key is empty"});
  if (revision == 0 && op != Op::create) {
    return resolve(seq, WriteOutcome::Kind::changed,
                   Error{Errc::changed, fmt::format("the key {} is not at revision 0", key)});
  }
  if (broken_) {
    return resolve(
        seq, WriteOutcome::Kind::failed,
        Error{Errc::store, where(w, 1) + ": not sent: an earlier write of the pipeline failed or is unknown"});
  }
  if (op != Op::remove) w.value.assign(value);
  const std::size_t bytes = key.size() + value.size();
  if (!open_.empty() && (open_keys_.count(w.key) > 0 || open_bytes_ + bytes > kTxnBytes)) close_open();
  open_.push_back(seq);
  open_keys_.insert(w.key);
  open_bytes_ += bytes;
  if (open_.size() >= txn_keys_) close_open();
  start_txns();
  drive(0);
}

// The open txn is complete: it goes in turn (in parts, when the txn size was lowered
// since it opened).
void EtcdPipeline::close_open() {
  if (open_.empty()) return;
  for (std::size_t from = 0; from < open_.size(); from += txn_keys_)
    queued_.emplace_back(open_.begin() + static_cast<std::ptrdiff_t>(from),
                         open_.begin() + static_cast<std::ptrdiff_t>(std::min(open_.size(), from + txn_keys_)));
  open_.clear();
  open_keys_.clear();
  open_bytes_ = 0;
}

void EtcdPipeline::start_txns() {
  while (!broken_ && !queued_.empty() && active_.size() < txns_in_flight_) {
    auto txn = std::make_unique<Txn>();
    txn->writes = std::move(queued_.front());
    queued_.pop_front();
    build(*txn);
    if (free_.empty()) {
      handles_.push_back(std::make_unique<Http>());
      free_.push_back(handles_.back().get());
    }
    txn->http = free_.back();
    free_.pop_back();
    txn->endpoint = next_endpoint();
    prepare_easy(*txn->http, urls_[txn->endpoint], m_.headers, m_.o, txn->body, m_.o.request_timeout);
    curl_easy_setopt(txn->http->easy, CURLOPT_PRIVATE, static_cast<void*>(txn.get()));
    curl_multi_add_handle(m_.multi, txn->http->easy);
    for (std::uint64_t seq : txn->writes) at(seq).sent = true;
    active_.push_back(std::move(txn));
    std::lock_guard lock(c_.stats_mu);
    ++c_.stats.txns;
    c_.stats.writes += active_.back()->writes.size();
    c_.stats.most_in_flight = std::max<std::uint64_t>(c_.stats.most_in_flight, active_.size());
  }
}

// The next endpoint in turn that has not refused a connection (the first when all have:
// pass_over fails the txn then).
std::size_t EtcdPipeline::next_endpoint() {
  for (std::size_t i = 0; i < urls_.size(); ++i) {
    const std::size_t e = (next_url_ + i) % urls_.size();
    if (!refused_[e]) {
      next_url_ = e + 1;
      return e;
    }
  }
  return 0;
}

// A txn whose endpoint refused the connection carried nothing to etcd: it goes again,
// first in turn, to the endpoints that have not refused one. False when none is left.
bool EtcdPipeline::pass_over(Txn& txn, const Transfer& t) {
  refused_[txn.endpoint] = true;
  if (std::find(refused_.begin(), refused_.end(), false) == refused_.end()) return false;
  if (options_.note) options_.note(where(at(txn.writes[0]), txn.writes.size(), txn.endpoint) + ": " + t.error +
                                   " (nothing was sent: the txns go to the other endpoints)");
  for (std::uint64_t seq : txn.writes) at(seq).sent = false;
  queued_.push_front(std::move(txn.writes));
  return true;
}

// The txn's request: each key's compare, each write in the success branch, and (for
// more than one key) each key's revisions read in the failure branch, which tell
// which compare failed.
void EtcdPipeline::build(Txn& txn) {
  std::string& out = txn.body;
  auto key_field = [&](const Write& w) {
    full_key_.assign(c_.key_prefix);
    full_key_ += w.key;
    append_bytes_field(out, "key", full_key_, scratch_);
  };
  out = "{\"compare\":[";
  for (std::size_t i = 0; i < txn.writes.size(); ++i) {
    const Write& w = at(txn.writes[i]);
    out += i == 0 ? "{" : ",{";
    key_field(w);
    out += w.op == Op::create ? R"(,"result":"EQUAL","target":"CREATE",)" : R"(,"result":"EQUAL","target":"MOD",)";
    append_int_field(out, w.op == Op::create ? "create_revision" : "mod_revision", w.revision);
    out += '}';
  }
  out += "],\"success\":[";
  for (std::size_t i = 0; i < txn.writes.size(); ++i) {
    const Write& w = at(txn.writes[i]);
    out += i == 0 ? "" : ",";
    out += w.op == Op::remove ? "{\"request_delete_range\":{" : "{\"request_put\":{";
    key_field(w);
    if (w.op != Op::remove) {
      out += ',';
      append_bytes_field(out, "value", w.value, scratch_);
    }
    out += "}}";
  }
  out += ']';
  if (txn.writes.size() > 1) {
    out += ",\"failure\":[";
    for (std::size_t i = 0; i < txn.writes.size(); ++i) {
      out += i == 0 ? "{\"request_range\":{" : ",{\"request_range\":{";
      key_field(at(txn.writes[i]));
      out += ",\"keys_only\":true}}";
    }
    out += ']';
  }
  out += '}';
}

void EtcdPipeline::finish(CURL* easy, CURLcode code) {
  void* p = nullptr;
  curl_easy_getinfo(easy, CURLINFO_PRIVATE, &p);
  auto it = std::find_if(active_.begin(), active_.end(), [&](const auto& txn) { return txn.get() == p; });
  if (it == active_.end()) return;
  std::unique_ptr<Txn> txn = std::move(*it);
  active_.erase(it);
  Transfer t = transfer_of(*txn->http, code);
  std::swap(txn->response, txn->http->response);
  free_.push_back(txn->http);
  txn->http = nullptr;
  settle(*txn, t);
  if (broken_)
    abandon();
  else
    start_txns();
}

// Each write of txn to the same outcome.
void EtcdPipeline::all(const Txn& txn, WriteOutcome::Kind kind, const Error& e) {
  const std::size_t n = txn.writes.size();
  for (std::uint64_t seq : txn.writes) {
    const Write& w = at(seq);
    resolve(seq, kind, Error{e.code, fmt::format("{}: {}", where(w, n, txn.endpoint), e.message)});
  }
  if (kind == WriteOutcome::Kind::failed || kind == WriteOutcome::Kind::unknown) broken_ = true;
}

// The outcomes the answer t (its body in txn.response) gives the txn's writes.
void EtcdPipeline::settle(Txn& txn, const Transfer& t) {
  const std::size_t n = txn.writes.size();
  if (TooLarge why = too_large(t, txn.response); why != TooLarge::no && n > 1) return split(txn, why);
  if (not_sent(t) && pass_over(txn, t)) return;
  if (t.code != CURLE_OK || t.http != 200) {
    Error e = transfer_error(t, txn.response, true, "the txn");
    return all(txn, e.code == Errc::unknown_outcome ? WriteOutcome::Kind::unknown : WriteOutcome::Kind::failed, e);
  }
  dom::element doc, header;
  if (parser_.parse(txn.response).get(doc) != simdjson::SUCCESS || !doc.is_object() ||
      doc["header"].get(header) != simdjson::SUCCESS) {
    return all(txn, WriteOutcome::Kind::unknown,
               Error{Errc::unknown_outcome, "an answer that is not etcd's (the write may have landed)"});
  }
  if (bool_field(doc, "succeeded")) {
    const Revision revision = int_field(header, "revision");
    for (std::uint64_t seq : txn.writes)
      resolve(seq, WriteOutcome::Kind::done, Error{Errc::ok, {}}, at(seq).op == Op::remove ? 0 : revision);
    return;
  }
  if (t.reconnected) {
    return all(txn, WriteOutcome::Kind::unknown,
               Error{Errc::unknown_outcome,
                     "a compare failed on a request curl sent again on a new connection: an "
                     "earlier copy may have landed"});
  }
  if (n == 1) {
    const Write& w = at(txn.writes[0]);
    Errc code = w.op == Op::create ? Errc::exists : Errc::changed;
    std::string why = w.op == Op::create ? "the key holds a value" : "the key moved since it was read";
    return resolve(txn.writes[0], WriteOutcome::Kind::changed, Error{code, fmt::format("{}: {}", where(w, 1, txn.endpoint), why)});
  }
  settle_compares(txn, doc);
}

// A txn whose compares did not all hold wrote nothing; its failure branch read each
// key at the txn's revision. A key that moved is changed (exists, for a create); the
// others, still as read, go again in a txn of their own, ahead of the txns queued.
void EtcdPipeline::settle_compares(Txn& txn, dom::element doc) {
  const std::size_t n = txn.writes.size();
  dom::array responses;
  if (doc["responses"].get(responses) != simdjson::SUCCESS || responses.size() != n) {
    return all(txn, WriteOutcome::Kind::failed,
               Error{Errc::store,
                     "etcd answered that a compare failed without the reads that say which (nothing "
                     "was written)"});
  }
  std::vector<std::uint64_t> again;
  std::size_t i = 0;
  for (dom::element r : responses) {
    const std::uint64_t seq = txn.writes[i++];
    const Write& w = at(seq);
    dom::element range, kv;
    dom::array kvs;
    bool found = r["response_range"].get(range) == simdjson::SUCCESS && range["kvs"].get(kvs) == simdjson::SUCCESS &&
                 kvs.size() > 0;
    if (found) kv = kvs.at(0);
    const bool holds = w.op == Op::create ? !found : found && int_field(kv, "mod_revision") == w.revision;
    if (holds) {
      again.push_back(seq);
    } else if (w.op == Op::create) {
      resolve(seq, WriteOutcome::Kind::changed,
              Error{Errc::exists, fmt::format("{}: the key holds a value (revision {})", where(w, n, txn.endpoint),
                                              int_field(kv, "mod_revision"))});
    } else {
      resolve(seq, WriteOutcome::Kind::changed,
              Error{Errc::changed, fmt::format("{}: the key moved since it was read (revision {}, now {})", where(w, n, txn.endpoint),
                                               w.revision, found ? int_field(kv, "mod_revision") : 0)});
    }
  }
  if (again.size() == n) {
    return all(txn, WriteOutcome::Kind::failed,
               Error{Errc::store,
                     "etcd answered that a compare failed, and its reads show every key as read "
                     "(nothing was written)"});
  }
  if (again.empty()) return;
  for (std::uint64_t seq : again) at(seq).sent = false;
  {
    std::lock_guard lock(c_.stats_mu);
    c_.stats.resent += again.size();
  }
  queued_.push_front(std::move(again));
}

// etcd refused the txn as too large before proposing it: its writes go again in
// parts, of the halved txn size for too many operations (the store keeps it from now
// on), in halves for too many bytes.
void EtcdPipeline::split(Txn& txn, TooLarge why) {
  const std::size_t n = txn.writes.size();
  std::size_t part = (n + 1) / 2;
  if (why == TooLarge::ops) {
    txn_keys_ = std::min(txn_keys_, std::max<std::size_t>(n / 2, 1));
    part = txn_keys_;
    std::size_t known = c_.txn_keys.load();
    while (known > txn_keys_ && !c_.txn_keys.compare_exchange_weak(known, txn_keys_)) {
    }
    if (options_.note) {
      options_.note(
          fmt::format("etcd at {} refused a txn of {} keys as too many operations (its --max-txn-ops): "
                      "txns of {} keys from now on",
                      m_.url, n, txn_keys_));
    }
  }
  for (std::uint64_t seq : txn.writes) at(seq).sent = false;
  // The refused txn's writes first, then the queued txns, each in parts of the txn
  // size now.
  std::deque<std::vector<std::uint64_t>> parts;
  auto cut = [&](const std::vector<std::uint64_t>& writes, std::size_t size) {
    for (std::size_t from = 0; from < writes.size(); from += size)
      parts.emplace_back(writes.begin() + static_cast<std::ptrdiff_t>(from),
                         writes.begin() + static_cast<std::ptrdiff_t>(std::min(writes.size(), from + size)));
  };
  cut(txn.writes, part);
  for (const auto& queued : queued_) cut(queued, txn_keys_);
  queued_ = std::move(parts);
  std::lock_guard lock(c_.stats_mu);
  ++c_.stats.split;
}

// The pipeline broke: every write not under way fails, unsent.
void EtcdPipeline::abandon() {
  close_open();
  for (const auto& txn : queued_) {
    for (std::uint64_t seq : txn) {
      const Write& w = at(seq);
      resolve(seq, WriteOutcome::Kind::failed,
              Error{Errc::store, where(w, 1) + ": not sent: an earlier write of the pipeline failed or is unknown"});
    }
  }
  queued_.clear();
}

std::size_t EtcdPipeline::ready() const {
  std::size_t n = 0;
  for (const Write& w : writes_) {
    if (!w.outcome) break;
    ++n;
  }
  return n;
}

std::optional<WriteOutcome> EtcdPipeline::next() {
  if (writes_.empty()) return std::nullopt;
  auto began = Clock::now();
  while (!writes_.front().outcome) {
    if (!writes_.front().sent) {  // waiting in a txn not sent yet: send it now
      close_open();
      start_txns();
    }
    drive(100);
    if (!noted_slow_ && options_.note && Clock::now() - began > std::chrono::seconds(1)) {
      noted_slow_ = true;
      options_.note(fmt::format("etcd at {}: a write's answer is slower than a second", m_.url));
    }
  }
  WriteOutcome o = std::move(*writes_.front().outcome);
  writes_.pop_front();
  ++first_;
  return o;
}

}  // namespace

std::unique_ptr<WritePipeline> EtcdStore::pipeline(const PipelineOptions& options) {
  return std::make_unique<EtcdPipeline>(*c_, options);
}

EtcdWriteStats EtcdStore::write_stats() const {
  std::lock_guard lock(c_->stats_mu);
  EtcdWriteStats s = c_->stats;
  s.txn_keys = c_->txn_keys.load();
  return s;
}

}  // namespace leasejudge
