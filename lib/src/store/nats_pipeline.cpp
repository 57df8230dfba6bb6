// The NATS store's pipeline (nats_store.hpp): writes in flight as JetStream async
// publishes, each at the revision read.
#include <fmt/format.h>
#include <nats/nats.h>
#include <openssl/evp.h>
#include <simdjson.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <utility>

#include "nats_store.hpp"

namespace leasejudge {

using namespace nats_store;

namespace {

// A pipeline on a server that does not fence other writers reads the bucket's
// replicas again at most this often.
constexpr int64_t kReplicasCheckMs = 1000;

// What a JetStream message get (STREAM.MSG.GET) answered, as JSON: true when it holds
// a message that is no delete marker (the key holds a value), its sequence in found;
// false for a marker, no message, or an answer that is not one of these.
bool holds_value(std::string_view answer, simdjson::dom::parser& parser, Revision& found) {
  simdjson::dom::element doc, message;
  if (parser.parse(answer.data(), answer.size()).get(doc) != simdjson::SUCCESS ||
      doc["message"].get(message) != simdjson::SUCCESS || message["seq"].get(found) != simdjson::SUCCESS) {
    return false;
  }
  std::string_view hdrs;
  if (message["hdrs"].get(hdrs) != simdjson::SUCCESS || hdrs.empty()) return true;
  if (hdrs.size() % 4 != 0) return false;
  std::string block(hdrs.size() / 4 * 3, '\0');
  if (EVP_DecodeBlock(reinterpret_cast<unsigned char*>(block.data()),
                      reinterpret_cast<const unsigned char*>(hdrs.data()), static_cast<int>(hdrs.size())) < 0) {
    return false;
  }
  // "NATS/1.0\r\nName: value\r\n...": the names matched exactly, as nats.c matches them.
  std::string_view rest(block);
  for (std::size_t eol; (eol = rest.find("\r\n")) != std::string_view::npos; rest.remove_prefix(eol + 2)) {
    std::string_view line = rest.substr(0, eol);
    std::size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string_view name = line.substr(0, colon), value = line.substr(colon + 1);
    while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    while (!value.empty() && value.back() == ' ') value.remove_suffix(1);
    if (name == kOperationHeader && (value == kDeleteOperation || value == kPurgeOperation)) return false;
    if (name == kMarkerReasonHeader) return false;
  }
  return true;
}

// Writes in flight over one connection: JetStream async publishes, each carrying the
// expected last subject sequence (the revision read), acknowledged by the server in
// a callback on nats.c's thread. Outcomes are given back in the order sent.
//
// Every write registered here is resolved exactly once: by its acknowledgement (or
// nats.c's timeout for it, after request_ms), or by taking it back from nats.c with
// the pending list when the connection is lost or the pipeline closes. Nothing is
// resent: a write taken back is unknown.
//
// On a server that does not fence other writers (see the header), the pipeline is
// given `serial`, which performs one write with the stream's expectation, and
// `replicated`, which reads the bucket's replicas: it sends writes asynchronously
// while the bucket has one replica (read when it opens and at most a second apart),
// and each through `serial`, when it is sent, from the moment it has more.
//
// A create is sent expecting no message on the key's subject. When the subject holds
// one, whether it is a value (the key exists: the create's outcome) or a delete marker
// is read with a JetStream message get of the subject's last message, sent to an inbox
// of the pipeline's without waiting, all the refused creates' reads at once, their
// answers taken on the caller's thread as next() reaches them: an import of keys that
// exist waits about one read, not one a key. A marker, no message, or a read that
// failed hands the create to `create` (the store's own create, on the caller's
// thread): a delete marker is written over at its revision, a value is the key's
// existence. Nothing that may have landed goes there.
struct SerialHooks {
  std::function<WriteOutcome(std::string_view key, std::string_view value, Revision revision, bool marker)> serial;
  std::function<bool()> replicated;
  std::function<WriteOutcome(std::string_view key, std::string_view value)> create;
};

class NatsPipeline final : public WritePipeline {
 public:
  NatsPipeline(std::shared_ptr<Link> link, std::string prefix, std::string stream, std::string bucket,
               int64_t request_ms, const PipelineOptions& o, SerialHooks hooks = {})
      : link_(std::move(link)),
        prefix_(std::move(prefix)),
        stream_(std::move(stream)),
        bucket_(std::move(bucket)),
        request_ms_(request_ms),
        note_(o.note),
        hooks_(std::move(hooks)) {
    if (hooks_.replicated) {
      serial_now_ = hooks_.replicated();
      checked_ms_ = steady_ms();
    }
    jsOptions jo;
    jsOptions_Init(&jo);
    jo.Wait = request_ms_;
    // The window is kept below; nats.c's own limit only backs it up, so never stalls.
    jo.PublishAsync.MaxPending = static_cast<int64_t>(std::max<std::size_t>(o.window, 1)) + 16;
    jo.PublishAsync.AckHandler = &NatsPipeline::on_ack;
    jo.PublishAsync.AckHandlerClosure = this;
    open_ = natsConnection_JetStream(&js_, link_->nc, &jo);
  }
  NatsPipeline(const NatsPipeline&) = delete;
  NatsPipeline& operator=(const NatsPipeline&) = delete;

