// Steps: keys, the codec (Go's decoder over simdjson's stage 1 tokens) and the staleness rules.
#include "leasejudge/step.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <iterator>
#include <limits>

#include "step_codec.hpp"
#include "step_json.hpp"
#include "step_judge.hpp"

namespace leasejudge {

namespace {

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

// Which of names (ASCII lowercase) a decoded object key names, as encoding/json matches
// names: exactly, else under case folding; -1 for none. Folded, an ASCII key is as long
// as the name it names, so only a key with a non-ASCII rune (the Kelvin sign, the long
// s) is folded against names of other lengths.
inline bool same_bytes(std::string_view a, std::string_view b) noexcept {
  if (a.size() != b.size() || a.empty() || a[0] != b[0]) return false;
  for (std::size_t i = 1; i < a.size(); ++i)  // names are a few bytes: no call
    if (a[i] != b[i]) return false;
  return true;
}
template <std::size_t N>
int exact_name(std::string_view key, const std::string_view (&names)[N]) noexcept {
  for (std::size_t i = 0; i < N; ++i)
    if (same_bytes(key, names[i])) return static_cast<int>(i);
  return -1;
}
// The same for the step's own fields, the names nearly every key is: by length, then the
// bytes (constant-length compares the compiler inlines).
inline int exact_step_field(std::string_view k) noexcept {
  switch (k.size()) {
    case 2:
      return std::memcmp(k.data(), "id", 2) == 0 ? 0 : -1;
    case 3:
      return std::memcmp(k.data(), "ask", 3) == 0 ? 8 : -1;
    case 4:
      return std::memcmp(k.data(), "tool", 4) == 0 ? 1 : -1;
    case 5:
      if (std::memcmp(k.data(), "state", 5) == 0) return 2;
      if (std::memcmp(k.data(), "owner", 5) == 0) return 3;
      if (std::memcmp(k.data(), "ended", 5) == 0) return 5;
      return -1;
    case 6:
      if (std::memcmp(k.data(), "reason", 6) == 0) return 6;
      if (std::memcmp(k.data(), "result", 6) == 0) return 7;
      return -1;
    case 7:
      return std::memcmp(k.data(), "started", 7) == 0 ? 4 : -1;
    default:
      return -1;
  }
}
// The same for an ask's fields ("kind", "check", "build", "compose") and its
// parts' fields ("fetch", "levels", "run", "module", "fp"), in the order of ask_names and part_names.
// k's bytes are name's (k as long as name: the switches below test lengths first).
template <std::size_t N>
constexpr bool bytes_are(std::string_view k, const char (&name)[N]) noexcept {
  return std::char_traits<char>::compare(k.data(), name, N - 1) == 0;
}
constexpr int exact_ask_field(std::string_view k) noexcept {
  switch (k.size()) {
    case 4:
      return bytes_are(k, "kind") ? 0 : -1;
    case 5:
      return bytes_are(k, "check") ? 1 : bytes_are(k, "build") ? 2 : -1;
    case 7:
      return bytes_are(k, "compose") ? 3 : -1;
    default:
      return -1;
  }
}
constexpr int exact_part_field(std::string_view k) noexcept {
  switch (k.size()) {
    case 2:
      return bytes_are(k, "fp") ? 4 : -1;
    case 3:
      return bytes_are(k, "run") ? 2 : -1;
    case 5:
      return bytes_are(k, "fetch") ? 0 : -1;
    case 6:
      return bytes_are(k, "levels") ? 1 : bytes_are(k, "module") ? 3 : -1;
    default:
      return -1;
  }
}

// The names a key matches under case folding (exact matches tried already). A name's
// first letter must fold from the key's first rune: an ASCII letter, or one of the two
// non-ASCII runes that fold to ASCII (the Kelvin sign to k, the long s to s); and the key's
// length must be one the name's letters can fold from: one byte each, or for a k the
// Kelvin sign's three, for an s the long s's two. Tables of the names by first letter and
// by length pick the few to fold against.
template <std::size_t N>
struct NamesByLetter {
  static constexpr std::size_t longest = 16;  // no name folds from a key this long
  std::uint32_t mask[128] = {};               // bit i: names[i] begins with this letter
  std::uint32_t length[longest] = {};         // bit i: names[i] may fold from a key this long
  constexpr explicit NamesByLetter(const std::string_view (&names)[N]) {
    for (std::size_t i = 0; i < N; ++i) {
      mask[static_cast<unsigned char>(names[i][0]) & 0x7F] |= 1u << i;
      std::size_t most = names[i].size();
      for (char c : names[i]) most += c == 'k' ? 2 : c == 's' ? 1 : 0;
      if (most >= longest) throw "a name folds from keys longer than the table holds";  // a compile error
      for (std::size_t len = names[i].size(); len <= most && len < longest; ++len) length[len] |= 1u << i;
    }
  }
};
template <std::size_t N>
int folded_name(std::string_view key, const std::string_view (&names)[N], const NamesByLetter<N>& by_letter) noexcept {
  static_assert(N <= 32);
  if (key.empty() || key.size() >= NamesByLetter<N>::longest) return -1;
  auto c0 = static_cast<unsigned char>(key[0]);
  std::uint32_t candidates =
      (c0 < 0x80 ? by_letter.mask[c0 >= 'A' && c0 <= 'Z' ? c0 + 32 : c0]
                 : by_letter.mask[static_cast<unsigned char>('k')] | by_letter.mask[static_cast<unsigned char>('s')]) &
      by_letter.length[key.size()];
  for (; candidates != 0; candidates &= candidates - 1) {
    int i = __builtin_ctz(candidates);
    if (step_json::name_matches(key, names[i])) return i;
  }
  return -1;
}
template <std::size_t N>
int match_name(std::string_view key, const std::string_view (&names)[N], const NamesByLetter<N>& by_letter) noexcept {
  if (int i = exact_name(key, names); i >= 0) return i;
  return folded_name(key, names, by_letter);
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
  // libuuid's uuid_parse_range, which DESIGN.md names, at fixed places: 36 bytes,
  // hyphens at 8, 13, 18 and 23, isxdigit elsewhere (then it converts with strtoul,
  // which cannot fail on hex digits). tests/step_test.cpp compares the two on every byte
  // at every place.
  if (text.size() != 36) return false;
  for (std::size_t i = 0; i < 36; ++i) {
    auto c = static_cast<unsigned char>(text[i]);
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      if (c != '-') return false;
    } else if (!step_json::is_hex(c)) {
      return false;
    }
  }
  return true;
}

Result<std::int64_t> parse_step_time_ns(std::string_view text) {
  auto at = parse_rfc3339(text);
  if (!at) return Error{Errc::parse, fmt::format("{} is no RFC 3339 time", step_json::go_quote(text))};
  constexpr std::int64_t max_sec = std::numeric_limits<std::int64_t>::max() / 1000000000 - 1;
  if (at->sec > max_sec || at->sec < -max_sec)
    return Error{Errc::invalid_argument, fmt::format("{} is beyond the years 1677 to 2262", step_json::go_quote(text))};
  return at->sec * 1000000000 + at->nsec;
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

namespace {
constexpr const char* not_json = "the value is not valid JSON";
}

struct StepCodec::Impl {
  step_json::Tokens tokens;
  std::string scratch;           // decoded strings of the last read
  std::string key_scratch;       // a decoded object key
  std::vector<FieldSpan> spans;  // the top-level fields of the last read, for end()
  bool want_spans = false;
  bool keep_spans = false;    // every read keeps its spans (StepCodecAccess::keep_spans)
  std::string_view spans_of;  // the step whose spans are kept, while they are complete
  step_json::NestStack nest;

  // The read in progress: the text strings decode from, and its tokens.
  step_json::TokenText t;
  int outer = 0;         // containers around the value (a line carrying it: 1)
  bool masked = false;   // invalid UTF-8 was masked for stage 1: decode every string
  bool invalid = false;  // the value broke Go's grammar (not only its types)
  // The first field of a wrong type. Go checks the whole value before it decodes a
  // field: once one is refused, the rest is only checked, and broken JSON anywhere is
  // told before any type.
  const char* refused = nullptr;
  const char* why = "";

  RawString id, tool, state, owner, reason;
  Instant started = go_zero_time;
  bool has_ask = false;
  std::uint32_t close = 0;  // offset of the closing brace
  std::uint32_t after = 0;  // the token after the value

  // Full decode only.
  Step* full = nullptr;
  std::vector<std::string> levels_backing;  // Go's slice: its capacity and stale elements
  std::size_t levels_len = 0;

  void reset(Step* full_out) {
    why = "";
    full = full_out;
    id = tool = state = owner = reason = RawString{};
    started = go_zero_time;
    has_ask = false;
    masked = invalid = false;
    refused = nullptr;
    after = step_json::no_token;
    spans.clear();
    spans_of = {};
    scratch.clear();
    levels_backing.clear();
    levels_len = 0;
  }
  StepShape fail(const char* reason_text) noexcept {
    why = reason_text;
    return StepShape::no_step;
  }
  // Broken JSON inside the value: no_token.
  [[gnu::cold, gnu::noinline]] std::uint32_t broken() noexcept {
    invalid = true;
    return step_json::no_token;
  }
  // A value of the wrong type at token v: the first is told; the value is checked.
  [[gnu::cold, gnu::noinline]] std::uint32_t wrong(std::uint32_t v, int depth, const char* type_why) noexcept {
    if (refused == nullptr) refused = type_why;
    return check(v, depth);
  }

  // The decoded text of a string body at [b, e) of the text.
  std::string_view text_of(std::uint32_t b, std::uint32_t e, bool decode, std::string& into) {
    if (!decode) return std::string_view(t.text + b, e - b);
    std::size_t start = into.size();
    step_json::unquote_append(t.text + b, t.text + e, into);
    return std::string_view(into.data() + start, into.size() - start);
  }
  std::string_view view_of(const RawString& s) {
    if (!s.set) return {};
    return text_of(s.begin, s.end, s.decode, scratch);
  }
  [[gnu::cold, gnu::noinline]] std::string string_of(const step_json::StringToken& s) {
    if (!(s.escaped || masked)) return std::string(t.text + s.begin, s.end - s.begin);
    std::string out;
    step_json::unquote_append(t.text + s.begin, t.text + s.end, out);
    return out;
  }
  // The decoded key at token i and its ':' after it; false when either is not there.
  bool key_at(std::uint32_t i, std::string_view& key) {
    step_json::StringToken s;
    if (i + 1 >= t.n || !step_json::string_token(t, i, s) || t.at(i + 1) != ':') return false;
    key_scratch.clear();
    key = text_of(s.begin, s.end, s.escaped || masked, key_scratch);
    return true;
  }
  // Where the value at token v, whose next token is `next`, ends in the text.
  std::uint32_t value_end(std::uint32_t v, std::uint32_t next) const noexcept {
    char c = t.at(v);
    return c == '{' || c == '[' ? t.tok[next - 1] + 1 : t.end_of(v);
  }
  std::uint32_t check(std::uint32_t v, int depth, bool float_check = false, bool* float_bad = nullptr) noexcept {
    if (v < t.n && t.at(v) == '"') return v + 1;  // a string: valid once indexed
    std::uint32_t next = step_json::check_tokens(t, v, outer + depth, float_check, nest, float_bad);
    if (next == step_json::no_token) invalid = true;
    return next;
  }

  // Which of names the key at token k names (-1: none); false when token k is no key
  // with its ':'. A key that is a name byte for byte holds no escape: it is not decoded.
  template <std::size_t N>
  bool key_named(std::uint32_t k, const std::string_view (&names)[N], const NamesByLetter<N>& letters, int& which) {
    if (k + 1 >= t.n || t.at(k) != '"' || t.at(k + 1) != ':') return false;
    std::uint32_t b = t.tok[k] + 1, e = t.end_of(k) - 1;
    std::string_view key(t.text + b, e - b);
    if (!masked) {
      if constexpr (N == std::size(top_names))
        which = exact_step_field(key);
      else if constexpr (N == std::size(ask_names))
        which = exact_ask_field(key);
      else
        which = exact_part_field(key);
      if (which >= 0) return true;
    }
    if (masked || t.escape_within(b, e)) {
      key_scratch.clear();
      which = match_name(text_of(b, e, true, key_scratch), names, letters);
    } else {
      which = folded_name(key, names, letters);  // its bytes are none of the names
    }
    return true;
  }
  static constexpr std::string_view top_names[] = {"id",    "tool",   "state",  "owner", "started",
                                                   "ended", "reason", "result", "ask"};
  static constexpr Field top_fields[] = {Field::id,    Field::tool,   Field::state,  Field::owner, Field::started,
                                         Field::ended, Field::reason, Field::result, Field::ask};
  static constexpr std::string_view ask_names[] = {"kind", "check", "build", "compose"};
  static constexpr AskField ask_fields[] = {AskField::kind, AskField::check, AskField::build, AskField::compose};
  static constexpr std::string_view part_names[] = {"fetch", "levels", "run", "module", "fp"};
  static constexpr PartField part_fields[] = {PartField::fetch, PartField::levels, PartField::run, PartField::module,
                                              PartField::fp};
  // key_named tells the three sets of names apart by their sizes; each set's exact
  // matcher answers each of its names with its place.
  static_assert(std::size(top_names) != std::size(ask_names) && std::size(ask_names) != std::size(part_names) &&
                std::size(top_names) != std::size(part_names));
  static_assert([] {
    for (std::size_t i = 0; i < std::size(ask_names); ++i)
      if (exact_ask_field(ask_names[i]) != static_cast<int>(i)) return false;
    for (std::size_t i = 0; i < std::size(part_names); ++i)
      if (exact_part_field(part_names[i]) != static_cast<int>(i)) return false;
    return exact_ask_field("Kind") < 0 && exact_part_field("fetch ") < 0 && exact_part_field("") < 0;
  }());
  static constexpr NamesByLetter<std::size(top_names)> top_letters{top_names};
  static constexpr NamesByLetter<std::size(ask_names)> ask_letters{ask_names};
  static constexpr NamesByLetter<std::size(part_names)> part_letters{part_names};

  enum class Got : std::uint8_t { ok, wrong_type, broken };
  // A Go string at token v, `depth` containers into the value: a string sets it (into
  // raw, or decoded into out), null leaves it. next is the token after it.
  Got string_value(std::uint32_t v, int depth, std::uint32_t& next, RawString* raw, std::string* out);
  std::uint32_t string_field(std::uint32_t v, int depth, RawString* raw, std::string* out, const char* type_why);
  std::uint32_t time_value(std::uint32_t v, Instant* into, const char* type_why);

  StepCodecAccess::Within read_within(const step_json::TokenText& text, bool text_masked, std::uint32_t first,
                                      int outer_depth, StepView& out);
  StepShape parse(std::string_view value, bool padded, Step* full_out);
  StepShape start(std::string_view value);
  bool index(std::string_view value);
  StepShape walk_step(std::uint32_t first);
  std::uint32_t top_value(Field field, std::uint32_t v);
  std::uint32_t ask_value(std::uint32_t v);
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
  // The parts of an ask, by token: each returns the token after the value, or no_token
  // when Go's grammar breaks.
  std::uint32_t walk_ask(std::uint32_t v);
  std::uint32_t walk_part(std::uint32_t v, AskField which);
  std::uint32_t walk_fetch(std::uint32_t v, std::optional<StepFetch>* out);
  std::uint32_t walk_levels(std::uint32_t v, std::optional<std::vector<std::string>>* out);
  // Every field of the object at token v: each(key token, value token) returns the
  // token after the value or no_token.
  template <typename Each>
  std::uint32_t fields(std::uint32_t v, Each&& each);
};

StepCodec::Impl::Got StepCodec::Impl::string_value(std::uint32_t v, int depth, std::uint32_t& next, RawString* raw,
                                                   std::string* out) {
  if (t.at(v) == '"') {
    step_json::StringToken s;
    if (!step_json::string_token(t, v, s)) {
      invalid = true;
      return Got::broken;
    }
    if (raw != nullptr) *raw = RawString{s.begin, s.end, s.escaped || masked, true};
    if (out != nullptr) *out = string_of(s);
    next = v + 1;
    return Got::ok;
  }
  next = check(v, depth);
  if (next == step_json::no_token) return Got::broken;
  return t.at(v) == 'n' && next == v + 1 ? Got::ok : Got::wrong_type;  // a scalar from 'n' is null
}

std::uint32_t StepCodec::Impl::string_field(std::uint32_t v, int depth, RawString* raw, std::string* out,
                                            const char* type_why) {
  std::uint32_t next = step_json::no_token;
  switch (string_value(v, depth, next, raw, out)) {
    case Got::ok:
      return next;
    case Got::wrong_type:
      if (refused == nullptr) refused = type_why;
      return next;
    case Got::broken:
      break;
  }
  return step_json::no_token;
}

// A time.Time field: a string Go's RFC 3339 reader takes (on the raw bytes, escapes not
// undone), or null, which leaves it. Read into *into; with no into (a time no rule
// reads), only checked.
std::uint32_t StepCodec::Impl::time_value(std::uint32_t v, Instant* into, const char* type_why) {
  if (t.at(v) == '"') {
    step_json::StringToken s;
    if (!step_json::string_token(t, v, s, false)) return broken();
    std::string_view text(t.text + s.begin, s.end - s.begin);
    if (into == nullptr) {
      if (!is_rfc3339(text) && refused == nullptr) refused = type_why;
    } else if (auto at = parse_rfc3339(text)) {
      *into = *at;
    } else if (refused == nullptr) {
      refused = type_why;
    }
    return v + 1;
  }
  std::uint32_t next = check(v, 1);
  if (next == step_json::no_token || (t.at(v) == 'n' && next == v + 1)) return next;
  if (refused == nullptr) refused = type_why;
  return next;
}

template <typename Each>
std::uint32_t StepCodec::Impl::fields(std::uint32_t v, Each&& each) {
  std::uint32_t i = v + 1;
  if (i < t.n && t.at(i) == '}') return i + 1;
  for (;;) {
    if (i + 2 >= t.n) return broken();
    std::uint32_t next = each(i, i + 2);
    if (next == step_json::no_token) return next;
    if (next >= t.n) return broken();
    if (t.at(next) == '}') return next + 1;
    if (t.at(next) != ',') return broken();
    i = next + 1;
  }
}

StepShape StepCodec::Impl::parse(std::string_view value, bool, Step* full_out) {
  // In place or not, the bytes are read where they are: stage 1 needs no padding.
  reset(full_out);
  t.text = value.data();
  outer = 0;
  StepShape shape = start(value);
  if (shape != StepShape::step) return shape;
  if (!index(value)) return fail(not_json);
  shape = walk_step(0);
  if (keep_spans && shape == StepShape::step) spans_of = value;
  return shape;
}

StepCodecAccess::Within StepCodec::Impl::read_within(const step_json::TokenText& text, bool text_masked,
                                                     std::uint32_t first, int outer_depth, StepView& out) {
  reset(nullptr);
  t = text;
  masked = text_masked;
  outer = outer_depth;
  std::size_t rest = t.tok[t.n] - t.tok[first];
  if (scratch.capacity() < 3 * rest + 16) scratch.reserve(3 * rest + 16);
  StepShape shape;
  if (t.at(first) == '{') {
    shape = walk_step(first);
  } else {
    after = check(first, 0);
    shape = t.at(first) == 'n' ? StepShape::null_value : fail("the value is no JSON object");
  }
  fill(shape, out);
  bool bad = invalid || after == step_json::no_token;
  return {bad ? StepShape::no_step : shape, bad, bad ? step_json::no_token : after};
}

// What the value is before its tokens are read: empty, white space, null, no object.
StepShape StepCodec::Impl::start(std::string_view value) {
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
  // Decoded strings grow by at most 3 bytes per byte read: reserve once, so the views
  // handed out stay where they are.
  if (scratch.capacity() < 3 * value.size() + 16) scratch.reserve(3 * value.size() + 16);
  return StepShape::step;
}

// Stage 1 over the value, as Go reads it (invalid UTF-8 masked for stage 1).
bool StepCodec::Impl::index(std::string_view value) {
  if (tokens.index_go(value.data(), value.size(), masked) != step_json::Tokens::Found::ok) return false;
  t.tok = tokens.offsets();
  t.n = tokens.count();
  t.know_escapes(tokens.escapes());
  return true;
}

// The step object at token first; the value must end with it.
StepShape StepCodec::Impl::walk_step(std::uint32_t first) {
  if (first >= t.n || t.at(first) != '{') return fail(not_json);
  std::uint32_t next = fields(first, [&](std::uint32_t k, std::uint32_t v) -> std::uint32_t {
    int which = -1;
    if (!key_named(k, top_names, top_letters, which)) return broken();
    Field field = refused || which < 0 ? Field::unknown : top_fields[which];
    std::uint32_t after_value = top_value(field, v);
    if (after_value != step_json::no_token)
      if (want_spans) spans.push_back(FieldSpan{t.tok[k], t.tok[v], value_end(v, after_value), field});
    return after_value;
  });
  if (next == step_json::no_token) return fail(not_json);
  close = t.tok[next - 1];
  after = next;
  if (outer == 0 && next != t.n) return fail(not_json);  // bytes after the value
  if (refused != nullptr) return fail(refused);
  return StepShape::step;
}

std::uint32_t StepCodec::Impl::top_value(Field field, std::uint32_t v) {
  switch (field) {
    case Field::id:
      return string_field(v, 1, full ? nullptr : &id, full ? &full->id : nullptr, "its id is no string");
    case Field::tool:
      return string_field(v, 1, full ? nullptr : &tool, full ? &full->tool : nullptr, "its tool is no string");
    case Field::state:
      return string_field(v, 1, full ? nullptr : &state, full ? &full->state : nullptr, "its state is no string");
    case Field::owner:
      return string_field(v, 1, full ? nullptr : &owner, full ? &full->owner : nullptr, "its owner is no string");
    case Field::reason:
      return string_field(v, 1, full ? nullptr : &reason, full ? &full->reason : nullptr, "its reason is no string");
    case Field::started:
      return time_value(v, full ? &full->started : &started, "its started is no RFC 3339 time");
    case Field::ended:  // read for a whole step only: no rule reads it
      return time_value(v, full ? &full->ended : nullptr, "its ended is no RFC 3339 time");
    case Field::ask:
      return ask_value(v);
    case Field::result:
    case Field::unknown:
      break;
  }
  std::uint32_t next = check(v, 1);
  if (next != step_json::no_token && field == Field::result && full)
    full->result = std::string(t.text + t.tok[v], value_end(v, next) - t.tok[v]);
  return next;
}

std::uint32_t StepCodec::Impl::ask_value(std::uint32_t v) {
  if (t.at(v) == 'n') {
    std::uint32_t next = check(v, 1);
    if (next == step_json::no_token) return next;
    has_ask = false;
    if (full) full->ask.reset();
    levels_backing.clear();
    levels_len = 0;
    return next;
  }
  if (t.at(v) != '{') return wrong(v, 1, "its ask is no object");
  std::uint32_t next = walk_ask(v);
  if (next != step_json::no_token && refused == nullptr) has_ask = true;
  return next;
}

std::uint32_t StepCodec::Impl::walk_ask(std::uint32_t v) {
  StepAsk* ask = nullptr;
  if (full) {
    if (!full->ask) full->ask.emplace();  // a repeated ask decodes into the first
    ask = &*full->ask;
  }
  return fields(v, [&](std::uint32_t k, std::uint32_t fv) -> std::uint32_t {
    int named = -1;
    if (!key_named(k, ask_names, ask_letters, named)) return broken();
    AskField which = refused || named < 0 ? AskField::unknown : ask_fields[named];
    switch (which) {
      case AskField::kind:
        return string_field(fv, 2, nullptr, ask ? &ask->kind : nullptr, "its ask's kind is no string");
      case AskField::check:
      case AskField::build:
      case AskField::compose:
        if (t.at(fv) == 'n') {
          std::uint32_t next = check(fv, 2);
          if (next != fv + 1) return broken();
          if (ask) {
            if (which == AskField::check) ask->check.reset();
            if (which == AskField::build) ask->build.reset();
            if (which == AskField::compose) ask->compose.reset();
          }
          if (which == AskField::check) {
            levels_backing.clear();
            levels_len = 0;
          }
          return next;
        }
        if (t.at(fv) != '{') return wrong(fv, 2, "its ask's check, build or compose is no object");
        if (ask) {
          if (which == AskField::check && !ask->check) {
            ask->check.emplace();
            levels_backing.clear();
            levels_len = 0;
          }
          if (which == AskField::build && !ask->build) ask->build.emplace();
          if (which == AskField::compose && !ask->compose) ask->compose.emplace();
        }
        return walk_part(fv, which);
      case AskField::unknown:
        break;
    }
    return check(fv, 2);
  });
}

std::uint32_t StepCodec::Impl::walk_part(std::uint32_t v, AskField which) {
  StepCheck* check_part = full && which == AskField::check ? &*full->ask->check : nullptr;
  StepBuild* build = full && which == AskField::build ? &*full->ask->build : nullptr;
  StepCompose* compose = full && which == AskField::compose ? &*full->ask->compose : nullptr;
  return fields(v, [&](std::uint32_t k, std::uint32_t fv) -> std::uint32_t {
    int named = -1;
    if (!key_named(k, part_names, part_letters, named)) return broken();
    PartField pf = refused || named < 0 ? PartField::unknown : part_fields[named];
    // Only the fields of this part's struct count; the others are unknown to it.
    if (which == AskField::check && (pf == PartField::module || pf == PartField::fp)) pf = PartField::unknown;
    if (which == AskField::build && (pf == PartField::levels || pf == PartField::run)) pf = PartField::unknown;
    if (which == AskField::compose && pf != PartField::fetch) pf = PartField::unknown;
    auto text = [&](std::string* out, const char* type_why) { return string_field(fv, 3, nullptr, out, type_why); };
    switch (pf) {
      case PartField::fetch: {
        std::optional<StepFetch>* out = check_part ? &check_part->fetch
                                        : build    ? &build->fetch
                                        : compose  ? &compose->fetch
                                                   : nullptr;
        return walk_fetch(fv, out);
      }
      case PartField::levels:
        return walk_levels(fv, check_part ? &check_part->levels : nullptr);
      case PartField::run:
        return text(check_part ? &check_part->run : nullptr, "its ask's run is no string");
      case PartField::module:
        return text(build ? &build->module : nullptr, "its ask's module is no string");
      case PartField::fp:
        return text(build ? &build->fp : nullptr, "its ask's fp is no string");
      case PartField::unknown:
        break;
    }
    return check(fv, 3);
  });
}

// map[string]any: an object (its entries added to the map already there, as Go
// decodes into a map it made) or null (no map). Its numbers must fit a float64.
std::uint32_t StepCodec::Impl::walk_fetch(std::uint32_t v, std::optional<StepFetch>* out) {
  constexpr const char* not_fetch = "a fetch of its ask is no object of JSON values";
  if (t.at(v) == 'n') {
    std::uint32_t next = check(v, 3);
    if (next != v + 1) return broken();
    if (out) out->reset();
    return next;
  }
  if (t.at(v) != '{') return wrong(v, 3, not_fetch);
  if (out && !*out) out->emplace();
  return fields(v, [&](std::uint32_t k, std::uint32_t fv) -> std::uint32_t {
    std::string_view key;  // read only when decoded
    if (out ? !key_at(k, key) : (k + 1 >= t.n || t.at(k) != '"' || t.at(k + 1) != ':')) return broken();
    // The fetch object sits 4 deep: step, ask, check/build/compose, fetch.
    bool float_bad = false;
    std::uint32_t next = check(fv, 4, true, &float_bad);
    if (next == step_json::no_token) return next;
    if (float_bad && refused == nullptr) refused = not_fetch;
    if (out && !refused) {
      std::string raw(t.text + t.tok[fv], value_end(fv, next) - t.tok[fv]);
      bool found = false;
      for (auto& [known, val] : **out) {
        if (known == key) {
          val = std::move(raw);
          found = true;
          break;
        }
      }
      if (!found) (*out)->emplace_back(std::string(key), std::move(raw));
    }
    return next;
  });
}

// []string: an array of strings or nulls, or null. Decoding follows Go's reuse of a
// slice it holds: elements are decoded into in place (a null leaves one as it was),
// the length set to the count, the capacity grown by half (at least 4).
std::uint32_t StepCodec::Impl::walk_levels(std::uint32_t v, std::optional<std::vector<std::string>>* out) {
  constexpr const char* not_levels = "its ask's levels are no strings";
  if (t.at(v) == 'n') {
    std::uint32_t next = check(v, 3);
    if (next != v + 1) return broken();
    if (out) out->reset();
    levels_backing.clear();
    levels_len = 0;
    return next;
  }
  if (t.at(v) != '[') return wrong(v, 3, not_levels);
  std::size_t count = 0;
  std::uint32_t i = v + 1;
  if (i < t.n && t.at(i) == ']') {
    ++i;
  } else {
    for (;;) {
      if (i >= t.n) return broken();
      std::string* into = nullptr;
      if (out && !refused) {
        if (count >= levels_backing.size()) {
          std::size_t cap = levels_backing.size() + levels_backing.size() / 2;
          if (cap < 4) cap = 4;
          std::vector<std::string> grown(cap);
          for (std::size_t k = 0; k < levels_len; ++k) grown[k] = std::move(levels_backing[k]);
          levels_backing = std::move(grown);
        }
        if (count >= levels_len) levels_len = count + 1;
        into = &levels_backing[count];
      }
      std::uint32_t next = step_json::no_token;
      Got got = string_value(i, 4, next, nullptr, into);
      if (got == Got::broken) return broken();
      if (got == Got::wrong_type && refused == nullptr) refused = not_levels;
      ++count;
      if (next >= t.n) return broken();
      if (t.at(next) == ']') {
        i = next + 1;
        break;
      }
      if (t.at(next) != ',') return broken();
      i = next + 1;
    }
  }
  if (out && !refused) {
    if (count < levels_len) levels_len = count;
    if (count == 0) levels_backing.clear();
    out->emplace(levels_backing.begin(), levels_backing.begin() + static_cast<std::ptrdiff_t>(levels_len));
  }
  return i;
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

bool StepCodecAccess::keep_spans(StepCodec& codec, bool keep) {
  bool was = codec.impl_->keep_spans;
  codec.impl_->keep_spans = codec.impl_->want_spans = keep;
  codec.impl_->spans_of = {};
  return was;
}

StepCodecAccess::Within StepCodecAccess::read(StepCodec& codec, const step_json::TokenText& text, bool masked,
                                              std::uint32_t first, int outer, StepView& out) {
  return codec.impl_->read_within(text, masked, first, outer, out);
}

Result<StepAsk> StepCodec::decode_ask(std::string_view json) {
  Impl& m = *impl_;
  const char* e = json.data() + json.size();
  const char* p = step_json::skip_ws(json.data(), e);
  m.reset(nullptr);
  m.t.text = json.data();
  m.outer = 0;
  // One object and nothing after it, before it is read in its place in a step.
  if (p == e || *p != '{' || json.size() > 0xFFFFFFF0u || !m.index(json) || m.check(0, 1) != m.t.n)
    return Error{Errc::parse, "the ask is no JSON object"};
  std::string wrapped;
  wrapped.reserve(json.size() + 8);
  wrapped.append("{\"ask\":").append(json).append("}");
  auto step = decode(wrapped);
  if (!step) return Error{Errc::parse, fmt::format("the ask is no ask: {}", m.why)};
  if (!step->ask) return Error{Errc::not_found, "the step has no ask"};
  return std::move(*step->ask);
}

std::string_view StepCodec::no_step_why() const noexcept {
  return impl_->why;
}

Result<std::string> StepCodec::end(std::string_view value, std::string_view why, Instant ended_at) {
  std::string out;
  if (Status s = end(value, why, ended_at, out); !s.ok()) return s.error();
  return out;
}

Status StepCodec::end(std::string_view value, std::string_view why, Instant ended_at, std::string& out) {
  out.clear();
  // A step read last with its spans kept is not read again (its bytes are unchanged:
  // keep_spans' contract).
  if (!impl_->keep_spans || impl_->spans_of.data() != value.data() || impl_->spans_of.size() != value.size()) {
    impl_->want_spans = true;
    StepShape shape = impl_->parse(value, false, nullptr);
    impl_->want_spans = impl_->keep_spans;
    if (shape != StepShape::step)
      return Status(Errc::parse, fmt::format("the value is no step object: {}",
                                             shape == StepShape::null_value ? "it is null" : impl_->why));
  }
  const char* t = value.data();
  const auto& spans = impl_->spans;
  char when[rfc3339_max];
  std::size_t when_len = format_rfc3339_nano(ended_at, when);

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
  return Status::success();
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

bool is_step_key_of(std::string_view key, std::string_view node) noexcept {
  // split_step_key's node is node when node, holding no '.', is followed by the key's first
  // '.' and at least one byte more: tested in place, with no search of the key.
  if (node.empty() || key.size() < node.size() + 2 || key[node.size()] != '.' ||
      std::memcmp(key.data(), node.data(), node.size()) != 0)
    return false;
  for (char c : node)
    if (c == '.') return false;
  return true;
}

StepVerdict judge_read_step(std::string_view key, std::string_view value, StepShape shape, const StepView& view,
                            const StaleRules& rules, OwnerVerdicts* cache, HolderJudgement* judgement) {
  if (value.empty()) return {StepAction::leave, StepReason::no_value, {}};
  if (shape == StepShape::no_step) return {StepAction::leave, StepReason::no_step, {}};
  if (shape == StepShape::null_value || view.state != step_running)
    return {StepAction::leave, StepReason::not_running, {}};
  return judge_running_step(key, view, rules, cache, judgement);
}

StepVerdict plan_read_step(std::string_view key, std::string_view value, StepShape shape, const StepView& view,
                           const StaleRules& rules, OwnerVerdicts* cache, HolderJudgement* judgement) {
  if (!is_step_key_of(key, rules.node)) return {StepAction::leave, StepReason::other_node, {}};
  return judge_read_step(key, value, shape, view, rules, cache, judgement);
}

StepVerdict plan_step(std::string_view key, std::string_view value, const StaleRules& rules, StepCodec& codec,
                      StepView* view, OwnerVerdicts* cache, HolderJudgement* judgement) {
  StepView local;
  StepView& v = view != nullptr ? *view : local;
  v = StepView{};
  if (!is_step_key_of(key, rules.node)) return {StepAction::leave, StepReason::other_node, {}};
  StepShape shape = value.empty() ? StepShape::no_step : codec.read(value, v);
  return judge_read_step(key, value, shape, v, rules, cache, judgement);
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

std::string_view step_leave_why(StepReason reason) noexcept {
  switch (reason) {
    case StepReason::other_node:
      return "the key is no step key of this node";
    case StepReason::no_value:
      return "the key holds no value";
    case StepReason::no_step:
      return "the value is no step (Go's decoder refuses it)";
    case StepReason::not_running:
      return "the step is not running";
    case StepReason::owned_by_self:
      return "this process owns it";
    case StepReason::owner_alive:
      return "its owner is alive";
    case StepReason::owner_unknown:
      return "its owner cannot be judged, so it is not proven gone";
    case StepReason::ask_within_bound:
      return "its asker still waits for it";
    case StepReason::started_since:
      return "it names no owner and started since this process began";
    default:
      return {};
  }
}

std::string step_why(const StepVerdict& verdict) {
  char buf[step_why_max];
  return std::string(buf, step_why(verdict, buf));
}

void append_step_said(std::string& out, const StepVerdict& verdict, std::string_view owner, std::string_view self,
                      const HolderJudgement* judgement) {
  switch (verdict.reason) {
    case StepReason::owner_not_self:
      out.append("its owner ").append(owner).append(" is not this process ").append(self);
      return;
    case StepReason::owner_gone:
      out.append("its owner ").append(owner).append(" is provably gone");
      if (judgement != nullptr && !judgement->why.empty()) out.append(": ").append(judgement->why);
      return;
    case StepReason::ask_past_bound:
      out.append("it names no owner (an older build wrote it)");
      return;
    case StepReason::started_before:
      out.append("it names no owner (an older build wrote it) and started before this process");
      return;
    default:
      return;
  }
}

std::string step_said(const StepVerdict& verdict, std::string_view owner, std::string_view self,
                      const HolderJudgement* judgement) {
  std::string out;
  append_step_said(out, verdict, owner, self, judgement);
  return out;
}

}  // namespace leasejudge
