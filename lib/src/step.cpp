// Steps: keys, the codec (Go's decoder on simdjson On-Demand) and the staleness rules.
#include "leasejudge/step.hpp"

#include <fmt/format.h>
#include <simdjson.h>
#include <unistd.h>
#include <uuid/uuid.h>

#include <algorithm>
#include <cstring>

#include "step_json.hpp"

namespace leasejudge {

static_assert(step_padding >= simdjson::SIMDJSON_PADDING, "step_padding must cover simdjson's padding");

namespace {

namespace od = simdjson::ondemand;
using step_json::StringScan;

// The fields of delivery.Step, and of its ask, by their JSON names.
enum class Field : std::uint8_t { unknown, id, tool, state, owner, started, ended, reason, result, ask };
enum class AskField : std::uint8_t { unknown, kind, check, build, compose };
enum class PartField : std::uint8_t { unknown, fetch, levels, run, module, fp };

// A string value found in the bytes: offsets of its body (between the quotes).
struct RawString {
  std::uint32_t begin = 0, end = 0;
  bool decode = false;  // escapes or non-ASCII bytes: must go through unquote
  bool set = false;
};

// One top-level field as it sits in the bytes, for the end rewrite.
struct FieldSpan {
  std::uint32_t key_begin, value_begin, value_end;
  Field field;
};

bool split_step_key(std::string_view key, StepKeyParts& out) noexcept {
  auto dot = key.find('.');
  if (dot == std::string_view::npos || dot == 0 || dot + 1 == key.size()) return false;
  out.node = key.substr(0, dot);
  out.id = key.substr(dot + 1);
  return true;
}

bool ends_with_ask(std::string_view tool) noexcept {
  return tool.size() >= 4 && tool.compare(tool.size() - 4, 4, " ask") == 0;
}

}  // namespace

// --- keys ----------------------------------------------------------------------------

Instant this_process_start() {
  static const Instant start = [] {
    auto ps = process_start(static_cast<Pid>(::getpid()));
    return ps ? Instant::from_unix_ms(ps->unix_ms) : system_now();
  }();
  return start;
}

Result<std::string> step_key(std::string_view node, std::string_view id) {
  if (node.empty()) return Error{Errc::invalid_argument, "a step's node is empty"};
  if (node.find('.') != std::string_view::npos)
    return Error{Errc::invalid_argument, fmt::format("the node {} holds a '.', which ends a step key's node", node)};
  if (id.empty()) return Error{Errc::invalid_argument, "a step's id is empty"};
  std::string key;
  key.reserve(node.size() + 1 + id.size());
  key.append(node).append(".").append(id);
  return key;
}

Result<StepKeyParts> parse_step_key(std::string_view key) {
  StepKeyParts parts;
  if (!split_step_key(key, parts)) return Error{Errc::parse, fmt::format("the key {} is no step key <node>.<id>", key)};
  return parts;
}

bool is_canonical_uuid(std::string_view text) noexcept {
  if (text.size() != 36) return false;
  uuid_t uu;
  return uuid_parse_range(text.data(), text.data() + text.size(), uu) == 0;
}

Result<StepKeyParts> parse_ask_step_key(std::string_view key) {
  StepKeyParts parts;
  if (!split_step_key(key, parts)) return Error{Errc::parse, fmt::format("the key {} is no step key <node>.<id>", key)};
  if (!is_canonical_uuid(parts.id))
    return Error{Errc::parse, fmt::format("the key {} is no ask's key: its id is no UUID", key)};
  return parts;
}

bool is_ask_step(std::string_view key, std::string_view tool) noexcept {
  StepKeyParts parts;
  return split_step_key(key, parts) && is_canonical_uuid(parts.id) && ends_with_ask(tool);
}

// --- the codec -------------------------------------------------------------------------

struct StepCodec::Impl {
  od::parser parser;
  std::unique_ptr<char[]> pad;  // a padded copy of the value for simdjson
  std::size_t pad_capacity = 0;
  std::string scratch;           // decoded strings of the last read
  std::string key_scratch;       // a decoded object key
  std::vector<FieldSpan> spans;  // the top-level fields of the last read
  step_json::NestStack nest;

  // The read in progress.
  const char* text = nullptr;  // the value's own bytes: strings decode from here
  const char* buf = nullptr;   // the bytes simdjson reads: text, or a copy (masked)
  const char* end = nullptr;   // buf + size
  bool masked = false;         // invalid UTF-8 was masked in buf: decode every string
  const char* why = "";

