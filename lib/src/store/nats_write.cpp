// The NATS store's single keys (nats_store.hpp): get, and the writes each at its
// revision (update, create, remove) or at none (put).
//
// Writes go through js_PublishMsg rather than kvStore_Update and kvStore_Delete: only
// the publish calls hand back JetStream's error code, so a lost race (wrong last
// sequence, 10071) is told from a failure without reading error text, and only a
// publish can carry the delete marker with an expected sequence.
#include <fmt/format.h>
#include <nats/nats.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <random>
#include <thread>

#include "nats_store.hpp"

namespace leasejudge {

using namespace nats_store;

namespace {

// Create-if-absent over delete markers retries while other writers keep moving the
// key between its reads; past this it reports the race as lost.
constexpr int kCreateTries = 16;
// A conditional write with the stream's expectation, while other keys' writes keep
// moving the stream's last sequence, pauses between tries from this, doubling up to
// the most, for up to the request timeout in all.
constexpr int64_t kSerialPauseMs = 1;
constexpr int64_t kSerialPauseMostMs = 64;

Status check_key(std::string_view key) {
  if (!NatsStore::valid_key(key)) {
    return Status(Errc::invalid_argument, fmt::format("\"{}\" is not a NATS key", key));
  }
  return Status::success();
}

Status check_write(std::string_view key, std::string_view value) {
  if (auto st = check_key(key); !st.ok()) return st;
  if (value.size() > static_cast<std::size_t>(std::numeric_limits<int>::max())) {
    return Status(Errc::invalid_argument, fmt::format("the value for {} is too large for NATS", key));
  }
  return Status::success();
}

}  // namespace

Status NatsStore::Connection::last_message(const Link& l, std::string_view key, MsgHandle& out) const {
  std::string subj = subject(key);
  natsStatus s;
  jsErrCode jerr = kNoJsError;
  if (direct_reads) {
    jsDirectGetMsgOptions dg;
    jsDirectGetMsgOptions_Init(&dg);
    dg.LastBySubject = subj.c_str();
    s = js_DirectGetMsg(&out.p, l.js, stream.c_str(), nullptr, &dg);
    if (s == NATS_NOT_FOUND) return Status::success();
  } else {
    s = js_GetLastMsg(&out.p, l.js, stream.c_str(), subj.c_str(), nullptr, &jerr);
    if (s == NATS_NOT_FOUND && jerr != JSStreamNotFoundErr) return Status::success();
  }
  if (s != NATS_OK) return failure(fmt::format("reading the key {}", key), s, jerr);
  return Status::success();
}

NatsStore::Connection::Published NatsStore::Connection::publish(const Link& l, std::string_view key,
                                                                std::string_view value, Revision last, bool none_before,
                                                                bool marker, Revision stream_last) const {
  Published out;
  std::string subj = subject(key);
  jsPubOptions po;
  jsPubOptions_Init(&po);
  po.ExpectStream = stream.c_str();
  po.MaxWait = request_ms;
  if (none_before) {
    po.ExpectNoMessage = true;
  } else {
    po.ExpectLastSubjectSeq = last;
  }
  po.ExpectLastSeq = stream_last;
  PubAckHandle ack;
  MsgHandle msg;
  out.status = natsMsg_Create(&msg.p, subj.c_str(), nullptr, value.data(), static_cast<int>(value.size()));
  if (out.status == NATS_OK && marker) out.status = natsMsgHeader_Set(msg.p, kOperationHeader, kDeleteOperation);
  if (out.status == NATS_OK) out.status = js_PublishMsg(&ack.p, l.js, msg.p, &po, &out.jerr);
  if (out.status == NATS_OK) out.revision = ack.p->Sequence;
  return out;
}

natsStatus NatsStore::Connection::stream_last(const Link& l, Revision& out, jsErrCode& jerr) const {
  StreamInfoHandle si;
  natsStatus s = js_GetStreamInfo(&si.p, l.js, stream.c_str(), nullptr, &jerr);
  if (s == NATS_OK) out = si.p->State.LastSeq;
  return s;
}

NatsStore::Connection::Published NatsStore::Connection::conditional(const Link& l, std::string_view key,
                                                                    std::string_view value, Revision last,
                                                                    bool marker) {
  if (fenced) return publish(l, key, value, last, false, marker);
  if (refuse_unfenced && replicated_now(l)) {
    warn_unfenced();
    Published p;
    p.said = Error{Errc::unsupported,
                   fmt::format("the NATS bucket {} is replicated on a server that does not fence other writers "
                               "(before 2.9.21), and writes there are refused as asked",
                               bucket)};
    return p;
  }
  return serial(l, key, value, last, marker);
}

NatsStore::Connection::Published NatsStore::Connection::serial(const Link& l, std::string_view key,
                                                               std::string_view value, Revision last,
                                                               bool marker) const {
  const int64_t until = steady_ms() + request_ms;
  Revision expected_stream = last;
  int64_t pause = 0;
  thread_local std::minstd_rand jitter(std::random_device{}());
  for (int attempt = 1;; ++attempt) {
    Published p = publish(l, key, value, last, false, marker, expected_stream);
    if (p.status == NATS_OK || !lost_race(p.jerr)) return p;
    MsgHandle msg;
    if (Status st = last_message(l, key, msg); !st.ok()) {
      p.said = Error{st.code(), fmt::format("the write was refused as the stream moved, and reading the key again "
                                            "failed: {}",
                                            st.error().message)};
      return p;
    }
    if (msg.p == nullptr || natsMsg_GetSequence(msg.p) != last) return p;  // the key moved: changed
    if (steady_ms() >= until) {
      p.said = Error{Errc::store, fmt::format("other writes to the NATS bucket {} kept moving its stream for {} ms "
                                              "({} tries); the key {} is still at revision {} and the write did "
                                              "not land",
                                              bucket, request_ms, attempt, key, last)};
      return p;
    }
    if (pause > 0) {
      std::uniform_int_distribution<int64_t> d(pause / 2 + 1, pause);
      std::this_thread::sleep_for(std::chrono::milliseconds(d(jitter)));
    }
    pause = std::min(std::max(pause * 2, kSerialPauseMs), kSerialPauseMostMs);
    jsErrCode jerr = kNoJsError;
    if (natsStatus s = stream_last(l, expected_stream, jerr); s != NATS_OK) {
      p.said = failure("reading the stream's last revision", s, jerr);
      return p;
    }
  }
}

Error NatsStore::Connection::write_error(std::string_view doing, std::string_view key, Revision revision,
                                         const Published& p) const {
  if (p.said) return *p.said;
  if (lost_race(p.jerr)) {
    return Error{Errc::changed, fmt::format("the key {} is no longer at revision {}", key, revision)};
  }
  if (p.status == NATS_NO_RESPONDERS) {
    return Error{Errc::unknown_outcome, fmt::format("{} in the NATS bucket {} at {}: nothing answered the write (a "
                                                    "leader change, or the bucket is gone)",
                                                    doing, bucket, servers)};
  }
  if (p.jerr == kExpectationNotReady || p.status == NATS_TIMEOUT || connection_lost(p.status)) {
    Error e = failure(doing, p.status, p.jerr);
    e.code = Errc::unknown_outcome;
    e.message += " (the write may have landed)";
    return e;
  }
  return failure(doing, p.status, p.jerr);
}

Result<Revision> NatsStore::Connection::create_after(const Link& l, std::string_view key, std::string_view value,
                                                     Published p) {
  for (int attempt = 0; attempt < kCreateTries; ++attempt) {
    if (p.status == NATS_OK && !p.said) return p.revision;
    if (p.said || !lost_race(p.jerr)) return write_error(fmt::format("creating the key {}", key), key, 0, p);
    MsgHandle msg;
    if (auto st = last_message(l, key, msg); !st.ok()) return st.error();
    if (msg.p == nullptr) {
      p = publish(l, key, value, 0, true, false);  // purged meanwhile
    } else if (is_marker(msg.p)) {
      p = conditional(l, key, value, natsMsg_GetSequence(msg.p), false);
    } else {
      return Error{Errc::exists,
                   fmt::format("the key {} already holds a value (revision {})", key, natsMsg_GetSequence(msg.p))};
    }
  }
  if (p.status == NATS_OK && !p.said) return p.revision;
  return Error{Errc::changed, fmt::format("creating the key {}: other writers kept changing it", key)};
}

Result<std::optional<StoreEntry>> NatsStore::get(std::string_view key) {
  if (auto st = check_key(key); !st.ok()) return st.error();
  auto l = c_->live();
  if (!l.ok()) return std::move(l).error();
  MsgHandle msg;
  if (auto st = c_->last_message(**l, key, msg); !st.ok()) return st.error();
  if (msg.p == nullptr || is_marker(msg.p)) return std::optional<StoreEntry>();
  StoreEntry e;
  const char* data = natsMsg_GetData(msg.p);
  int len = natsMsg_GetDataLength(msg.p);
  if (data != nullptr && len > 0) e.value.assign(data, static_cast<std::size_t>(len));
  e.revision = natsMsg_GetSequence(msg.p);
  if (e.revision == 0) {
    return Error{Errc::store,
                 fmt::format("reading the key {} in the NATS bucket {}: the server gave no revision", key, c_->bucket)};
  }
  return std::optional<StoreEntry>(std::move(e));
}

Result<Revision> NatsStore::update(std::string_view key, std::string_view value, Revision revision) {
  if (auto st = check_write(key, value); !st.ok()) return st.error();
  if (revision == 0) {
    return Error{Errc::changed, fmt::format("the key {} is not at revision 0: no stored value is", key)};
  }
  auto l = c_->live();
  if (!l.ok()) return std::move(l).error();
  auto p = c_->conditional(**l, key, value, revision, false);
  if (p.status == NATS_OK && !p.said) return p.revision;
  return c_->write_error(fmt::format("updating the key {}", key), key, revision, p);
}

Result<Revision> NatsStore::create(std::string_view key, std::string_view value) {
  if (auto st = check_write(key, value); !st.ok()) return st.error();
  auto l = c_->live();
  if (!l.ok()) return std::move(l).error();
  return c_->create_after(**l, key, value, c_->publish(**l, key, value, 0, true, false));
}

Status NatsStore::remove(std::string_view key, Revision revision) {
  if (auto st = check_key(key); !st.ok()) return st;
  if (revision == 0) {
    return Status(Errc::changed, fmt::format("the key {} is not at revision 0: no stored value is", key));
  }
  auto l = c_->live();
  if (!l.ok()) return std::move(l).error();
  auto p = c_->conditional(**l, key, {}, revision, true);
  if (p.status == NATS_OK && !p.said) return Status::success();
  return c_->write_error(fmt::format("deleting the key {}", key), key, revision, p);
}

Result<Revision> NatsStore::put(std::string_view key, std::string_view value) {
  if (auto st = check_write(key, value); !st.ok()) return st.error();
  auto l = c_->live();
  if (!l.ok()) return std::move(l).error();
  auto p = c_->publish(**l, key, value, 0, false, false);
  if (p.status == NATS_OK) return p.revision;
  return c_->failure(fmt::format("writing the key {}", key), p.status, p.jerr);
}

}  // namespace leasejudge
