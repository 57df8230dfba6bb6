// A steps state read from JSON lines ({"key","revision","value"} per line) into memory, for
// the sweep contenders: one buffer holds every key and every value where the file has them,
// followed by padding, so every contender reads the same bytes in place, with no copy per
// key, and the batch plan takes the buffer as it is. Reading the lines is never timed. The
// lines are read by the library's reader (leasejudge/step_lines.hpp, the format of
// `leasejudge step plan`); keys with escapes and values carried as JSON strings of their
// bytes are appended, unescaped, after the file's bytes.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "leasejudge/error.hpp"

namespace leasejudge::bench {

struct StepLine {
  std::uint64_t key_offset = 0, value_offset = 0;  // into StepLines::text
  std::uint32_t key_len = 0, value_len = 0;        // value_len 0: the key holds no value
  std::uint64_t revision = 0;
};

struct StepLines {
  std::string text;           // the file, unescaped keys, then padding_bytes of padding
  std::size_t size = 0;       // text's bytes before the padding
  std::size_t file_size = 0;  // the file's own bytes, at the start of text
  std::vector<StepLine> lines;
  std::uint64_t value_bytes = 0;

  static constexpr std::size_t padding_bytes = 64;
  std::string_view buffer() const { return std::string_view(text).substr(0, size); }
  std::string_view key(const StepLine& l) const { return std::string_view(text).substr(l.key_offset, l.key_len); }
  std::string_view value(const StepLine& l) const { return std::string_view(text).substr(l.value_offset, l.value_len); }
};

// Read path. Errc::io when it cannot be read, Errc::parse naming the first line that is
// malformed and why.
Result<StepLines> read_step_lines(const std::string& path);

// The file's bytes, in a string with room(file's size) more bytes reserved beyond them
// (none when room is empty). Errc::io when it cannot be read.
Result<std::string> read_file(const std::string& path, const std::function<std::size_t(std::size_t)>& room = {});

}  // namespace leasejudge::bench
