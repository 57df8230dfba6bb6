// What every store shares: the scan buffer, and the scan and pipeline any store has
// through its single-key calls.
#include "leasejudge/store.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <deque>

namespace leasejudge {

const char* write_outcome_name(WriteOutcome::Kind kind) noexcept {
  switch (kind) {
    case WriteOutcome::Kind::done:
      return "done";
    case WriteOutcome::Kind::changed:
      return "changed";
    case WriteOutcome::Kind::failed:
      return "failed";
    case WriteOutcome::Kind::unknown:
      return "unknown";
  }
  return "";
}

// --- the scan buffer ---------------------------------------------------------------

void ScanBuffer::clear() noexcept {
  bytes_.clear();
  entries_.clear();
  padded_ = false;
}

Status ScanBuffer::hand_over(const ScanSink& sink, ScanStats& stats) {
  if (entries_.empty()) return Status::success();
  ++stats.batches;
  Status s = sink(batch());
  clear();
  return s;
}

void ScanBuffer::add(std::string_view key, std::string_view value, Revision revision) {
  if (padded_) {
    bytes_.resize(bytes_.size() - padding);
    padded_ = false;
  }
  BatchEntry e;
  e.key_offset = bytes_.size();
  e.key_len = static_cast<std::uint32_t>(key.size());
  bytes_.append(key);
  e.value_offset = bytes_.size();
  e.value_len = static_cast<std::uint32_t>(value.size());
  bytes_.append(value);
  e.revision = revision;
  entries_.push_back(e);
}

bool ScanBuffer::full(const ScanOptions& options) const noexcept {
  return entries_.size() >= std::max<std::size_t>(options.batch_keys, 1) || bytes_.size() >= options.batch_bytes;
}

ScanBatch ScanBuffer::batch() {
  if (!padded_) {
    bytes_.append(padding, ' ');
    padded_ = true;
  }
  return ScanBatch{std::string_view(bytes_.data(), bytes_.size() - padding), padding,
                   std::span<const BatchEntry>(entries_)};
}

// --- the scan of any store: keys, then a get of each --------------------------------

Status Store::scan(std::string_view prefix, const ScanSink& sink, const ScanOptions&, ScanStats* stats) {
  ScanStats local;
  ScanStats& st = stats != nullptr ? *stats : local;
  auto keys = this->keys();
  if (!keys) return keys.error();
  ScanBuffer buffer;
  auto flush = [&] { return buffer.hand_over(sink, st); };
  for (const std::string& key : *keys) {
    if (key.compare(0, prefix.size(), prefix) != 0) continue;
    auto got = get(key);
    if (!got) {
      st.failed_key = key;
      return got.error();
    }
    if (!*got) continue;  // deleted since it was listed
    const StoreEntry& e = **got;
    buffer.add(key, e.value, e.revision);
    ++st.keys;
    st.bytes += key.size() + e.value.size();
    if (Status s = flush(); !s.ok()) return s;
  }
  return Status::success();
}

// --- the pipeline of any store: each write when it is sent --------------------------

namespace {

class SyncPipeline final : public WritePipeline {
 public:
  explicit SyncPipeline(Store& store) : store_(store) {}

  void update(std::string_view key, std::string_view value, Revision revision) override {
    auto r = store_.update(key, value, revision);
    outcomes_.push_back(r ? WriteOutcome{WriteOutcome::Kind::done, *r, {}} : outcome_of(r.error()));
  }
  void remove(std::string_view key, Revision revision) override {
    Status s = store_.remove(key, revision);
    outcomes_.push_back(s ? WriteOutcome{WriteOutcome::Kind::done, 0, {}} : outcome_of(s.error()));
  }
  void create(std::string_view key, std::string_view value) override {
    auto r = store_.create(key, value);
    outcomes_.push_back(r ? WriteOutcome{WriteOutcome::Kind::done, *r, {}} : outcome_of(r.error()));
  }
  std::size_t in_flight() const override { return outcomes_.size(); }
  std::size_t ready() const override { return outcomes_.size(); }
  std::optional<WriteOutcome> next() override {
    if (outcomes_.empty()) return std::nullopt;
    WriteOutcome o = std::move(outcomes_.front());
    outcomes_.pop_front();
    return o;
  }

 private:
  static WriteOutcome outcome_of(const Error& e) {
    WriteOutcome o;
    o.kind = e.code == Errc::changed || e.code == Errc::exists           ? WriteOutcome::Kind::changed
             : e.code == Errc::timeout || e.code == Errc::unknown_outcome ? WriteOutcome::Kind::unknown
                                                                           : WriteOutcome::Kind::failed;
    o.error = e;
    return o;
  }

  Store& store_;
  std::deque<WriteOutcome> outcomes_;
};

}  // namespace

Result<std::unique_ptr<KeyWatch>> Store::watch_key(std::string_view key, const KeyWatchOptions&) {
  return Error{Errc::unsupported, fmt::format("the store has no watch of its own for the key {}", key)};
}

std::unique_ptr<WritePipeline> Store::pipeline(const PipelineOptions&) {
  return std::make_unique<SyncPipeline>(*this);
}

}  // namespace leasejudge
