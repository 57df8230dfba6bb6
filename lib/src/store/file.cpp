// The file store (store/file.hpp).
#include "leasejudge/store/file.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstring>

namespace leasejudge {

namespace {

constexpr std::string_view control_name = ".leasejudge-store";
constexpr std::string_view magic = "lj1 ";

Error io_error(std::string_view what, const std::string& path, int err) {
  return Error{Errc::io, fmt::format("{} {}: {}", what, path, std::strerror(err))};
}

bool plain_byte(unsigned char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
}

struct Fd {
  int fd = -1;
  Fd() = default;
  explicit Fd(int f) : fd(f) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

// The store's write lock, held while it lives.
class WriteLock {
 public:
  static Result<std::unique_ptr<WriteLock>> take(const std::string& dir) {
    std::string path = dir + "/" + std::string(control_name);
    int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (fd < 0) return io_error("cannot open", path, errno);
    auto lock = std::unique_ptr<WriteLock>(new WriteLock(fd));
    while (::flock(fd, LOCK_EX) != 0) {
      if (errno != EINTR) return io_error("cannot lock", path, errno);
    }
    return lock;
  }

  // The next revision: past the last one handed out and past floor.
  Result<Revision> next(Revision floor) {
    char buf[64];
    ssize_t got = ::pread(fd_.fd, buf, sizeof buf, 0);
    Revision last = 0;
    if (got > 0) {
      std::string_view text(buf, static_cast<std::size_t>(got));
      if (text.substr(0, magic.size()) == magic) text.remove_prefix(magic.size());
      std::from_chars(text.data(), text.data() + text.size(), last);
    }
    Revision next = std::max(last, floor) + 1;
    std::string line = fmt::format("{}{}\n", magic, next);
    if (::pwrite(fd_.fd, line.data(), line.size(), 0) != static_cast<ssize_t>(line.size()) ||
        ::ftruncate(fd_.fd, static_cast<off_t>(line.size())) != 0) {
      return Error{Errc::io, fmt::format("cannot record the store's revision: {}", std::strerror(errno))};
    }
    return next;
  }

 private:
  explicit WriteLock(int fd) : fd_(fd) {}
  Fd fd_;
};

// The whole file at path into text (cleared first; its capacity kept); false when
// there is no such file.
Result<bool> read_whole(const std::string& path, std::string& text) {
  text.clear();
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.fd < 0) {
    if (errno == ENOENT) return false;
    return io_error("cannot open", path, errno);
  }
  char buf[65536];
  while (true) {
    ssize_t got = ::read(fd.fd, buf, sizeof buf);
    if (got < 0) {
      if (errno == EINTR) continue;
      return io_error("cannot read", path, errno);
    }
    if (got == 0) break;
    text.append(buf, static_cast<std::size_t>(got));
  }
  return true;
}

// A store file's text: its revision, and where its value starts.
struct FileEntry {
  Revision revision = 0;
  std::size_t value_at = 0;
};
Result<FileEntry> parse_entry(const std::string& path, std::string_view text) {
  std::size_t newline = text.find('\n');
  Revision revision = 0;
  if (text.substr(0, magic.size()) != magic || newline == std::string_view::npos) {
    return Error{Errc::store, fmt::format("{} is not a leasejudge store file", path)};
  }
  const char* first = text.data() + magic.size();
  const char* last = text.data() + newline;
  auto parsed = std::from_chars(first, last, revision);
  if (parsed.ec != std::errc() || parsed.ptr != last || revision == 0) {
    return Error{Errc::store, fmt::format("{} is not a leasejudge store file", path)};
  }
  return FileEntry{revision, newline + 1};
}

Result<std::optional<StoreEntry>> read_entry(const std::string& path) {
  std::string text;
  auto found = read_whole(path, text);
  if (!found) return std::move(found).error();
  if (!*found) return std::optional<StoreEntry>();
  auto parsed = parse_entry(path, text);
  if (!parsed) return std::move(parsed).error();
  StoreEntry entry;
  entry.revision = parsed->revision;
  entry.value = text.substr(parsed->value_at);
  return std::optional<StoreEntry>(std::move(entry));
}

// Write a complete file under a fresh temp name in dir; its path.
Result<std::string> write_temp(const std::string& dir, std::string_view value, Revision revision) {
  static std::atomic<std::uint64_t> serial{0};
  std::string content = fmt::format("{}{}\n", magic, revision);
  content.append(value);
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::string path = fmt::format("{}/.tmp.{}.{}", dir, ::getpid(), serial.fetch_add(1));
    Fd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666));
    if (fd.fd < 0) {
      if (errno == EEXIST) continue;  // left by a dead process that had our pid
      return io_error("cannot create", path, errno);
    }
    std::size_t done = 0;
    while (done < content.size()) {
      ssize_t put = ::write(fd.fd, content.data() + done, content.size() - done);
      if (put < 0) {
        if (errno == EINTR) continue;
        int err = errno;
        ::unlink(path.c_str());
        return io_error("cannot write", path, err);
      }
      done += static_cast<std::size_t>(put);
    }
    return path;
  }
  return Error{Errc::io, fmt::format("cannot create a temp file in {}", dir)};
}

