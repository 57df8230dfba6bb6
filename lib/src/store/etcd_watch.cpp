// The etcd store's watch (etcd_store.hpp): /v3/watch, a stream of JSON lines.
#include <fmt/format.h>
#include <simdjson.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <iterator>

#include "etcd_store.hpp"
#include "etcd_wire.hpp"

namespace leasejudge {

using namespace etcd_wire;

namespace {

class EtcdWatch final : public KeyWatch {
 public:
  EtcdWatch(EtcdStore::Connection& c, std::string_view prefix, const KeyWatchOptions& options);
  ~EtcdWatch() override;
  Status begin();
  Status next(std::vector<KeyChange>& out, std::int64_t wait_ns) override;

 private:
  void drive(int wait_ms);
  Status read_lines(std::vector<KeyChange>& out);
  Status read_result(dom::element result, std::vector<KeyChange>& out);
  Status resume_after_compaction(std::vector<KeyChange>& out);

  EtcdStore::Connection& c_;
  Multi m_;
  Http http_;
  std::string key_prefix_, prefix_, body_, scratch_, key_, value_;
  KeyWatchOptions options_;
  dom::parser parser_;
  Revision from_ = 0;       // the start revision asked of etcd (0: now)
  Revision compacted_ = 0;  // etcd canceled the watch: it keeps revisions from this one on
  bool created_ = false, ended_ = false, added_ = false;
  Transfer end_;
  Status broken_;
};

EtcdWatch::EtcdWatch(EtcdStore::Connection& c, std::string_view prefix, const KeyWatchOptions& options)
    : c_(c),
      m_(c, "/v3/watch"),
      key_prefix_(c.key_prefix),
      prefix_(c.key_prefix + std::string(prefix)),
      options_(options),
      from_(options.from_revision) {
  if (!options_.note) options_.note = c.o.note;
}

EtcdWatch::~EtcdWatch() {
  if (added_) curl_multi_remove_handle(m_.multi, http_.easy);
}

// Open the stream (again, after a compaction) from from_, and wait for etcd's word.
Status EtcdWatch::begin() {
  if (added_) curl_multi_remove_handle(m_.multi, http_.easy);
  added_ = created_ = ended_ = false;
  body_ = "{\"create_request\":{";
  append_bytes_field(body_, "key", prefix_, scratch_);
  body_ += ',';
  append_bytes_field(body_, "range_end", prefix_end(prefix_), scratch_);
  if (from_ != 0) {
    body_ += ',';
    append_int_field(body_, "start_revision", from_);
  }
  body_ += "}}";
  prepare_easy(http_, m_.url, m_.headers, m_.o, body_, std::chrono::milliseconds(0));
  curl_multi_add_handle(m_.multi, http_.easy);
  added_ = true;
  auto deadline = Clock::now() + m_.o.request_timeout;
  std::vector<KeyChange> none;
  while (!created_) {
    if (!broken_) return broken_;
    if (Clock::now() > deadline) {
      return Error{Errc::store, fmt::format("etcd at {}: the watch was not confirmed within {} ms", m_.url,
                                            m_.o.request_timeout.count())};
    }
    drive(100);
    if (ended_ && (end_.code != CURLE_OK || end_.http != 200)) {
      return transfer_error(end_, http_.response, false, fmt::format("etcd at {}: the watch", m_.url));
    }
    if (Status s = read_lines(none); !s) return s;
  }
  return Status::success();
}

void EtcdWatch::drive(int wait_ms) {
  m_.drive(wait_ms, [this](CURL*, CURLcode code) {
    added_ = false;
    ended_ = true;
    end_ = transfer_of(http_, code);
  });
}

Status EtcdWatch::next(std::vector<KeyChange>& out, std::int64_t wait_ns) {
  if (!broken_) return broken_;
  std::size_t had = out.size();
  auto deadline = Clock::now() + std::chrono::nanoseconds(std::max<std::int64_t>(wait_ns, 0));
  for (;;) {
    if (Status s = read_lines(out); !s) return broken_ = s;
    if (compacted_ != 0) {
      if (Status s = resume_after_compaction(out); !s) return broken_ = s;
    }
    if (out.size() > had) return Status::success();
    if (ended_) {
      broken_ = Error{Errc::store, fmt::format("etcd at {}: the watch stream ended: {}", m_.url,
                                               end_.code != CURLE_OK ? end_.error : "the member closed it")};
      return broken_;
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return Status::success();
    drive(static_cast<int>(std::min<long long>(left, 100)));
  }
}

// Each complete line of the stream so far (a JSON object) into out.
Status EtcdWatch::read_lines(std::vector<KeyChange>& out) {
  std::string& stream = http_.response;
  std::size_t at = 0;
  for (std::size_t nl; compacted_ == 0 && (nl = stream.find('\n', at)) != std::string::npos; at = nl + 1) {
    std::string_view line(stream.data() + at, nl - at);
    if (line.find_first_not_of(" \r\t") == std::string_view::npos) continue;
    dom::element doc, result;
    if (parser_.parse(line.data(), line.size()).get(doc) != simdjson::SUCCESS) {
      return Error{Errc::store, fmt::format("etcd at {}: the watch sent a line that is not JSON", m_.url)};
    }
    if (doc["result"].get(result) != simdjson::SUCCESS) {
      dom::element error;
      std::string_view message = doc["error"].get(error) == simdjson::SUCCESS ? string_field(error, "message") : "";
      return Error{Errc::store, fmt::format("etcd at {}: the watch failed: {}", m_.url, message)};
    }
    if (Status s = read_result(result, out); !s) return s;
  }
  stream.erase(0, at);
  return Status::success();
}

Status EtcdWatch::read_result(dom::element result, std::vector<KeyChange>& out) {
  if (bool_field(result, "created")) created_ = true;
  if (bool_field(result, "canceled") && int_field(result, "compact_revision") != 0) {
    compacted_ = int_field(result, "compact_revision");
    return Status::success();
  }
  if (bool_field(result, "canceled")) {
    return Error{Errc::store,
                 fmt::format("etcd at {}: the watch was canceled (compacted at revision {}): {}", m_.url,
                             int_field(result, "compact_revision"), string_field(result, "cancel_reason"))};
  }
  dom::array events;
  if (result["events"].get(events) != simdjson::SUCCESS) return Status::success();
  for (dom::element ev : events) {
    dom::element kv;
    if (ev["kv"].get(kv) != simdjson::SUCCESS || !base64_decode(string_field(kv, "key"), key_) ||
        key_.size() < key_prefix_.size() || !base64_decode(string_field(kv, "value"), value_)) {
      return Error{Errc::store, fmt::format("etcd at {}: the watch sent an event without a key", m_.url)};
    }
    KeyChange change;
    change.key = key_.substr(key_prefix_.size());
    change.revision = int_field(kv, "mod_revision");
    if (string_field(ev, "type") != "DELETE") change.value = value_;
    out.push_back(std::move(change));
  }
  return Status::success();
}

// etcd compacted the revisions the watch was to start from: what changed in them can
// no longer be read. Every key of the prefix as it is now (a scan) stands in for
// them, and the watch goes on from the revision after the scan's.
Status EtcdWatch::resume_after_compaction(std::vector<KeyChange>& out) {
  const Revision compacted = compacted_, asked = from_;
  compacted_ = 0;
  Revision at = 0;
  const std::size_t skip = key_prefix_.size();
  std::vector<KeyChange> scanned;
  Status s = c_.range_all(
      prefix_, 1000, false, "the watch's scan after a compaction",
      [&](dom::element kv) -> Status {
        if (!base64_decode(string_field(kv, "key"), key_) || key_.size() < skip ||
            !base64_decode(string_field(kv, "value"), value_)) {
          return Error{Errc::store, fmt::format("etcd at {}: the watch's scan read a key that is not base64", m_.url)};
        }
        scanned.push_back(KeyChange{key_.substr(skip), int_field(kv, "mod_revision"), value_, 0});
        return Status::success();
      },
      &at);
  if (!s) return s;
  out.insert(out.end(), std::make_move_iterator(scanned.begin()), std::make_move_iterator(scanned.end()));
  if (options_.note) {
    options_.note(
        fmt::format("etcd at {}: the watch's start revision {} was compacted (etcd keeps revisions from "
                    "{} on): a scan at revision {} ({} keys) stands for the changes since, and the watch "
                    "goes on from revision {}",
                    m_.url, asked, compacted, at, scanned.size(), at + 1));
  }
  from_ = at + 1;
  return begin();
}

}  // namespace

Result<std::unique_ptr<KeyWatch>> EtcdStore::watch(std::string_view prefix, const KeyWatchOptions& options) {
  if (options.from_revision > static_cast<Revision>(INT64_MAX)) {
    return Error{Errc::invalid_argument,
                 fmt::format("a watch cannot start from revision {}: etcd's revisions are at most {}",
                             options.from_revision, INT64_MAX)};
  }
  auto w = std::make_unique<EtcdWatch>(*c_, prefix, options);
  if (Status s = w->begin(); !s) return s.error();
  return std::unique_ptr<KeyWatch>(std::move(w));
}

}  // namespace leasejudge
