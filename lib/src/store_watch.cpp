// The default watch of a store: a scan per poll, and what moved between two scans.
#include <chrono>
#include <thread>
#include <unordered_map>

#include "leasejudge/clock.hpp"
#include "leasejudge/store.hpp"

namespace leasejudge {

namespace {

class PollingWatch final : public KeyWatch {
 public:
  PollingWatch(Store& store, std::string prefix, const KeyWatchOptions& options)
      : store_(store), prefix_(std::move(prefix)), options_(options) {}

  // The first scan: what the keys hold now, handed over to nobody.
  Status start() {
    std::vector<KeyChange> none;
    return poll(none, false);
  }

  Status next(std::vector<KeyChange>& out, std::int64_t wait_ns) override {
    if (!broken_.ok()) return broken_;
    std::int64_t now = steady_now_ns();
    std::int64_t due = last_poll_ + options_.poll_ns;
    if (now < due) {
      std::int64_t nap = std::min(due - now, std::max<std::int64_t>(wait_ns, 0));
      if (nap > 0) std::this_thread::sleep_for(std::chrono::nanoseconds(nap));
      if (steady_now_ns() < due) return Status::success();
    }
    return poll(out, true);
  }

 private:
  Status poll(std::vector<KeyChange>& out, bool hand_over) {
    std::int64_t since = last_poll_unix_;
    last_poll_ = steady_now_ns();
    last_poll_unix_ = unix_now_ns();
    std::unordered_map<std::string, Revision> now;
    now.reserve(seen_.size());
    ScanOptions so;
    so.note = options_.note;
    Status st = store_.scan(
        prefix_,
        [&](const ScanBatch& batch) {
          for (const BatchEntry& e : batch.entries) {
            std::string key(batch.buffer.substr(e.key_offset, e.key_len));
            auto was = seen_.find(key);
            if (hand_over && (was == seen_.end() || was->second != e.revision))
              out.push_back(
                  KeyChange{key, e.revision, std::string(batch.buffer.substr(e.value_offset, e.value_len)), since});
            now.emplace(std::move(key), e.revision);
          }
          return Status::success();
        },
        so);
    if (!st.ok()) {
      broken_ = st;
      return st;
    }
    if (hand_over)
      for (const auto& [key, revision] : seen_)
        if (now.find(key) == now.end()) out.push_back(KeyChange{key, revision, std::nullopt, since});
    seen_ = std::move(now);
    return Status::success();
  }

  Store& store_;
  std::string prefix_;
  KeyWatchOptions options_;
  std::unordered_map<std::string, Revision> seen_;
  std::int64_t last_poll_ = 0, last_poll_unix_ = 0;
  Status broken_;
};

}  // namespace

Result<std::unique_ptr<KeyWatch>> Store::watch(std::string_view prefix, const KeyWatchOptions& options) {
  if (options.poll_ns <= 0) return Error{Errc::invalid_argument, "a watch polls at least once per nanosecond"};
  auto w = std::make_unique<PollingWatch>(*this, std::string(prefix), options);
  if (Status st = w->start(); !st.ok()) return st.error();
  return std::unique_ptr<KeyWatch>(std::move(w));
}

}  // namespace leasejudge