  RawString id, tool, state, owner, reason;
  Instant started = go_zero_time, ended = go_zero_time;
  bool has_ask = false;
  std::uint32_t close = 0;  // offset of the closing brace

  // Full decode only.
  Step* full = nullptr;
  std::vector<std::string> levels_backing;  // Go's slice: its capacity and stale elements
  std::size_t levels_len = 0;

  std::uint32_t off(const char* p) const noexcept { return static_cast<std::uint32_t>(p - buf); }

  StepShape fail(const char* reason_text) noexcept {
    why = reason_text;
    return StepShape::no_step;
  }
  bool refuse(const char* reason_text) noexcept {
    why = reason_text;
    return false;
  }

  // The decoded text of a string body at [b, e) of buf.
  std::string_view text_of(std::uint32_t b, std::uint32_t e, bool decode, std::string& into) {
    if (!decode) return std::string_view(text + b, e - b);
    std::size_t start = into.size();
    step_json::unquote_append(text + b, text + e, into);
    return std::string_view(into.data() + start, into.size() - start);
  }
  std::string_view view_of(const RawString& s) {
    if (!s.set) return {};
    return text_of(s.begin, s.end, s.decode, scratch);
  }
  std::string string_of(const char* quote, const StringScan& s) {
    std::string out;
    auto b = off(quote) + 1, e = off(s.end) - 1;
    if (!(s.escaped || s.non_ascii || masked)) return std::string(text + b, e - b);
    step_json::unquote_append(text + b, text + e, out);
    return out;
  }
  // The decoded key whose opening quote is at q.
  bool key_at(const char* q, std::string_view& key) {
    StringScan s;
    if (q < buf || q >= end || *q != '"' || !step_json::scan_string(q, end, s)) return false;
    key_scratch.clear();
    key = text_of(off(q) + 1, off(s.end) - 1, s.escaped || s.non_ascii || masked, key_scratch);
    return true;
  }

  static Field top_field(std::string_view k) noexcept {
    switch (k.size()) {  // the exact names first: nearly every key is one
      case 2:
        if (k == "id") return Field::id;
        break;
      case 3:
        if (k == "ask") return Field::ask;
        break;
      case 4:
        if (k == "tool") return Field::tool;
        break;
      case 5:
        if (k == "state") return Field::state;
        if (k == "owner") return Field::owner;
        if (k == "ended") return Field::ended;
        break;
      case 6:
        if (k == "reason") return Field::reason;
        if (k == "result") return Field::result;
        break;
      case 7:
        if (k == "started") return Field::started;
        break;
      default:
        break;
    }
    static constexpr std::pair<std::string_view, Field> names[] = {
        {"id", Field::id},         {"tool", Field::tool},       {"state", Field::state},
        {"owner", Field::owner},   {"started", Field::started}, {"ended", Field::ended},
        {"reason", Field::reason}, {"result", Field::result},   {"ask", Field::ask}};
    for (const auto& [name, f] : names)
      if (step_json::name_matches(k, name)) return f;
    return Field::unknown;
  }
  static AskField ask_field(std::string_view k) noexcept {
    if (step_json::name_matches(k, "kind")) return AskField::kind;
    if (step_json::name_matches(k, "check")) return AskField::check;
    if (step_json::name_matches(k, "build")) return AskField::build;
    if (step_json::name_matches(k, "compose")) return AskField::compose;
    return AskField::unknown;
  }
  static PartField part_field(std::string_view k) noexcept {
    if (step_json::name_matches(k, "fetch")) return PartField::fetch;
    if (step_json::name_matches(k, "levels")) return PartField::levels;
    if (step_json::name_matches(k, "run")) return PartField::run;
    if (step_json::name_matches(k, "module")) return PartField::module;
    if (step_json::name_matches(k, "fp")) return PartField::fp;
    return PartField::unknown;
  }

  // A string field (Go: string): a string sets it, null leaves it as it was.
  const char* string_field(const char* p, RawString& into) noexcept {
    if (*p == '"') {
      StringScan s;
      if (!step_json::scan_string(p, end, s)) return nullptr;
      into = RawString{off(p) + 1, off(s.end) - 1, s.escaped || s.non_ascii || masked, true};
      return s.end;
    }
    if (*p == 'n') return step_json::scan_literal(p, end, "null");
    return nullptr;
  }
  // The same, decoded into a std::string (full decode), or only checked (out null).
  const char* string_field(const char* p, std::string* out) {
    if (*p == '"') {
      StringScan s;
      if (!step_json::scan_string(p, end, s)) return nullptr;
      if (out != nullptr) *out = string_of(p, s);
      return s.end;
    }
    if (*p == 'n') return step_json::scan_literal(p, end, "null");
    return nullptr;
  }
  // A time.Time field: a string Go's RFC 3339 reader takes (on the raw bytes, escapes
  // not undone), or null, which leaves it.
  const char* time_field(const char* p, Instant& into) noexcept {
    if (*p == '"') {
      StringScan s;
      if (!step_json::scan_string(p, end, s)) return nullptr;
      auto t = parse_rfc3339(std::string_view(text + off(p) + 1, static_cast<std::size_t>(s.end - p - 2)));
      if (!t) return nullptr;
      into = *t;
      return s.end;
    }
    if (*p == 'n') return step_json::scan_literal(p, end, "null");
    return nullptr;
  }

