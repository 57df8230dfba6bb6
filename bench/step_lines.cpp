// Reading a steps state's JSON lines (step_lines.hpp) with the library's reader.
#include "step_lines.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "leasejudge/step_lines.hpp"

namespace leasejudge::bench {

Result<std::string> read_file(const std::string& path, const std::function<std::size_t(std::size_t)>& room) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return Error{Errc::io, fmt::format("opening {}: {}", path, std::strerror(errno))};
  std::string text;
  if (std::fseek(f, 0, SEEK_END) == 0) {
    long n = std::ftell(f);
    if (n > 0) {
      auto size = static_cast<std::size_t>(n);
      text.reserve(size + (room ? room(size) : 0));
    }
    std::rewind(f);
  }
  char chunk[1 << 16];
  std::size_t n;
  while ((n = std::fread(chunk, 1, sizeof chunk, f)) > 0) text.append(chunk, n);
  bool failed = std::ferror(f) != 0;
  std::fclose(f);
  if (failed) return Error{Errc::io, fmt::format("reading {}", path)};
  return text;
}

Result<StepLines> read_step_lines(const std::string& path) {
  // Room for what is appended (unescaped keys, stored bytes, padding) without moving
  // the file's bytes: a move would hold the state twice at once.
  auto text = read_file(path, [](std::size_t size) { return size / 16 + (1u << 20) + 2 * StepLines::padding_bytes; });
  if (!text) return std::move(text).error();
  StepLines out;
  out.text = std::move(*text);
  const std::size_t file_size = out.text.size();
  // Keys and stored bytes that are not the file's own bytes (escapes undone, values
  // carried as JSON strings), appended after the file's bytes; each stored value with
  // padding after it, as the file's values have the file's bytes after them.
  std::string extra;
  StepLineReader reader;
  const char* base = out.text.data();
  auto in_file = [&](std::string_view s) { return s.data() >= base && s.data() + s.size() <= base + file_size; };
  std::size_t at = 0;
  for (std::size_t line = 1; at < file_size; ++line) {
    const char* nl = static_cast<const char*>(std::memchr(base + at, '\n', file_size - at));
    std::size_t end = nl != nullptr ? static_cast<std::size_t>(nl - base) : file_size;
    std::string_view text(base + at, end - at);
    at = end + 1;
    if (text.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    const leasejudge::StepLine& read = reader.read(text);
    if (read.malformed != nullptr) return Error{Errc::parse, fmt::format("{} line {}: {}", path, line, read.malformed)};
    StepLine l;
    if (in_file(read.key)) {
      l.key_offset = static_cast<std::size_t>(read.key.data() - base);
    } else {
      l.key_offset = file_size + extra.size();
      extra.append(read.key);
    }
    l.key_len = static_cast<std::uint32_t>(read.key.size());
    l.revision = read.revision;
    if (!read.value.empty()) {
      if (in_file(read.value)) {
        l.value_offset = static_cast<std::size_t>(read.value.data() - base);
      } else {
        l.value_offset = file_size + extra.size();
        extra.append(read.value);
        extra.append(StepLines::padding_bytes, ' ');
      }
      l.value_len = static_cast<std::uint32_t>(read.value.size());
      out.value_bytes += read.value.size();
    }
    out.lines.push_back(l);
  }
  out.file_size = file_size;
  out.text.append(extra);
  out.size = out.text.size();
  out.text.append(StepLines::padding_bytes, ' ');
  return out;
}

}  // namespace leasejudge::bench