  ~NatsPipeline() override {
    take_back("the store closed its pipeline before the acknowledgement came");
    std::unique_lock lock(mu_);
    cv_.wait(lock, [this] { return sent_.empty(); });  // a callback in progress finishes
    lock.unlock();
    if (reads_ != nullptr) {
      natsSubscription_Unsubscribe(reads_);
      natsSubscription_Destroy(reads_);
    }
    jsCtx_Destroy(js_);
  }

  void update(std::string_view key, std::string_view value, Revision revision) override {
    send(key, value, revision, false);
  }
  void remove(std::string_view key, Revision revision) override { send(key, {}, revision, true); }
  void create(std::string_view key, std::string_view value) override { send(key, value, 0, false, true); }

  std::size_t in_flight() const override {
    std::lock_guard lock(mu_);
    return slots_.size();
  }
  std::size_t ready() const override {
    std::lock_guard lock(mu_);
    return slots_.empty() || !slots_.front().resolved ? 0 : 1;
  }
  bool broken() const override {
    std::lock_guard lock(mu_);
    return broken_ || natsConnection_Status(link_->nc) != NATS_CONN_STATUS_CONNECTED;
  }

  std::optional<WriteOutcome> next() override {
    std::unique_lock lock(mu_);
    if (slots_.empty()) return std::nullopt;
    int64_t waited = 0;
    while (!slots_.front().resolved) {
      // nats.c times each write out after request_ms; a lost connection is noticed
      // here, and what it still holds is taken back at once.
      cv_.wait_for(lock, std::chrono::milliseconds(100));
      if (slots_.front().resolved) break;
      waited += 100;
      if (natsConnection_Status(link_->nc) != NATS_CONN_STATUS_CONNECTED) {
        lock.unlock();
        take_back("the connection to the server was lost before the acknowledgement came");
        lock.lock();
        continue;
      }
      if (waited == kNoteAfterMs && note_) {
        std::string line = fmt::format(
            "waiting {} ms for the server to acknowledge the write to {} in the NATS bucket {} ({} in "
            "flight; it is unknown after {} ms)",
            waited, slots_.front().key, bucket_, slots_.size(), request_ms_);
        lock.unlock();
        note_(line);
        lock.lock();
      }
    }
    if (slots_.front().lookup != Lookup::none) {
      const std::uint64_t seq = slots_.front().seq;
      lock.unlock();
      look_up(seq);
      lock.lock();
    }
    Slot slot = std::move(slots_.front());
    slots_.pop_front();
    lock.unlock();
    if (slot.lookup == Lookup::value) {
      return WriteOutcome{
          WriteOutcome::Kind::changed, 0,
          Error{Errc::exists, fmt::format("the key {} already holds a value (revision {})", slot.key, slot.found)}};
    }
    if (slot.create && slot.outcome.kind == WriteOutcome::Kind::changed && hooks_.create) {
      return hooks_.create(slot.key, slot.value);  // a marker, or the read failed
    }
    return std::move(slot.outcome);
  }

 private:
  // Where the read of a refused create's subject is: wanted (refused, not asked
  // yet), asked, answered with a value (found: its revision), or with anything else.
  enum class Lookup : std::uint8_t { none, wanted, asked, value, other };

  struct Slot {
    std::uint64_t seq = 0;
    std::string key;
    std::string value;  // a create's, kept for its second try
    bool create = false;
    bool resolved = false;
    Lookup lookup = Lookup::none;
    Revision found = 0;
    WriteOutcome outcome;
  };