  StepShape parse(std::string_view value, bool padded, Step* full_out);
  StepShape fill(StepShape shape, StepView& out) {
    out = StepView{};
    if (shape != StepShape::step) return shape;
    out.id = view_of(id);
    out.tool = view_of(tool);
    out.state = view_of(state);
    out.owner = view_of(owner);
    out.started = started;
    out.has_ask = has_ask;
    return shape;
  }
  bool walk_ask(od::value& v);
  bool walk_part(od::value& v, AskField which);
  bool walk_fetch(od::value& v, std::optional<StepFetch>* out);
  bool walk_levels(od::value& v, std::optional<std::vector<std::string>>* out);
};

StepShape StepCodec::Impl::parse(std::string_view value, bool padded, Step* full_out) {
  why = "";
  full = full_out;
  id = tool = state = owner = reason = RawString{};
  started = ended = go_zero_time;
  has_ask = false;
  masked = false;
  spans.clear();
  scratch.clear();
  levels_backing.clear();
  levels_len = 0;
  text = value.data();

  if (value.empty()) return fail("the value is empty");
  if (value.size() > 0xFFFFFFF0u) return fail("the value is larger than 4 GiB");
  const char* vb = value.data();
  const char* ve = vb + value.size();
  const char* first = step_json::skip_ws(vb, ve);
  if (first == ve) return fail("the value holds only white space");
  if (*first != '{') {
    // Go decodes the JSON null into a struct as nothing at all; every other value
    // that is no object is an error (a byte-order mark included).
    const char* q = *first == 'n' ? step_json::scan_literal(first, ve, "null") : nullptr;
    if (q != nullptr && step_json::skip_ws(q, ve) == ve) return StepShape::null_value;
    return fail("the value is no JSON object");
  }
  // Decoded strings grow by at most 3 bytes per byte read: reserve once, so the
  // views handed out stay where they are.
  if (scratch.capacity() < 3 * value.size() + 16) scratch.reserve(3 * value.size() + 16);

  auto copy_to_pad = [&] {
    if (pad_capacity < value.size() + simdjson::SIMDJSON_PADDING) {
      std::size_t cap = std::max<std::size_t>(value.size() + simdjson::SIMDJSON_PADDING, 2 * pad_capacity);
      pad.reset(new char[cap]);
      pad_capacity = cap;
    }
    std::memcpy(pad.get(), value.data(), value.size());
    std::memset(pad.get() + value.size(), ' ', simdjson::SIMDJSON_PADDING);
    buf = pad.get();
  };
  if (padded) {
    buf = value.data();
  } else {
    copy_to_pad();
  }
  end = buf + value.size();

  // Grow the parser geometrically: simdjson would reallocate to each new largest value.
  if (parser.capacity() < value.size()) {
    std::size_t cap = std::max<std::size_t>({value.size(), 2 * parser.capacity(), 4096});
    if (parser.allocate(cap) != simdjson::SUCCESS) return fail("out of memory");
  }
  auto doc_result = parser.iterate(buf, value.size(), value.size() + simdjson::SIMDJSON_PADDING);
  if (doc_result.error() == simdjson::UTF8_ERROR) {
    // Go takes invalid UTF-8 inside strings (as U+FFFD): mask it and read again.
    if (buf == value.data()) copy_to_pad();
    end = buf + value.size();
    step_json::mask_invalid_utf8(pad.get(), value.size());
    masked = true;
    doc_result = parser.iterate(buf, value.size(), value.size() + simdjson::SIMDJSON_PADDING);
  }
  if (doc_result.error() != simdjson::SUCCESS) return fail("the value is not valid JSON");
  od::document doc = std::move(doc_result).value_unsafe();
  od::object obj;
  if (doc.get_object().get(obj) != simdjson::SUCCESS) return fail("the value is not valid JSON");

  const char* open = step_json::skip_ws(buf, end);
  const char* prev = open + 1;
  bool first_field = true;
  for (auto field_result : obj) {
    od::field f;
    if (std::move(field_result).get(f) != simdjson::SUCCESS) return fail("the value is not valid JSON");
    const char* kq = reinterpret_cast<const char*>(f.key().raw()) - 1;
    // The separators are checked here too: the spans must be exact for the rewrite.
    const char* s = step_json::skip_ws(prev, end);
    if (!first_field) {
      if (s >= end || *s != ',') return fail("the value is not valid JSON");
      s = step_json::skip_ws(s + 1, end);
    }
    StringScan ks;
    if (s != kq || *kq != '"' || !step_json::scan_string(kq, end, ks)) return fail("the value is not valid JSON");
    const char* vp = step_json::skip_ws(ks.end, end);
    if (vp >= end || *vp != ':') return fail("the value is not valid JSON");
    vp = step_json::skip_ws(vp + 1, end);
    if (vp >= end) return fail("the value is not valid JSON");
    od::value& v = f.value();
    if (v.raw_json_token().data() != vp) return fail("the value is not valid JSON");

    key_scratch.clear();
    std::string_view key = text_of(off(kq) + 1, off(ks.end) - 1, ks.escaped || ks.non_ascii || masked, key_scratch);
    Field field = top_field(key);
    const char* value_end = nullptr;
    switch (field) {
      case Field::id:
        value_end = full ? string_field(vp, &full->id) : string_field(vp, id);
        if (!value_end) return fail("its id is no string");
        break;
      case Field::tool:
        value_end = full ? string_field(vp, &full->tool) : string_field(vp, tool);
        if (!value_end) return fail("its tool is no string");
        break;
      case Field::state:
        value_end = full ? string_field(vp, &full->state) : string_field(vp, state);
        if (!value_end) return fail("its state is no string");
        break;
      case Field::owner:
        value_end = full ? string_field(vp, &full->owner) : string_field(vp, owner);
        if (!value_end) return fail("its owner is no string");
        break;
      case Field::reason:
        value_end = full ? string_field(vp, &full->reason) : string_field(vp, reason);
        if (!value_end) return fail("its reason is no string");
        break;
      case Field::started:
        value_end = time_field(vp, full ? full->started : started);
        if (!value_end) return fail("its started is no RFC 3339 time");
        break;
      case Field::ended:
        value_end = time_field(vp, full ? full->ended : ended);
        if (!value_end) return fail("its ended is no RFC 3339 time");
        break;
      case Field::ask:
        if (*vp == 'n') {
          value_end = step_json::scan_literal(vp, end, "null");
          has_ask = false;
          if (full) full->ask.reset();
          levels_backing.clear();
          levels_len = 0;
          if (!value_end) return fail("the value is not valid JSON");
          break;
        }
        if (*vp != '{') return fail("its ask is no object");
        value_end = step_json::check_value(vp, end, 1, false, nest);
        if (!value_end) return fail("the value is not valid JSON");
        if (!walk_ask(v)) {
          if (*why == '\0') why = "its ask is not of the ask's shape";
          return StepShape::no_step;
        }
        has_ask = true;
        break;
      case Field::result:
      case Field::unknown:
        value_end = step_json::check_value(vp, end, 1, false, nest);
        if (!value_end) return fail("the value is not valid JSON");
        if (field == Field::result && full)
          full->result = std::string(text + off(vp), static_cast<std::size_t>(value_end - vp));
        break;
    }
    spans.push_back(FieldSpan{off(kq), off(vp), off(value_end), field});
    prev = value_end;
    first_field = false;
  }
  const char* s = step_json::skip_ws(prev, end);
  if (s >= end || *s != '}') return fail("the value is not valid JSON");
  close = off(s);
  if (step_json::skip_ws(s + 1, end) != end) return fail("bytes follow the JSON value");
  return StepShape::step;
}

bool StepCodec::Impl::walk_ask(od::value& v) {
  od::object obj;
  if (v.get_object().get(obj) != simdjson::SUCCESS) return false;
  StepAsk* ask = nullptr;
  if (full) {
    if (!full->ask) full->ask.emplace();  // a repeated ask decodes into the first
    ask = &*full->ask;
  }
  for (auto field_result : obj) {
    od::field f;
    if (std::move(field_result).get(f) != simdjson::SUCCESS) return false;
    std::string_view key;
    if (!key_at(reinterpret_cast<const char*>(f.key().raw()) - 1, key)) return false;
    AskField which = ask_field(key);
    od::value& fv = f.value();
    const char* p = fv.raw_json_token().data();
    switch (which) {
      case AskField::kind:
        if (!string_field(p, ask ? &ask->kind : nullptr)) return refuse("its ask's kind is no string");
        break;
      case AskField::check:
      case AskField::build:
      case AskField::compose:
        if (*p == 'n') {
          if (ask) {
            if (which == AskField::check) ask->check.reset();
            if (which == AskField::build) ask->build.reset();
            if (which == AskField::compose) ask->compose.reset();
          }
          if (which == AskField::check) {
            levels_backing.clear();
            levels_len = 0;
          }
          break;
        }
        if (*p != '{') return refuse("its ask's check, build or compose is no object");
        if (ask) {
          if (which == AskField::check && !ask->check) {
            ask->check.emplace();
            levels_backing.clear();
            levels_len = 0;
          }
          if (which == AskField::build && !ask->build) ask->build.emplace();
          if (which == AskField::compose && !ask->compose) ask->compose.emplace();
        }
        if (!walk_part(fv, which)) return false;
        break;
      case AskField::unknown:
        break;  // checked with the whole ask
    }
  }
  return true;
}

bool StepCodec::Impl::walk_part(od::value& v, AskField which) {
  od::object obj;
  if (v.get_object().get(obj) != simdjson::SUCCESS) return false;
  StepCheck* check = full && which == AskField::check ? &*full->ask->check : nullptr;
  StepBuild* build = full && which == AskField::build ? &*full->ask->build : nullptr;
  StepCompose* compose = full && which == AskField::compose ? &*full->ask->compose : nullptr;
  for (auto field_result : obj) {
    od::field f;
    if (std::move(field_result).get(f) != simdjson::SUCCESS) return false;
    std::string_view key;
    if (!key_at(reinterpret_cast<const char*>(f.key().raw()) - 1, key)) return false;
    PartField pf = part_field(key);
    od::value& fv = f.value();
    const char* p = fv.raw_json_token().data();
    // Only the fields of this part's struct count; the others are unknown to it.
    if (which == AskField::check && (pf == PartField::module || pf == PartField::fp)) pf = PartField::unknown;
    if (which == AskField::build && (pf == PartField::levels || pf == PartField::run)) pf = PartField::unknown;
    if (which == AskField::compose && pf != PartField::fetch) pf = PartField::unknown;
    switch (pf) {
      case PartField::fetch: {
        std::optional<StepFetch>* out = check     ? &check->fetch
                                        : build   ? &build->fetch
                                        : compose ? &compose->fetch
                                                  : nullptr;
        if (!walk_fetch(fv, out)) return refuse("a fetch of its ask is no object of JSON values");
        break;
      }
      case PartField::levels:
        if (!walk_levels(fv, check ? &check->levels : nullptr)) return refuse("its ask's levels are no strings");
        break;
      case PartField::run:
        if (!string_field(p, check ? &check->run : nullptr)) return refuse("its ask's run is no string");
        break;
      case PartField::module:
        if (!string_field(p, build ? &build->module : nullptr)) return refuse("its ask's module is no string");
        break;
      case PartField::fp:
        if (!string_field(p, build ? &build->fp : nullptr)) return refuse("its ask's fp is no string");
        break;
      case PartField::unknown:
        break;
    }
  }
  return true;
}

// map[string]any: an object (its entries added to the map already there, as Go
// decodes into a map it made) or null (no map). Its numbers must fit a float64.
bool StepCodec::Impl::walk_fetch(od::value& v, std::optional<StepFetch>* out) {
  const char* p = v.raw_json_token().data();
  if (*p == 'n') {
    if (out) out->reset();
    return true;
  }
  if (*p != '{') return false;
  od::object obj;
  if (v.get_object().get(obj) != simdjson::SUCCESS) return false;
  if (out && !*out) out->emplace();
  for (auto field_result : obj) {
    od::field f;
    if (std::move(field_result).get(f) != simdjson::SUCCESS) return false;
    std::string_view key;
    if (!key_at(reinterpret_cast<const char*>(f.key().raw()) - 1, key)) return false;
    const char* vp = f.value().raw_json_token().data();
    // The fetch object sits 4 deep: step, ask, check/build/compose, fetch.
    const char* ve = step_json::check_value(vp, end, 4, true, nest);
    if (!ve) return false;
    if (out) {
      std::string raw(text + off(vp), static_cast<std::size_t>(ve - vp));
      bool found = false;
      for (auto& [k, val] : **out) {
        if (k == key) {
          val = std::move(raw);
          found = true;
          break;
        }
      }
      if (!found) (*out)->emplace_back(std::string(key), std::move(raw));
    }
  }
  return true;
}

// []string: an array of strings or nulls, or null. Decoding follows Go's reuse of a
// slice it holds: elements are decoded into in place (a null leaves one as it was),
// the length set to the count, the capacity grown by half (at least 4).
bool StepCodec::Impl::walk_levels(od::value& v, std::optional<std::vector<std::string>>* out) {
  const char* p = v.raw_json_token().data();
  if (*p == 'n') {
    if (out) out->reset();
    levels_backing.clear();
    levels_len = 0;
    return true;
  }
  if (*p != '[') return false;
  od::array arr;
  if (v.get_array().get(arr) != simdjson::SUCCESS) return false;
  std::size_t i = 0;
  for (auto element_result : arr) {
    od::value ev;
    if (std::move(element_result).get(ev) != simdjson::SUCCESS) return false;
    const char* ep = ev.raw_json_token().data();
    if (out) {
      if (i >= levels_backing.size()) {
        std::size_t cap = levels_backing.size() + levels_backing.size() / 2;
        if (cap < 4) cap = 4;
        std::vector<std::string> grown(cap);
        for (std::size_t k = 0; k < levels_len; ++k) grown[k] = std::move(levels_backing[k]);
        levels_backing = std::move(grown);
      }
      if (i >= levels_len) levels_len = i + 1;
      if (!string_field(ep, &levels_backing[i])) return false;
    } else if (!string_field(ep, static_cast<std::string*>(nullptr))) {
      return false;
    }
    ++i;
  }
  if (out) {
    if (i < levels_len) levels_len = i;
    if (i == 0) levels_backing.clear();
    out->emplace(levels_backing.begin(), levels_backing.begin() + static_cast<std::ptrdiff_t>(levels_len));
  }
  return true;
}

StepCodec::StepCodec() : impl_(std::make_unique<Impl>()) {}
StepCodec::~StepCodec() = default;
StepCodec::StepCodec(StepCodec&&) noexcept = default;
StepCodec& StepCodec::operator=(StepCodec&&) noexcept = default;

StepShape StepCodec::read(std::string_view value, StepView& out) {
  return impl_->fill(impl_->parse(value, false, nullptr), out);
}

StepShape StepCodec::read_padded(std::string_view value, StepView& out) {
  return impl_->fill(impl_->parse(value, true, nullptr), out);
}

std::optional<Step> StepCodec::decode(std::string_view value) {
  Step step;
  StepShape shape = impl_->parse(value, false, &step);
  impl_->full = nullptr;
  if (shape == StepShape::no_step) return std::nullopt;
  if (shape == StepShape::null_value) return Step{};
  return step;
}

std::string_view StepCodec::no_step_why() const noexcept {
  return impl_->why;
}

Result<std::string> StepCodec::end(std::string_view value, std::string_view why, Instant ended_at) {
  StepShape shape = impl_->parse(value, false, nullptr);
  if (shape != StepShape::step)
    return Error{Errc::parse, fmt::format("the value is no step object: {}",
                                          shape == StepShape::null_value ? "it is null" : impl_->why)};
  const char* t = value.data();
  const auto& spans = impl_->spans;
  char when[rfc3339_max];
  std::size_t when_len = format_rfc3339_nano(ended_at, when);

  std::string out;
  out.reserve(value.size() + why.size() * 6 + 96);
  auto put_state = [&] { out.append("\"failed\""); };
  auto put_reason = [&] { step_json::append_json_string(out, why); };
  auto put_ended = [&] {
    out.push_back('"');
    out.append(when, when_len);
    out.push_back('"');
  };

  std::uint32_t head = spans.empty() ? impl_->close : spans.front().key_begin;
  out.append(t, head);
  bool kept = false, has_state = false, has_reason = false, has_ended = false;
  for (std::size_t i = 0; i < spans.size(); ++i) {
    const FieldSpan& f = spans[i];
    if (f.field == Field::result) continue;
    // A kept field keeps the separator that stood before it, whatever was removed.
    if (kept) out.append(t + spans[i - 1].value_end, f.key_begin - spans[i - 1].value_end);
    kept = true;
    switch (f.field) {
      case Field::state:
        out.append(t + f.key_begin, f.value_begin - f.key_begin);
        put_state();
        has_state = true;
        break;
      case Field::reason:
        out.append(t + f.key_begin, f.value_begin - f.key_begin);
        put_reason();
        has_reason = true;
        break;
      case Field::ended:
        out.append(t + f.key_begin, f.value_begin - f.key_begin);
        put_ended();
        has_ended = true;
        break;
      default:
        out.append(t + f.key_begin, f.value_end - f.key_begin);
        break;
    }
  }
  if (!has_state) {
    if (kept) out.push_back(',');
    out.append("\"state\":");
    put_state();
    kept = true;
  }
  if (!has_reason) {
    out.append(",\"reason\":");
    put_reason();
  }
  if (!has_ended) {
    out.append(",\"ended\":");
    put_ended();
  }
  std::uint32_t tail = spans.empty() ? impl_->close : spans.back().value_end;
  out.append(t + tail, value.size() - tail);
  return out;
}

// --- AskWhat -----------------------------------------------------------------------------

namespace {
std::string fetch_string(const std::optional<StepFetch>& fetch, std::string_view key) {
  if (!fetch) return {};
  for (const auto& [k, raw] : *fetch) {
    if (k != key) continue;
    if (raw.size() < 2 || raw.front() != '"') return {};  // m[k].(string) of a non-string
    std::string out;
    step_json::unquote_append(raw.data() + 1, raw.data() + raw.size() - 1, out);
    return out;
  }
  return {};
}
std::string cut12(std::string s) {
  if (s.size() > 12) s.resize(12);
  return s;
}
}  // namespace

std::string ask_what(const StepAsk& ask) {
  std::vector<std::string> parts;
  parts.push_back(ask.kind + " ask");
  if (ask.check) {
    const StepCheck& c = *ask.check;
    parts.push_back(fetch_string(c.fetch, "repository") + "@" + cut12(fetch_string(c.fetch, "commit")));
    std::string levels = "levels ";
    if (c.levels) {
      for (std::size_t i = 0; i < c.levels->size(); ++i) {
        if (i > 0) levels.push_back(',');
        levels.append((*c.levels)[i]);
      }
    }
    parts.push_back(std::move(levels));
    if (!c.run.empty()) parts.push_back("run " + c.run);
  } else if (ask.build) {
    const StepBuild& b = *ask.build;
    parts.push_back("module " + b.module);
    std::string repository = fetch_string(b.fetch, "repository");
    if (!repository.empty()) parts.push_back(repository + "@" + cut12(fetch_string(b.fetch, "commit")));
    if (!b.fp.empty()) parts.push_back("fp " + cut12(b.fp));
  } else if (ask.compose) {
    parts.push_back("compose");
    parts.push_back(fetch_string(ask.compose->fetch, "repository") + "@" +
                    cut12(fetch_string(ask.compose->fetch, "commit")));
  }
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out.append(", ");
    out.append(parts[i]);
  }
  return out;
}

