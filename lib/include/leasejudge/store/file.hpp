// The file store: a Store in a directory, for locks shared by the processes of one
// machine (and any language that can read a file: a key's file holds its value).
//
// Layout: one file per key, named by the key (bytes outside [A-Za-z0-9._-], and a
// leading '.', written as %XX), holding `lj1 <revision>\n` and then the value.
// Every write happens under an exclusive flock(2) of the directory's
// `.leasejudge-store` file, which also keeps the last revision handed out, so that
// revisions only grow across the whole store (a key deleted and created again gets
// a larger revision: a fencing token stays monotonic). A value is written to a temp
// file first (created O_EXCL), then created in place with link(2), which fails when
// the key exists, or replaced with rename(2): a reader (which takes no lock) sees
// the old file or the new one, never half of one. Names starting with '.' are the
// store's own and never keys.
#pragma once

#include <memory>
#include <string>

#include "leasejudge/store.hpp"

namespace leasejudge {

class FileStore final : public Store {
 public:
  // The store in dir, created (one level, mode 0777 less the umask) when missing.
  // Errc::io when dir cannot be made or is not a directory.
  static Result<std::unique_ptr<FileStore>> open(std::string dir);

  Result<std::vector<std::string>> keys() override;
  Result<std::optional<StoreEntry>> get(std::string_view key) override;
  Result<Revision> update(std::string_view key, std::string_view value, Revision revision) override;
  Result<Revision> create(std::string_view key, std::string_view value) override;
  Status remove(std::string_view key, Revision revision) override;
  // The keys listed, then each file read into the batch buffer.
  Status scan(std::string_view prefix, const ScanSink& sink, const ScanOptions& options = {},
              ScanStats* stats = nullptr) override;

  const std::string& dir() const noexcept { return dir_; }
  // The file name a key is kept under; Errc::invalid_argument for an empty key or
  // one whose name would be longer than 255 bytes.
  static Result<std::string> file_name_of(std::string_view key);
  // The key a file name holds; nullopt for a name that is not one.
  static std::optional<std::string> key_of(std::string_view file_name);

 private:
  explicit FileStore(std::string dir) : dir_(std::move(dir)) {}
  std::string dir_;
};

}  // namespace leasejudge