// A key's file held for a write at revision: the store's write lock taken (held until
// the write is done), the file read under it and found at revision; changed when the
// key is gone or at another revision.
struct HeldKey {
  std::string path;
  std::unique_ptr<WriteLock> lock;
};
Result<HeldKey> hold_at(const std::string& dir, std::string_view key, Revision revision) {
  auto name = FileStore::file_name_of(key);
  if (!name) return std::move(name).error();
  HeldKey held{dir + "/" + *name, nullptr};
  auto lock = WriteLock::take(dir);
  if (!lock) return std::move(lock).error();
  held.lock = std::move(*lock);
  auto current = read_entry(held.path);
  if (!current) return std::move(current).error();
  if (!current->has_value()) return Error{Errc::changed, fmt::format("the key {} is gone", key)};
  if ((*current)->revision != revision) {
    return Error{Errc::changed,
                 fmt::format("the key {} is at revision {}, not {}", key, (*current)->revision, revision)};
  }
  return held;
}

}  // namespace

Result<std::string> FileStore::file_name_of(std::string_view key) {
  if (key.empty()) return Error{Errc::invalid_argument, "a store key cannot be empty"};
  static constexpr char hex[] = "0123456789ABCDEF";
  std::string name;
  name.reserve(key.size());
  for (std::size_t i = 0; i < key.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(key[i]);
    if (plain_byte(c) && !(i == 0 && c == '.')) {
      name.push_back(static_cast<char>(c));
    } else {
      name.push_back('%');
      name.push_back(hex[c >> 4]);
      name.push_back(hex[c & 0xF]);
    }
  }
  if (name.size() > 255) return Error{Errc::invalid_argument, "the store key is too long for a file name"};
  return name;
}

std::optional<std::string> FileStore::key_of(std::string_view name) {
  std::string key;
  for (std::size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    if (c == '%') {
      if (i + 2 >= name.size()) return std::nullopt;
      int value = 0;
      auto r = std::from_chars(name.data() + i + 1, name.data() + i + 3, value, 16);
      if (r.ec != std::errc() || r.ptr != name.data() + i + 3) return std::nullopt;
      key.push_back(static_cast<char>(value));
      i += 2;
    } else if (plain_byte(static_cast<unsigned char>(c))) {
      key.push_back(c);
    } else {
      return std::nullopt;
    }
  }
  // Only the one spelling file_name_of writes names a key.
  auto canonical = file_name_of(key);
  if (!canonical || *canonical != name) return std::nullopt;
  return key;
}

Result<std::unique_ptr<FileStore>> FileStore::open(std::string dir) {
  if (dir.empty()) return Error{Errc::invalid_argument, "the file store needs a directory"};
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  if (::mkdir(dir.c_str(), 0777) != 0 && errno != EEXIST) return io_error("cannot make", dir, errno);
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) return io_error("cannot stat", dir, errno);
  if (!S_ISDIR(st.st_mode)) return Error{Errc::io, fmt::format("{} is not a directory", dir)};
  std::string control = dir + "/" + std::string(control_name);
  Fd fd(::open(control.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666));
  if (fd.fd < 0) return io_error("cannot open", control, errno);
  return std::unique_ptr<FileStore>(new FileStore(std::move(dir)));
}

