// The step codec (leasejudge/step_codec.hpp): Go's decoder over simdjson's stage 1
// tokens, and the end rewrite.
#include "leasejudge/step_codec.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <iterator>
#include <limits>

#include "step_codec_within.hpp"
#include "step_fields.hpp"
#include "step_json.hpp"

namespace leasejudge {

namespace {

using step_fields::AskField;
using step_fields::exact_ask_field;
using step_fields::exact_part_field;
using step_fields::exact_step_field;
using step_fields::Field;
using step_fields::folded_name;
using step_fields::match_name;
using step_fields::NamesByLetter;
using step_fields::PartField;

constexpr const char* not_json = "the value is not valid JSON";

// A string value found in the bytes: offsets of its body (between the quotes).
struct RawString {
  std::uint32_t begin = 0, end = 0;
  bool decode = false;  // escapes or non-ASCII bytes: must go through unquote
  bool set = false;
};

// What StepCodec::end rewrites of a top-level field.
constexpr StepSpans::Kind span_kind(Field field) noexcept {
  switch (field) {
    case Field::state:
      return StepSpans::Kind::state;
    case Field::reason:
      return StepSpans::Kind::reason;
    case Field::ended:
      return StepSpans::Kind::ended;
    case Field::result:
      return StepSpans::Kind::result;
    default:
      return StepSpans::Kind::other;
  }
}

}  // namespace

struct StepCodec::Impl {
  step_json::Tokens tokens;
  std::string scratch;           // decoded strings of the last read
  std::string key_scratch;       // a decoded object key
  StepSpans* spans = nullptr;  // where the read in progress puts its fields' spans, if anywhere
  StepSpans own;               // end's, for a value it reads itself
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
    spans = nullptr;
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
  StepShape parse(std::string_view value, Step* full_out, StepSpans* spans_out);
  StepShape start(std::string_view value);
  bool index(std::string_view value);
  StepShape walk_step(std::uint32_t first);
  // Inlined into walk_step's loop over the fields. The compiler inlines a function called
  // once by itself only when it has internal linkage, which top_value lost when Field
  // moved to step_fields.hpp: a call for each field was 4% of the plan's instructions
  // (callgrind, 20k keys) and the larger part of its loss in time (bench/README).
  [[gnu::always_inline]] inline std::uint32_t top_value(Field field, std::uint32_t v);
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

StepShape StepCodec::Impl::parse(std::string_view value, Step* full_out, StepSpans* spans_out) {
  // The bytes are read where they are: stage 1 needs no padding.
  reset(full_out);
  if (spans_out != nullptr) {
    spans_out->fields.clear();
    spans_out->of = {};
  }
  t.text = value.data();
  outer = 0;
  StepShape shape = start(value);
  if (shape == StepShape::step) {
    spans = spans_out;
    shape = index(value) ? walk_step(0) : fail(not_json);
    spans = nullptr;
  }
  if (spans_out != nullptr && shape == StepShape::step) {
    spans_out->close = close;
    spans_out->of = value;
  } else if (spans_out != nullptr) {
    spans_out->fields.clear();
  }
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
      if (spans != nullptr) spans->fields.push_back({t.tok[k], t.tok[v], value_end(v, after_value), span_kind(field)});
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

StepShape StepCodec::read(std::string_view value, StepView& out, StepSpans* spans) {
  return impl_->fill(impl_->parse(value, nullptr, spans), out);
}

std::optional<Step> StepCodec::decode(std::string_view value) {
  Step step;
  StepShape shape = impl_->parse(value, &step, nullptr);
  impl_->full = nullptr;
  if (shape == StepShape::no_step) return std::nullopt;
  if (shape == StepShape::null_value) return Step{};
  return step;
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

Status StepCodec::end(std::string_view value, std::string_view why, Instant ended_at, std::string& out,
                      const StepSpans* spans) {
  out.clear();
  // Spans a read found in these very bytes spare reading them again.
  if (spans == nullptr || spans->of.empty() || spans->of.data() != value.data() || spans->of.size() != value.size()) {
    StepShape shape = impl_->parse(value, nullptr, &impl_->own);
    if (shape != StepShape::step)
      return Status(Errc::parse, fmt::format("the value is no step object: {}",
                                             shape == StepShape::null_value ? "it is null" : impl_->why));
    spans = &impl_->own;
  }
  append_ended(out, value, *spans, why, ended_at);
  return Status::success();
}

}  // namespace leasejudge
