// The NATS store's bulk reads (nats_store.hpp): the scan of a node's keys over a KV
// watch, and keys() and entries() over a walk of every key's last message.
#include <fmt/format.h>
#include <nats/nats.h>

#include <algorithm>
#include <string>

#include "nats_store.hpp"

namespace leasejudge {

using namespace nats_store;

namespace {

// A key listing fetches this many keys per request.
constexpr int kListBatch = 256;

}  // namespace

// One scan of a prefix "<key>.": a KV watch of its subjects (NatsStore::scan says the
// rules), each key's last value handed to the sink in batches.
struct NatsStore::Connection::Scan {
  Scan(Connection& c, const ScanSink& sink, const ScanOptions& options, ScanStats& st, std::string doing)
      : c(c), sink(sink), options(options), st(st), doing(std::move(doing)) {}

  Status begin(const Link& link, kvStore* kv, std::string_view prefix);
  Status read();

 private:
  Status quiet();
  Status take(kvEntry* e);
  Status flush();
  void say(std::string line) const {
    if (options.note) options.note(line);
  }

  Connection& c;
  const ScanSink& sink;
  const ScanOptions& options;
  ScanStats& st;
  const std::string doing;  // "reading the keys <prefix>* of"
  uint64_t last = 0;        // the bucket's last revision when the scan began
  int64_t start = 0;        // when the watch was first asked for
  WatcherHandle w;
  ScanBuffer buffer;
};

Status NatsStore::scan(std::string_view prefix, const ScanSink& sink, const ScanOptions& options, ScanStats* stats) {
  ScanStats local;
  ScanStats& st = stats != nullptr ? *stats : local;
  bool filterable = prefix.size() >= 2 && prefix.back() == '.' && valid_key(prefix.substr(0, prefix.size() - 1));
  if (!filterable) {
    // Keys hold only [-/_=.a-zA-Z0-9]: a prefix with another byte names none.
    for (char c : prefix)
      if (!key_byte(c)) return Status::success();
    return Store::scan(prefix, sink, options, stats);
  }
  auto l = c_->live(&options.note);
  if (!l.ok()) return std::move(l).error();
  auto kv = c_->kv_of(**l);
  if (!kv.ok()) return std::move(kv).error();
  Connection::Scan scan(*c_, sink, options, st, fmt::format("reading the keys {}* of", prefix));
  if (Status begun = scan.begin(**l, *kv, prefix); !begun.ok()) return begun;
  return scan.read();
}

// The bucket as of its last write now: keys written after it (this scan's caller's
// own writes among them) are left to the next scan. Then the watch of the prefix's
// keys, asked for again while the server is slow to start it, within list_ms.
Status NatsStore::Connection::Scan::begin(const Link& link, kvStore* kv, std::string_view prefix) {
  StreamInfoHandle si;
  jsErrCode jerr = kNoJsError;
  natsStatus s = js_GetStreamInfo(&si.p, link.js, c.stream.c_str(), nullptr, &jerr);
  if (s != NATS_OK) return c.failure(fmt::format("{} the bucket", doing), s, jerr);
  last = si.p->State.LastSeq;
  // A bucket of history 1 holds one message per key, its last: every message of the
  // prefix, in the stream's order, is each key's last once. Asked for so (the watch's
  // history), the server streams them from the first; asked for each key's last, it
  // first works out the last of every key under the prefix (on 400k messages, most of
  // the read's time before the first value comes).
  const bool one_per_key = si.p->Config != nullptr && si.p->Config->MaxMsgsPerSubject == 1;
  const std::string filter = fmt::format("{}>", prefix);
  start = steady_ms();
  kvWatchOptions wo;
  kvWatchOptions_Init(&wo);
  wo.IgnoreDeletes = true;  // a deleted or purged key holds no value
  wo.IncludeHistory = one_per_key;
  for (int attempt = 1;; ++attempt) {
    s = kvStore_Watch(&w.p, kv, filter.c_str(), &wo);
    if (s == NATS_OK) return Status::success();
    if (s != NATS_TIMEOUT || steady_ms() - start >= c.list_ms)
      return c.failure(fmt::format("{} the bucket", doing), s, kNoJsError);
    ++st.retries;
    say(fmt::format("{} the NATS bucket {}: the server did not start the read within {} ms (try {}); asking again",
                    doing, c.bucket, c.request_ms, attempt));
  }
}

// Every value the watch delivers, to the last the bucket held.
Status NatsStore::Connection::Scan::read() {
  for (;;) {
    EntryHandle e;
    natsStatus s = kvWatcher_Next(&e.p, w.p, std::min<int64_t>(kNoteAfterMs, c.request_ms));
    if (s == NATS_TIMEOUT) {
      if (Status waited = quiet(); !waited.ok()) return waited;
      continue;
    }
    if (s != NATS_OK) return c.failure(fmt::format("{} the bucket", doing), s, kNoJsError);
    if (e.p == nullptr) return flush();  // the last of the values the bucket held
    if (Status done = take(e.p); !done.ok()) return done;
  }
}

// Nothing came for a while: noted, and waited for again within list_ms in all.
Status NatsStore::Connection::Scan::quiet() {
  int64_t waited = steady_ms() - start;
  ++st.waits;
  if (waited >= c.list_ms) {
    return Status(Errc::store, fmt::format("{} the NATS bucket {} at {}: not complete within {} ms ({} keys read)",
                                           doing, c.bucket, c.servers, c.list_ms, st.keys));
  }
  say(fmt::format("{} the NATS bucket {}: nothing came for {} ms ({} keys read so far); waiting up to {} ms in all",
                  doing, c.bucket, std::min<int64_t>(kNoteAfterMs, c.request_ms), st.keys, c.list_ms));
  return Status::success();
}

// One key's last value into the batch, unless written after the scan began (skipped)
// or named against the key rules (rejected).
Status NatsStore::Connection::Scan::take(kvEntry* e) {
  Revision revision = kvEntry_Revision(e);
  if (revision > last) {
    ++st.skipped;
    return Status::success();
  }
  std::string_view key = kvEntry_Key(e);
  if (!valid_key(key)) {
    // Another client wrote it; no write of this store can name it: left.
    if (st.rejected++ == 0)
      say(fmt::format("{} the NATS bucket {}: the key {} breaks the NATS key rules; it is left as it is", doing,
                      c.bucket, key));
    return Status::success();
  }
  const void* data = kvEntry_Value(e);
  int len = kvEntry_ValueLen(e);
  std::string_view value = data != nullptr && len > 0
                               ? std::string_view(static_cast<const char*>(data), static_cast<std::size_t>(len))
                               : std::string_view();
  buffer.add(key, value, revision);
  ++st.keys;
  st.bytes += key.size() + value.size();
  return buffer.full(options) ? flush() : Status::success();
}

Status NatsStore::Connection::Scan::flush() { return buffer.hand_over(sink, st); }

// Walk the last message of every key (markers included: visit tells) with an
// ephemeral pull consumer that delivers the last message per subject, in batches
// the store asks for, so nothing floods the client however large the bucket.
// NATS_OK once the consumer has nothing pending.
//
// On a cluster that lost a node, the server may place the consumer on the dead
// node, which never answers its creation nor delivers. So an attempt that goes
// quiet for request_ms is abandoned and the walk starts over (after restart()
// drops what was gathered). Every third attempt waits request_ms longer: a large
// bucket takes the server a while to set a consumer up. The whole walk gives up
// after list_ms.
template <typename Restart, typename Visit>
natsStatus NatsStore::Connection::walk(const Link& l, bool meta_only, Restart&& restart, Visit&& visit) const {
  std::string filter = prefix + ">";
  int64_t start = steady_ms();
  for (int attempt = 0;; ++attempt) {
    int64_t patience = std::min(list_ms, request_ms * (1 + attempt / 3));
    natsStatus s = walk_once(l, filter, meta_only, patience, start, visit);
    if (s != NATS_TIMEOUT || steady_ms() - start >= list_ms) return s;
    restart();
  }
}

template <typename Visit>
natsStatus NatsStore::Connection::walk_once(const Link& l, const std::string& filter, bool meta_only, int64_t patience,
                                            int64_t start, Visit& visit) const {
  jsOptions jo;
  jsOptions_Init(&jo);
  jo.Wait = patience;
  jsSubOptions so;
  jsSubOptions_Init(&so);
  so.Stream = stream.c_str();
  so.Config.DeliverPolicy = js_DeliverLastPerSubject;
  so.Config.AckPolicy = js_AckNone;
  so.Config.HeadersOnly = meta_only;
  so.Config.MemoryStorage = true;
  // An abandoned consumer goes away by itself.
  so.Config.InactiveThreshold = std::max<int64_t>(2 * request_ms, 5000) * 1'000'000;
  SubHandle sub;
  jsErrCode jerr = kNoJsError;
  uint64_t pending = 0;
  natsStatus s = js_PullSubscribe(&sub.p, l.js, filter.c_str(), nullptr, &jo, &so, &jerr);
  if (s != NATS_OK) return s;
  {
    ConsumerInfoHandle ci;
    s = natsSubscription_GetConsumerInfo(&ci.p, sub.p, &jo, &jerr);
    if (s != NATS_OK) return s;
    pending = ci.p->NumPending;
  }
  if (pending == 0) {  // an empty bucket
    natsSubscription_Unsubscribe(sub.p);
    return NATS_OK;
  }
  return walk_batches(sub.p, pending, patience, start, visit);
}

// The consumer's messages, a batch at a time, until none is pending (the consumer then
// deleted) or list_ms has passed since start (NATS_TIMEOUT).
template <typename Visit>
natsStatus NatsStore::Connection::walk_batches(natsSubscription* sub, uint64_t pending, int64_t patience, int64_t start,
                                               Visit& visit) const {
  for (;;) {
    int64_t left = list_ms - (steady_ms() - start);
    if (left <= 0) return NATS_TIMEOUT;
    int64_t wait = std::min(left, patience);
    // Never ask for more than is pending: a pull request waits for its batch to
    // fill until it expires.
    jsFetchRequest fr;
    jsFetchRequest_Init(&fr);
    fr.Batch = static_cast<int>(std::min<uint64_t>(kListBatch, pending));
    // No byte limit: nats-server 2.10 ends such a request early with a status that
    // nats.c 3.4 takes for a failure. The batch's count bounds it.
    fr.Expires = wait * 1'000'000;
    MsgListHandle list;
    natsStatus s = natsSubscription_FetchRequest(&list.v, sub, &fr);
    if (s != NATS_OK) return s;
    bool done = false;
    for (int i = 0; i < list.v.Count; ++i) {
      natsMsg* m = list.v.Msgs[i];
      MetaHandle meta;
      s = natsMsg_GetMetaData(&meta.p, m);
      if (s != NATS_OK) return s;
      std::string_view subj = natsMsg_GetSubject(m);
      if (subj.size() > prefix.size()) visit(subj.substr(prefix.size()), m, meta.p->Sequence.Stream);
      pending = meta.p->NumPending;
      if (pending == 0) done = true;
    }
    if (done) {
      natsSubscription_Unsubscribe(sub);  // deletes the consumer
      return NATS_OK;
    }
  }
}

template <typename Restart, typename Visit>
Status NatsStore::Connection::walk_all(std::string_view doing, bool meta_only, Restart&& restart, Visit&& visit) {
  auto l = live();
  if (!l.ok()) return std::move(l).error();
  natsStatus s = walk(**l, meta_only, restart, visit);
  if (s == NATS_OK) return Status::success();
  if (s == NATS_TIMEOUT) {
    return Status(Errc::store, fmt::format("{} of the NATS bucket {} at {}: not complete within {} ms", doing, bucket,
                                           servers, list_ms));
  }
  return failure(doing, s, kNoJsError);
}

Result<std::vector<std::string>> NatsStore::keys() {
  std::vector<std::string> out;
  auto st = c_->walk_all(
      "listing the keys", true, [&] { out.clear(); },
      [&](std::string_view key, natsMsg* m, Revision) {
        if (!is_marker(m)) out.emplace_back(key);
      });
  if (!st.ok()) return st.error();
  return out;
}

Result<std::vector<NatsEntry>> NatsStore::entries() {
  std::vector<NatsEntry> out;
  auto st = c_->walk_all(
      "reading every key", false, [&] { out.clear(); },
      [&](std::string_view key, natsMsg* m, Revision revision) {
        if (is_marker(m)) return;
        NatsEntry n;
        n.key = key;
        const char* v = natsMsg_GetData(m);
        int len = natsMsg_GetDataLength(m);
        if (v != nullptr && len > 0) n.value.assign(v, static_cast<std::size_t>(len));
        n.revision = revision;
        out.push_back(std::move(n));
      });
  if (!st.ok()) return st.error();
  return out;
}

}  // namespace leasejudge