Result<std::vector<std::string>> FileStore::keys() {
  DIR* d = ::opendir(dir_.c_str());
  if (d == nullptr) return io_error("cannot list", dir_, errno);
  std::vector<std::string> out;
  errno = 0;
  while (dirent* e = ::readdir(d)) {
    std::string_view name = e->d_name;
    if (name.empty() || name.front() == '.') continue;
    if (auto key = key_of(name)) out.push_back(std::move(*key));
  }
  int err = errno;
  ::closedir(d);
  if (err != 0) return io_error("cannot list", dir_, err);
  std::sort(out.begin(), out.end());
  return out;
}

Status FileStore::scan(std::string_view prefix, const ScanSink& sink, const ScanOptions& options, ScanStats* stats) {
  ScanStats local;
  ScanStats& st = stats != nullptr ? *stats : local;
  auto keys = this->keys();
  if (!keys) return keys.error();
  ScanBuffer buffer;
  std::string text;  // one file's bytes, its capacity kept from file to file
  for (const std::string& key : *keys) {
    if (key.compare(0, prefix.size(), prefix) != 0) continue;
    std::string path = dir_ + "/" + *file_name_of(key);
    auto found = read_whole(path, text);
    if (!found) {
      st.failed_key = key;
      return std::move(found).error();
    }
    if (!*found) continue;  // deleted since it was listed
    auto parsed = parse_entry(path, text);
    if (!parsed) {
      st.failed_key = key;
      return std::move(parsed).error();
    }
    std::string_view value = std::string_view(text).substr(parsed->value_at);
    buffer.add(key, value, parsed->revision);
    ++st.keys;
    st.bytes += key.size() + value.size();
    if (buffer.full(options)) {
      if (Status s = buffer.hand_over(sink, st); !s.ok()) return s;
    }
  }
  return buffer.hand_over(sink, st);
}

Result<std::optional<StoreEntry>> FileStore::get(std::string_view key) {
  auto name = file_name_of(key);
  if (!name) return std::move(name).error();
  return read_entry(dir_ + "/" + *name);
}

Result<Revision> FileStore::create(std::string_view key, std::string_view value) {
  auto name = file_name_of(key);
  if (!name) return std::move(name).error();
  const std::string path = dir_ + "/" + *name;
  auto lock = WriteLock::take(dir_);
  if (!lock) return std::move(lock).error();
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) return Error{Errc::exists, fmt::format("the key {} exists", key)};
  auto revision = (*lock)->next(0);
  if (!revision) return std::move(revision).error();
  auto temp = write_temp(dir_, value, *revision);
  if (!temp) return std::move(temp).error();
  int linked = ::link(temp->c_str(), path.c_str());
  int err = errno;
  ::unlink(temp->c_str());
  if (linked != 0) {
    if (err == EEXIST) return Error{Errc::exists, fmt::format("the key {} exists", key)};
    return io_error("cannot create", path, err);
  }
  return *revision;
}

Result<Revision> FileStore::update(std::string_view key, std::string_view value, Revision revision) {
  auto held = hold_at(dir_, key, revision);
  if (!held) return std::move(held).error();
  auto next = held->lock->next(revision);
  if (!next) return std::move(next).error();
  auto temp = write_temp(dir_, value, *next);
  if (!temp) return std::move(temp).error();
  if (::rename(temp->c_str(), held->path.c_str()) != 0) {
    int err = errno;
    ::unlink(temp->c_str());
    return io_error("cannot replace", held->path, err);
  }
  return *next;
}

Status FileStore::remove(std::string_view key, Revision revision) {
  auto held = hold_at(dir_, key, revision);
  if (!held) return std::move(held).error();
  if (::unlink(held->path.c_str()) != 0) return io_error("cannot delete", held->path, errno);
  return Status::success();
}

}  // namespace leasejudge
