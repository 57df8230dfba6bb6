// A stoppable store: another store's calls, refused once a stop is asked for, so that
// a sweep over it stops before its next store call and never cuts a write short.
//
// Every call asks stopped() first; once it says true, the call fails with Errc::user
// and the message given, without a word to the store. A scan stops before its next
// batch; a pipeline refuses each write sent after the stop (its outcome failed, in the
// order sent, behind the writes in flight, which are waited for as ever) and says it
// is broken, so a sweep sends no more.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "leasejudge/store.hpp"

namespace leasejudge {

class StoppableStore final : public Store {
 public:
  // inner and stopped outlive this store and every pipeline it gives.
  StoppableStore(Store& inner, std::function<bool()> stopped, std::string message)
      : inner_(inner), stopped_(std::move(stopped)), message_(std::move(message)) {}

  Result<std::vector<std::string>> keys() override;
  Result<std::optional<StoreEntry>> get(std::string_view key) override;
  Result<Revision> update(std::string_view key, std::string_view value, Revision revision) override;
  Result<Revision> create(std::string_view key, std::string_view value) override;
  Status remove(std::string_view key, Revision revision) override;
  Status scan(std::string_view prefix, const ScanSink& sink, const ScanOptions& options = {},
              ScanStats* stats = nullptr) override;
  std::unique_ptr<WritePipeline> pipeline(const PipelineOptions& options = {}) override;
  std::size_t write_window() const override { return inner_.write_window(); }
  Result<std::unique_ptr<KeyWatch>> watch(std::string_view prefix, const KeyWatchOptions& options = {}) override;

 private:
  bool stopped() const { return stopped_(); }
  Error stop_error() const { return Error{Errc::user, message_}; }
  Store& inner_;
  std::function<bool()> stopped_;
  std::string message_;
};

}  // namespace leasejudge