// --- the rules ------------------------------------------------------------------------------

const char* step_action_name(StepAction action) noexcept {
  switch (action) {
    case StepAction::leave:
      return "leave";
    case StepAction::end:
      return "end";
    case StepAction::remove:
      return "delete";
  }
  return "leave";
}

const char* step_reason_name(StepReason reason) noexcept {
  switch (reason) {
    case StepReason::other_node:
      return "other-node";
    case StepReason::no_value:
      return "no-value";
    case StepReason::no_step:
      return "no-step";
    case StepReason::not_running:
      return "not-running";
    case StepReason::owned_by_self:
      return "owned-by-self";
    case StepReason::owner_not_self:
      return "owner-not-self";
    case StepReason::owner_gone:
      return "owner-gone";
    case StepReason::owner_alive:
      return "owner-alive";
    case StepReason::owner_unknown:
      return "owner-unknown";
    case StepReason::ask_within_bound:
      return "ask-within-bound";
    case StepReason::ask_past_bound:
      return "ask-past-bound";
    case StepReason::started_before:
      return "started-before";
    case StepReason::started_since:
      return "started-since";
  }
  return "unknown";
}

namespace {
HolderJudgement judge_owner(std::string_view owner, const StaleRules& rules) {
  return rules.judge ? rules.judge(owner) : judge_owner_token(owner);
}
}  // namespace

