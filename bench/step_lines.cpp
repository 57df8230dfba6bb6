// Reading a steps state's JSON lines (step_lines.hpp) with simdjson On-Demand.
#include "step_lines.hpp"

#include <fmt/format.h>
#include <simdjson.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace leasejudge::bench {
namespace {

static_assert(StepLines::padding_bytes >= simdjson::SIMDJSON_PADDING);

Result<std::string> slurp(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return Error{Errc::io, fmt::format("opening {}: {}", path, std::strerror(errno))};
  std::string text;
  if (std::fseek(f, 0, SEEK_END) == 0) {
    long n = std::ftell(f);
    // Room for what read_step_lines appends (unescaped keys, stored bytes, padding)
    // without moving the file's bytes: a move would hold the state twice at once.
    if (n > 0) {
      auto size = static_cast<std::size_t>(n);
      text.reserve(size + size / 16 + (1u << 20) + 2 * StepLines::padding_bytes);
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

}  // namespace

Result<StepLines> read_step_lines(const std::string& path) {
  auto text = slurp(path);
  if (!text) return std::move(text).error();
  StepLines out;
  out.text = std::move(*text);
  const std::size_t file_size = out.text.size();
  out.text.append(StepLines::padding_bytes, ' ');
  // Unescaped keys that differ from their text and values carried as JSON strings,
  // appended after the file's bytes.
  std::string extra;

  simdjson::ondemand::parser parser;
  const char* base = out.text.data();
  std::size_t at = 0;
  for (std::size_t line = 1; at < file_size; ++line) {
    const char* nl = static_cast<const char*>(std::memchr(base + at, '\n', file_size - at));
    std::size_t end = nl != nullptr ? static_cast<std::size_t>(nl - base) : file_size;
    std::size_t start = at, len = end - at;
    at = end + 1;
    if (std::string_view(base + start, len).find_first_not_of(" \t\r") == std::string_view::npos) continue;
    auto bad = [&](std::string_view why) { return Error{Errc::parse, fmt::format("{} line {}: {}", path, line, why)}; };
    simdjson::ondemand::document doc;
    if (parser.iterate(simdjson::padded_string_view(base + start, len, out.text.size() - start)).get(doc))
      return bad("no JSON");
    simdjson::ondemand::object obj;
    if (doc.get_object().get(obj)) return bad("no object");
    simdjson::ondemand::value key_value;
    std::string_view key;
    if (obj["key"].get(key_value) || key_value.get_string().get(key)) return bad("no string key");
    StepLine l;
    std::string_view key_raw = key_value.raw_json_token();
    std::size_t q = key_raw.rfind('"');
    if (q != std::string_view::npos && q > 0 && key_raw.substr(1, q - 1) == key) {
      l.key_offset = static_cast<std::size_t>(key_raw.data() + 1 - base);
    } else {
      l.key_offset = file_size + extra.size();
      extra.append(key);
    }
    l.key_len = static_cast<std::uint32_t>(key.size());
    if (obj["revision"].get_uint64().get(l.revision)) return bad("no revision");
    simdjson::ondemand::value value;
    auto found = obj["value"].get(value);
    if (found == simdjson::NO_SUCH_FIELD) {  // the key holds no value
      out.lines.push_back(l);
      continue;
    }
    if (found) return bad("an unreadable value");
    simdjson::ondemand::json_type type;
    if (value.type().get(type)) return bad("an unreadable value");
    std::string_view raw;
    simdjson::error_code e = simdjson::SUCCESS;
    bool stored_bytes = false;
    if (type == simdjson::ondemand::json_type::object) {
      simdjson::ondemand::object o;
      e = value.get_object().get(o);
      if (!e) e = o.raw_json().get(raw);
    } else if (type == simdjson::ondemand::json_type::array) {
      simdjson::ondemand::array a;
      e = value.get_array().get(a);
      if (!e) e = a.raw_json().get(raw);
    } else if (type == simdjson::ondemand::json_type::string) {
      // A JSON string holds the stored bytes themselves (a value that is not JSON).
      e = value.get_string().get(raw);
      stored_bytes = true;
    } else {
      raw = value.raw_json_token();
      while (!raw.empty() && (raw.back() == ' ' || raw.back() == '\t' || raw.back() == '\r' || raw.back() == '\n'))
        raw.remove_suffix(1);
    }
    if (e) return bad("an unreadable value");
    if (raw.size() > UINT32_MAX) return bad("a value over 4 GB");
    if (stored_bytes) {
      l.value_offset = file_size + extra.size();
      extra.append(raw);
      extra.append(StepLines::padding_bytes, ' ');  // each stored value parsed in place too
    } else {
      l.value_offset = static_cast<std::size_t>(raw.data() - base);
    }
    l.value_len = static_cast<std::uint32_t>(raw.size());
    out.value_bytes += raw.size();
    out.lines.push_back(l);
  }
  out.text.resize(file_size);
  out.file_size = file_size;
  out.text.append(extra);
  out.size = out.text.size();
  out.text.append(StepLines::padding_bytes, ' ');
  return out;
}

}  // namespace leasejudge::bench