  // The slot of seq while it is in flight; nullptr once next() gave it. Under mu_.
  Slot* slot_of(std::uint64_t seq) {
    if (slots_.empty() || seq < slots_.front().seq || seq - slots_.front().seq >= slots_.size()) return nullptr;
    return &slots_[seq - slots_.front().seq];
  }

  // The answers to the reads of refused creates, until seq's came (or request_ms
  // passed, or the connection failed: the store's own create then reads again). Every
  // read wanted is asked first.
  void look_up(std::uint64_t seq) {
    ask_wanted();
    const int64_t until = nats_Now() + request_ms_;
    for (;;) {
      {
        std::lock_guard lock(mu_);
        const Slot* slot = slot_of(seq);
        if (slot == nullptr || slot->lookup != Lookup::asked) return;
      }
      const int64_t left = until - nats_Now();
      natsMsg* reply = nullptr;
      if (left <= 0 || reads_ == nullptr || natsSubscription_NextMsg(&reply, reads_, left) != NATS_OK) return;
      take_answer(reply);
      natsMsg_Destroy(reply);
    }
  }

  // Send the reads of the creates refused since the last call: a JetStream message get
  // of the subject's last message, answered to the inbox, under the slot's sequence.
  void ask_wanted() {
    std::vector<std::pair<std::uint64_t, std::string>> ask;
    {
      std::lock_guard lock(mu_);
      for (std::uint64_t seq : wanted_)
        if (const Slot* slot = slot_of(seq); slot != nullptr) ask.emplace_back(seq, slot->key);
      wanted_.clear();
    }
    if (ask.empty()) return;
    if (reads_ == nullptr) {
      natsInbox* inbox = nullptr;
      if (natsInbox_Create(&inbox) != NATS_OK) return;
      inbox_ = inbox;
      natsInbox_Destroy(inbox);
      if (natsConnection_SubscribeSync(&reads_, link_->nc, (inbox_ + ".*").c_str()) != NATS_OK) {
        reads_ = nullptr;
        return;
      }
    }
    const std::string api = "$JS.API.STREAM.MSG.GET." + stream_;
    for (const auto& [seq, key] : ask) {
      std::string body = fmt::format(R"({{"last_by_subj":"{}{}"}})", prefix_, key);
      std::string reply = fmt::format("{}.{}", inbox_, seq);
      if (natsConnection_PublishRequestString(link_->nc, api.c_str(), reply.c_str(), body.c_str()) != NATS_OK) continue;
      std::lock_guard lock(mu_);
      if (Slot* slot = slot_of(seq); slot != nullptr) slot->lookup = Lookup::asked;
    }
  }

  // An answer to a read: the slot its subject names learns whether its key holds a
  // value (a message that is no delete marker).
  void take_answer(natsMsg* reply) {
    std::string_view subject = natsMsg_GetSubject(reply);
    std::uint64_t seq = 0;
    if (subject.size() <= inbox_.size() + 1) return;
    subject.remove_prefix(inbox_.size() + 1);
    if (std::from_chars(subject.data(), subject.data() + subject.size(), seq).ec != std::errc()) return;
    Revision found = 0;
    const bool value =
        holds_value(std::string_view(natsMsg_GetData(reply), static_cast<std::size_t>(natsMsg_GetDataLength(reply))),
                    parser_, found);
    std::lock_guard lock(mu_);
    if (Slot* slot = slot_of(seq); slot != nullptr && slot->lookup == Lookup::asked) {
      slot->lookup = value ? Lookup::value : Lookup::other;
      slot->found = found;
    }
  }

  void send(std::string_view key, std::string_view value, Revision revision, bool marker, bool create = false) {
    const bool serial = serial_due();
    std::unique_lock lock(mu_);
    Slot& slot = slots_.emplace_back();
    slot.seq = next_seq_++;
    slot.key.assign(key);
    slot.create = create;
    if (create) slot.value.assign(value);
    if (std::optional<WriteOutcome> refused = refusal(key, revision, create)) {
      resolve_locked(slot.seq, std::move(*refused));
      return;
    }
    if (serial) {
      std::uint64_t seq = slot.seq;
      slot.create = false;  // the store's create below is the whole of it
      lock.unlock();
      WriteOutcome o = create ? hooks_.create(key, value) : hooks_.serial(key, value, revision, marker);
      lock.lock();
      resolve_locked(seq, std::move(o));
      return;
    }
    std::string subject = prefix_ + std::string(key);
    natsMsg* msg = nullptr;
    natsStatus s = natsMsg_Create(&msg, subject.c_str(), nullptr, value.data(), static_cast<int>(value.size()));
    if (s == NATS_OK && marker) s = natsMsgHeader_Set(msg, kOperationHeader, kDeleteOperation);
    if (s != NATS_OK) {
      natsMsg_Destroy(msg);
      resolve_locked(slot.seq, failed(fmt::format("writing the key {}", key), s));
      return;
    }
    sent_[msg] = slot.seq;  // before the publish: its acknowledgement may come first
    std::uint64_t seq = slot.seq;
    lock.unlock();
    send_async(msg, seq, key, revision, create);
  }