HolderState OwnerVerdicts::state_of(std::string_view owner, const StaleRules& rules, HolderJudgement* full) {
  if (full == nullptr && owner.size() < token_max) {
    for (int i = 0; i < used_; ++i)
      if (lengths_[i] == owner.size() && std::memcmp(tokens_[i], owner.data(), owner.size()) == 0) return states_[i];
  }
  HolderJudgement j = judge_owner(owner, rules);
  if (owner.size() < token_max) {
    int slot = used_ < slots ? used_++ : next_;
    if (used_ == slots && slot == next_) next_ = (next_ + 1) % slots;
    std::memcpy(tokens_[slot], owner.data(), owner.size());
    lengths_[slot] = static_cast<std::uint8_t>(owner.size());
    states_[slot] = j.state;
  }
  HolderState state = j.state;
  if (full != nullptr) *full = std::move(j);
  return state;
}

StepVerdict judge_running_step(std::string_view key, const StepView& step, const StaleRules& rules,
                               OwnerVerdicts* cache, HolderJudgement* judgement) {
  if (step.owner == rules.self) return {StepAction::leave, StepReason::owned_by_self, {}};
  bool ask = is_ask_step(key, step.tool);
  if (!step.owner.empty()) {
    // A pulled ask is deleted, never ended: its stream redelivers it, and an end
    // written here would fail a check the redelivery still runs.
    StepAction act = ask ? StepAction::remove : StepAction::end;
    if (rules.rule == OwnerRule::not_self) return {act, StepReason::owner_not_self, {}};
    HolderState state;
    if (cache != nullptr) {
      state = cache->state_of(step.owner, rules, judgement);
    } else {
      HolderJudgement j = judge_owner(step.owner, rules);
      state = j.state;
      if (judgement != nullptr) *judgement = std::move(j);
    }
    switch (state) {
      case HolderState::dead:
      case HolderState::recycled:
      case HolderState::other_boot:
        return {act, StepReason::owner_gone, {}};
      case HolderState::alive:
        return {StepAction::leave, StepReason::owner_alive, {}};
      case HolderState::unknown:
        break;
    }
    return {StepAction::leave, StepReason::owner_unknown, {}};
  }
  if (ask) {
    Instant bound_at = step.started.plus_ns(rules.bound_ns);
    if (!(bound_at < rules.now)) return {StepAction::leave, StepReason::ask_within_bound, bound_at};
    return {StepAction::end, StepReason::ask_past_bound, bound_at};
  }
  if (step.started < rules.before) return {StepAction::end, StepReason::started_before, {}};
  return {StepAction::leave, StepReason::started_since, {}};
}

