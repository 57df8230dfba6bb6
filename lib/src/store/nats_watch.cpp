// The NATS store's watches (nats_store.hpp): a KV watch of a key or of a node's keys.
#include <fmt/format.h>
#include <nats/nats.h>

#include <algorithm>
#include <functional>

#include "nats_store.hpp"

namespace leasejudge {

using namespace nats_store;

namespace {

// A KV watch on one link: the initial values passed over, then every change.
class NatsKeyWatch final : public KeyWatch {
 public:
  // began_at: the stream's last sequence before the watch was made; what the watch
  // delivers as the bucket's values when it began, written after that, is a change.
  NatsKeyWatch(std::shared_ptr<Link> link, std::string doing, std::function<Error(natsStatus)> failure,
               Revision began_at)
      : link_(std::move(link)), doing_(std::move(doing)), failure_(std::move(failure)), began_at_(began_at) {}
  WatcherHandle w;

  Status next(std::vector<KeyChange>& out, std::int64_t wait_ns) override {
    if (!broken_.ok()) return broken_;
    const int64_t until = steady_ms() + std::max<int64_t>(wait_ns / 1000000, 0);
    const std::size_t had = out.size();
    for (;;) {
      // nats.c leaves a closed connection's subscription quiet: ask the connection.
      if (natsConnection_Status(link_->nc) != NATS_CONN_STATUS_CONNECTED)
        return broken_ = Status(Errc::store, fmt::format("{}: the connection to the server was lost", doing_));
      int64_t left = until - steady_ms();
      // Once a change came, what follows it at once comes in the same call.
      int64_t ms = out.size() > had ? 1 : std::clamp<int64_t>(left, 1, 250);
      EntryHandle e;
      natsStatus s = kvWatcher_Next(&e.p, w.p, ms);
      if (s == NATS_TIMEOUT) {
        if (out.size() > had || steady_ms() >= until) return Status::success();
        continue;
      }
      if (s != NATS_OK) return broken_ = failure_(s);
      if (e.p == nullptr) {  // the last of the values the bucket held when the watch began
        initial_done_ = true;
        continue;
      }
      // A value the bucket held when the watch began is no change; one written after
      // began_at is, though it came before the watch said its values were all there.
      if (!initial_done_ && kvEntry_Revision(e.p) <= began_at_) continue;
      std::string_view key = kvEntry_Key(e.p);
      if (!NatsStore::valid_key(key)) continue;  // another client's: no write of this store can name it
      KeyChange c;
      c.key = std::string(key);
      c.revision = kvEntry_Revision(e.p);
      c.written_unix_ns = kvEntry_Created(e.p);
      if (kvEntry_Operation(e.p) == kvOp_Put) {
        const void* data = kvEntry_Value(e.p);
        int len = kvEntry_ValueLen(e.p);
        c.value.emplace(data != nullptr && len > 0 ? std::string(static_cast<const char*>(data), len) : std::string());
      }
      out.push_back(std::move(c));
      if (out.size() - had >= 4096) return Status::success();
    }
  }

 private:
  std::shared_ptr<Link> link_;
  std::string doing_;
  std::function<Error(natsStatus)> failure_;
  Revision began_at_ = 0;
  bool initial_done_ = false;
  Status broken_;
};

}  // namespace

Result<std::unique_ptr<KeyWatch>> NatsStore::watch_key(std::string_view key, const KeyWatchOptions& options) {
  if (!valid_key(key)) return Error{Errc::invalid_argument, fmt::format("\"{}\" is not a NATS key", key)};
  return kv_watch(key, fmt::format("the key {}", key), options);
}

Result<std::unique_ptr<KeyWatch>> NatsStore::watch(std::string_view prefix, const KeyWatchOptions& options) {
  bool filterable = prefix.size() >= 2 && prefix.back() == '.' && valid_key(prefix.substr(0, prefix.size() - 1));
  if (!filterable) return Store::watch(prefix, options);
  return kv_watch(fmt::format("{}>", prefix), fmt::format("the keys {}*", prefix), options);
}

// A KV watch of the subjects filter names (below the bucket's), said as `named`.
Result<std::unique_ptr<KeyWatch>> NatsStore::kv_watch(std::string_view filter, std::string_view named,
                                                      const KeyWatchOptions& options) {
  auto l = c_->live(&options.note);
  if (!l.ok()) return std::move(l).error();
  auto kv = c_->kv_of(**l);
  if (!kv.ok()) return std::move(kv).error();
  std::string doing = fmt::format("watching {} of the NATS bucket {} at {}", named, c_->bucket, c_->servers);
  Connection* c = c_.get();
  std::string what = fmt::format("watching {}", named);
  // Read before the watch is made: a write after this read is a change, even one the
  // watch delivers among the bucket's values when it began.
  StreamInfoHandle si;
  jsErrCode jerr = kNoJsError;
  natsStatus got = js_GetStreamInfo(&si.p, (*l)->js, c_->stream.c_str(), nullptr, &jerr);
  if (got != NATS_OK) return c_->failure(what, got, jerr);
  auto w = std::make_unique<NatsKeyWatch>(
      *l, doing, [c, what](natsStatus s) { return c->failure(what, s, kNoJsError); }, si.p->State.LastSeq);
  kvWatchOptions wo;
  kvWatchOptions_Init(&wo);
  natsStatus s = kvStore_Watch(&w->w.p, *kv, std::string(filter).c_str(), &wo);
  if (s != NATS_OK) return c_->failure(what, s, kNoJsError);
  return std::unique_ptr<KeyWatch>(std::move(w));
}

}  // namespace leasejudge