  // A write refused before it is sent: the pipeline did not open, the key breaks the
  // key rules, or an update or delete expects revision 0 (no stored value is at it).
  std::optional<WriteOutcome> refusal(std::string_view key, Revision revision, bool create) const {
    if (open_ != NATS_OK) {
      return failed(fmt::format("opening the write pipeline for the NATS bucket {}", bucket_), open_);
    }
    if (!NatsStore::valid_key(key)) {
      return WriteOutcome{WriteOutcome::Kind::failed, 0,
                          Error{Errc::invalid_argument, fmt::format("\"{}\" is not a NATS key", key)}};
    }
    if (revision == 0 && !create) {
      return WriteOutcome{
          WriteOutcome::Kind::changed, 0,
          Error{Errc::changed, fmt::format("the key {} is not at revision 0: no stored value is", key)}};
    }
    return std::nullopt;
  }

  // Hand msg, registered in sent_ as seq, to nats.c, expecting the key's revision (a
  // create: no message on its subject). Its outcome comes to on_ack, or, when nats.c
  // does not take it, is resolved here at once.
  void send_async(natsMsg* msg, std::uint64_t seq, std::string_view key, Revision revision, bool create) {
    jsPubOptions po;
    jsPubOptions_Init(&po);
    po.ExpectStream = stream_.c_str();
    if (create) {
      po.ExpectNoMessage = true;
    } else {
      po.ExpectLastSubjectSeq = revision;
    }
    po.MaxWait = request_ms_;
    natsMsg* handed = msg;
    natsStatus s = js_PublishMsgAsync(js_, &handed, &po);
    if (s == NATS_OK) {
      handed_any_ = true;
      return;
    }
    // Not handed over (handed is still msg). A lost connection is no answer of the
    // server's: unknown, as every write the connection took with it; any other
    // refusal of nats.c's is a failure (it was never sent).
    {
      std::lock_guard lock(mu_);
      sent_.erase(msg);
      WriteOutcome o = failed(fmt::format("writing the key {}", key), s);
      if (connection_lost(s)) {
        o.kind = WriteOutcome::Kind::unknown;
        o.error.code = Errc::unknown_outcome;
      }
      resolve_locked(seq, std::move(o));
    }
    natsMsg_Destroy(handed);
    cv_.notify_all();
  }

  static void on_ack(jsCtx*, natsMsg* msg, jsPubAck* pa, jsPubAckErr* pae, void* closure) {
    auto* self = static_cast<NatsPipeline*>(closure);
    {
      std::lock_guard lock(self->mu_);
      auto it = self->sent_.find(msg);
      if (it != self->sent_.end()) {
        WriteOutcome o;
        if (pa != nullptr) {
          o.kind = WriteOutcome::Kind::done;
          o.revision = pa->Sequence;
        } else {
          o = self->refused(msg, pae);
          Slot* slot = self->slot_of(it->second);
          if (o.kind == WriteOutcome::Kind::changed && slot != nullptr && slot->create && self->hooks_.create) {
            slot->lookup = Lookup::wanted;
            self->wanted_.push_back(it->second);
          }
        }
        self->resolve_locked(it->second, std::move(o));
        self->sent_.erase(it);
      }
      self->cv_.notify_all();
    }
    natsMsg_Destroy(msg);
  }

