// The stoppable store: each call asks for a stop first.
#include "leasejudge/stoppable_store.hpp"

#include <deque>

namespace leasejudge {

namespace {

class StoppablePipeline final : public WritePipeline {
 public:
  StoppablePipeline(std::unique_ptr<WritePipeline> inner, const std::function<bool()>& stopped, Error error)
      : inner_(std::move(inner)), stopped_(stopped), error_(std::move(error)) {}
  void update(std::string_view key, std::string_view value, Revision revision) override {
    if (refuse()) return;
    inner_->update(key, value, revision);
  }
  void remove(std::string_view key, Revision revision) override {
    if (refuse()) return;
    inner_->remove(key, revision);
  }
  void create(std::string_view key, std::string_view value) override {
    if (refuse()) return;
    inner_->create(key, value);
  }
  std::size_t in_flight() const override { return inner_->in_flight() + refused_.size(); }
  std::size_t ready() const override { return inner_->ready() > 0 ? inner_->ready() : refused_.size(); }
  bool broken() const override { return stopped_() || inner_->broken(); }
  std::optional<WriteOutcome> next() override {
    if (inner_->in_flight() > 0) return inner_->next();
    if (refused_.empty()) return std::nullopt;
    WriteOutcome o = std::move(refused_.front());
    refused_.pop_front();
    return o;
  }

 private:
  bool refuse() {
    if (!stopped_()) return false;
    // Outcomes keep the order sent: a refused write waits behind those in flight.
    refused_.push_back(WriteOutcome{WriteOutcome::Kind::failed, 0, error_});
    return true;
  }
  std::unique_ptr<WritePipeline> inner_;
  const std::function<bool()>& stopped_;
  Error error_;
  std::deque<WriteOutcome> refused_;
};

}  // namespace

Result<std::vector<std::string>> StoppableStore::keys() {
  if (stopped()) return stop_error();
  return inner_.keys();
}

Result<std::optional<StoreEntry>> StoppableStore::get(std::string_view key) {
  if (stopped()) return stop_error();
  return inner_.get(key);
}

Result<Revision> StoppableStore::update(std::string_view key, std::string_view value, Revision revision) {
  if (stopped()) return stop_error();
  return inner_.update(key, value, revision);
}

Result<Revision> StoppableStore::create(std::string_view key, std::string_view value) {
  if (stopped()) return stop_error();
  return inner_.create(key, value);
}

Status StoppableStore::remove(std::string_view key, Revision revision) {
  if (stopped()) return stop_error();
  return inner_.remove(key, revision);
}

// The inner store's own bulk read, stopped before its next batch.
Status StoppableStore::scan(std::string_view prefix, const ScanSink& sink, const ScanOptions& options,
                            ScanStats* stats) {
  if (stopped()) return stop_error();
  return inner_.scan(
      prefix,
      [&](const ScanBatch& batch) {
        if (stopped()) return Status(stop_error());
        return sink(batch);
      },
      options, stats);
}

std::unique_ptr<WritePipeline> StoppableStore::pipeline(const PipelineOptions& options) {
  return std::make_unique<StoppablePipeline>(inner_.pipeline(options), stopped_, stop_error());
}

Result<std::unique_ptr<KeyWatch>> StoppableStore::watch(std::string_view prefix, const KeyWatchOptions& options) {
  if (stopped()) return stop_error();
  return inner_.watch(prefix, options);
}

}  // namespace leasejudge