StepVerdict plan_step(std::string_view key, std::string_view value, const StaleRules& rules, StepCodec& codec,
                      StepView* view, OwnerVerdicts* cache, HolderJudgement* judgement, bool padded) {
  StepView local;
  StepView& v = view != nullptr ? *view : local;
  v = StepView{};
  StepKeyParts parts;
  if (!split_step_key(key, parts) || parts.node != rules.node) return {StepAction::leave, StepReason::other_node, {}};
  if (value.empty()) return {StepAction::leave, StepReason::no_value, {}};
  StepShape shape = padded ? codec.read_padded(value, v) : codec.read(value, v);
  if (shape == StepShape::no_step) return {StepAction::leave, StepReason::no_step, {}};
  if (shape == StepShape::null_value || v.state != step_running)
    return {StepAction::leave, StepReason::not_running, {}};
  return judge_running_step(key, v, rules, cache, judgement);
}

namespace {
constexpr std::string_view past_bound_prefix = "past the step bound: its asker stopped waiting at ";
}

std::size_t step_why(const StepVerdict& verdict, char* out) noexcept {
  switch (verdict.reason) {
    case StepReason::owner_not_self:
    case StepReason::owner_gone:
    case StepReason::started_before:
      std::memcpy(out, restart_reason.data(), restart_reason.size());
      return restart_reason.size();
    case StepReason::ask_past_bound: {
      std::memcpy(out, past_bound_prefix.data(), past_bound_prefix.size());
      return past_bound_prefix.size() + format_rfc3339(verdict.bound_at, out + past_bound_prefix.size());
    }
    default:
      return 0;
  }
}

std::string step_why(const StepVerdict& verdict) {
  char buf[step_why_max];
  return std::string(buf, step_why(verdict, buf));
}

std::string step_said(const StepVerdict& verdict, std::string_view owner, std::string_view self,
                      const HolderJudgement* judgement) {
  switch (verdict.reason) {
    case StepReason::owner_not_self:
      return fmt::format("its owner {} is not this process {}", owner, self);
    case StepReason::owner_gone:
      if (judgement != nullptr && !judgement->why.empty())
        return fmt::format("its owner {} is provably gone: {}", owner, judgement->why);
      return fmt::format("its owner {} is provably gone", owner);
    case StepReason::ask_past_bound:
      return "it names no owner (an older build wrote it)";
    case StepReason::started_before:
      return "it names no owner (an older build wrote it) and started before this process";
    default:
      return {};
  }
}

}  // namespace leasejudge