  // What a negative acknowledgement means: a lost race, a refusal (the write did not
  // land), or no acknowledgement at all (it may have landed).
  WriteOutcome refused(natsMsg* msg, const jsPubAckErr* pae) const {
    std::string_view subject = natsMsg_GetSubject(msg);
    std::string key(subject.substr(std::min(subject.size(), prefix_.size())));
    WriteOutcome o;
    natsStatus s = pae != nullptr ? pae->Err : NATS_ERR;
    jsErrCode jerr = pae != nullptr ? pae->ErrCode : kNoJsError;
    std::string text = pae != nullptr && pae->ErrText != nullptr ? pae->ErrText : natsStatus_GetText(s);
    if (lost_race(jerr)) {
      o.kind = WriteOutcome::Kind::changed;
      o.error = Error{Errc::changed, fmt::format("the key {} is no longer at the revision read", key)};
    } else if (s == NATS_TIMEOUT) {
      o.kind = WriteOutcome::Kind::unknown;
      o.error = Error{Errc::unknown_outcome,
                      fmt::format("the server did not acknowledge the write to {} within {} ms", key, request_ms_)};
    } else if (jerr == kExpectationNotReady) {
      o.kind = WriteOutcome::Kind::unknown;
      o.error = Error{Errc::unknown_outcome,
                      fmt::format("the NATS bucket {} could not check the write to {} now (a leader change: "
                                  "JetStream error {}); it may have landed",
                                  bucket_, key, static_cast<int>(jerr))};
    } else if (s == NATS_NO_RESPONDERS) {
      // Nothing took the write: no stream leader now (a leader change), or no bucket.
      o.kind = WriteOutcome::Kind::unknown;
      o.error = Error{Errc::unknown_outcome,
                      fmt::format("nothing answered the write to {} in the NATS bucket {} (a leader change, or the "
                                  "bucket is gone)",
                                  key, bucket_)};
    } else if (jerr != kNoJsError) {
      o.kind = WriteOutcome::Kind::failed;
      o.error = Error{Errc::store,
                      fmt::format("the NATS bucket {} refused the write to {}: {}{}", bucket_, key, text,
                                  jerr != kNoJsError ? fmt::format(" (JetStream error {})", static_cast<int>(jerr))
                                                     : std::string())};
    } else {
      o.kind = WriteOutcome::Kind::unknown;
      o.error =
          Error{Errc::unknown_outcome, fmt::format("the write to {} in the NATS bucket {}: {}", key, bucket_, text)};
    }
    return o;
  }

  WriteOutcome failed(std::string doing, natsStatus s) const {
    return WriteOutcome{
        WriteOutcome::Kind::failed, 0,
        Error{Errc::store, fmt::format("{} in the NATS bucket {}: {}", doing, bucket_, nats_detail(s))}};
  }

  void resolve_locked(std::uint64_t seq, WriteOutcome o) {
    if (slots_.empty() || seq < slots_.front().seq) return;
    Slot& slot = slots_[seq - slots_.front().seq];
    slot.resolved = true;
    if (o.kind == WriteOutcome::Kind::failed || o.kind == WriteOutcome::Kind::unknown) broken_ = true;
    slot.outcome = std::move(o);
  }

  // Take every write nats.c still holds back from it: each is unknown (it may have
  // reached the server).
  void take_back(std::string_view why) {
    // nats.c keeps its pending list only from its first async publish on.
    if (js_ == nullptr || !handed_any_) return;
    MsgListHandle pending;
    if (js_PublishAsyncGetPendingList(&pending.v, js_) != NATS_OK) return;
    std::lock_guard lock(mu_);
    for (int i = 0; i < pending.v.Count; ++i) {
      auto it = sent_.find(pending.v.Msgs[i]);
      if (it == sent_.end()) continue;
      const Slot& slot =
          slots_.empty() || it->second < slots_.front().seq ? Slot{} : slots_[it->second - slots_.front().seq];
      resolve_locked(it->second,
                     WriteOutcome{WriteOutcome::Kind::unknown, 0,
                                  Error{Errc::unknown_outcome, fmt::format("the write to {} in the NATS bucket {}: {}",
                                                                           slot.key, bucket_, why)}});
      sent_.erase(it);
    }
    cv_.notify_all();
  }

  // Is this write to go through the serial hook? Reads the replicas again when a
  // second has passed since the last read; once replicated, always.
  bool serial_due() {
    if (!hooks_.serial) return false;
    if (!serial_now_ && steady_ms() - checked_ms_ >= kReplicasCheckMs) {
      serial_now_ = hooks_.replicated();
      checked_ms_ = steady_ms();
    }
    return serial_now_;
  }

  std::shared_ptr<Link> link_;
  std::string prefix_, stream_, bucket_;
  int64_t request_ms_;
  StoreNote note_;
  SerialHooks hooks_;
  bool serial_now_ = false;  // the caller's thread only
  int64_t checked_ms_ = 0;
  jsCtx* js_ = nullptr;
  natsStatus open_ = NATS_OK;
  bool handed_any_ = false;  // the caller's thread only
  bool broken_ = false;      // under mu_
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Slot> slots_;  // in the order sent
  std::uint64_t next_seq_ = 0;
  std::unordered_map<natsMsg*, std::uint64_t> sent_;  // handed to nats.c, not resolved yet
  std::vector<std::uint64_t> wanted_;                 // refused creates whose reads are not sent yet (under mu_)
  natsSubscription* reads_ = nullptr;                 // the reads' answers (the caller's thread only)
  std::string inbox_;
  simdjson::dom::parser parser_;
};

// A pipeline on a connection that could not be made: every write sent through it
// fails at once, saying why.
class DownPipeline final : public WritePipeline {
 public:
  explicit DownPipeline(Error e) : e_(std::move(e)) {}
  void update(std::string_view, std::string_view, Revision) override { ++n_; }
  void remove(std::string_view, Revision) override { ++n_; }
  void create(std::string_view, std::string_view) override { ++n_; }
  std::size_t in_flight() const override { return n_; }
  std::size_t ready() const override { return n_; }
  std::optional<WriteOutcome> next() override {
    if (n_ == 0) return std::nullopt;
    --n_;
    return WriteOutcome{WriteOutcome::Kind::failed, 0, e_};
  }

 private:
  Error e_;
  std::size_t n_ = 0;
};

}  // namespace

std::unique_ptr<WritePipeline> NatsStore::pipeline(const PipelineOptions& options) {
  auto l = c_->live(&options.note, Connection::writes);
  if (!l.ok()) return std::make_unique<DownPipeline>(std::move(l).error());
  SerialHooks hooks;
  if (!c_->fenced) {
    // A server that does not fence other writers (see the header): the bucket's
    // replicas decide, read on the requests' connection.
    Connection* c = c_.get();
    hooks.replicated = [c] {
      auto link = c->live();
      bool replicated = !link.ok() || c->replicated_now(**link);
      if (replicated) c->warn_unfenced();
      return replicated;
    };
    hooks.serial = [c](std::string_view key, std::string_view value, Revision revision, bool marker) {
      auto link = c->live();
      if (!link.ok()) return WriteOutcome{WriteOutcome::Kind::failed, 0, std::move(link).error()};
      auto p = c->conditional(**link, key, value, revision, marker);
      if (p.status == NATS_OK && !p.said) return WriteOutcome{WriteOutcome::Kind::done, marker ? 0 : p.revision, {}};
      Error e = c->write_error(fmt::format("writing the key {}", key), key, revision, p);
      auto kind = e.code == Errc::changed           ? WriteOutcome::Kind::changed
                  : e.code == Errc::unknown_outcome ? WriteOutcome::Kind::unknown
                                                    : WriteOutcome::Kind::failed;
      return WriteOutcome{kind, 0, std::move(e)};
    };
  }
  // A create the server refused for a message on the subject: read it, and write over
  // a marker (the store's create, from its first answer on).
  Connection* conn = c_.get();
  hooks.create = [conn](std::string_view key, std::string_view value) {
    auto link = conn->live();
    if (!link.ok()) return WriteOutcome{WriteOutcome::Kind::failed, 0, std::move(link).error()};
    Connection::Published refused;
    refused.status = NATS_ERR;
    refused.jerr = JSStreamWrongLastSequenceErr;
    auto r = conn->create_after(**link, key, value, std::move(refused));
    if (r) return WriteOutcome{WriteOutcome::Kind::done, *r, {}};
    auto kind = r.code() == Errc::changed || r.code() == Errc::exists ? WriteOutcome::Kind::changed
                : r.code() == Errc::unknown_outcome                   ? WriteOutcome::Kind::unknown
                                                                      : WriteOutcome::Kind::failed;
    return WriteOutcome{kind, 0, std::move(r).error()};
  };
  return std::make_unique<NatsPipeline>(std::move(l).value(), c_->prefix, c_->stream, c_->bucket, c_->request_ms,
                                        options, std::move(hooks));
}

}  // namespace leasejudge
