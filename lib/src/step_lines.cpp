// The JSON lines of `leasejudge step plan` (step_lines.hpp).
#include "leasejudge/step_lines.hpp"

#include <fmt/format.h>
#include <pthread.h>
#include <signal.h>
#include <simdjson.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <functional>
#include <limits>
#include <mutex>
#include <span>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "step_codec_within.hpp"
#include "step_json.hpp"

namespace leasejudge {

namespace {

constexpr const char* not_one_value = "the line is not one JSON value";

// A JSON number that is an integer from 0 to 2^64-1 (what a revision is), into out.
bool revision_of(const char* b, const char* e, Revision& out) noexcept {
  if (b == e || e - b > 20) return false;
  Revision v = 0;
  for (const char* p = b; p < e; ++p) {
    if (!step_json::is_digit(static_cast<unsigned char>(*p))) return false;
    auto d = static_cast<Revision>(*p - '0');
    // 19 digits always fit; the 20th may not.
    if (p - b == 19 && v > (std::numeric_limits<Revision>::max() - d) / 10) return false;
    v = v * 10 + d;
  }
  out = v;
  return true;
}

}  // namespace

struct StepLineReader::Impl {
  step_json::Tokens tokens;
  step_json::NestStack nest;
  std::string key, stored, name;  // what was decoded: the key, a value carried as a string, a name
  StepLine line;

  // The read in progress.
  step_json::TokenText t;
  bool masked = false;
  const char* wrong = nullptr;  // the first field of the wrong type

  const StepLine& read(std::string_view text, StepCodec* codec, StepView* view, std::string_view node);
  // A line indexed already, with many others (its tokens and the text they are offsets into).
  const StepLine& read_indexed(const step_json::TokenText& tokens, StepCodec* codec, StepView* view,
                               std::string_view node);
  const StepLine& walk(StepCodec* codec, StepView* view, std::string_view node);
  const StepLine& malformed(const char* why) {
    line.malformed = why;
    return line;
  }
  // A line that is no JSON value names no key, whatever it held before it broke.
  const StepLine& broken() {
    line.has_key = false;
    return malformed(not_one_value);
  }
  bool index(std::string_view text);
  std::string_view decoded(const step_json::StringToken& s, std::string& into) {
    if (!(s.escaped || masked)) return std::string_view(t.text + s.begin, s.end - s.begin);
    into.clear();
    step_json::unquote_append(t.text + s.begin, t.text + s.end, into);
    return into;
  }
  std::uint32_t check(std::uint32_t v) noexcept {
    if (v < t.n && t.at(v) == '"') return v + 1;  // a string: valid once indexed
    return step_json::check_tokens(t, v, 1, false, nest);
  }
  std::uint32_t field(std::string_view name, std::uint32_t v, StepCodec* codec, StepView* view, std::string_view node);
  std::uint32_t value_field(std::uint32_t v, StepCodec* codec, StepView* view, std::string_view node);
};

StepLineReader::StepLineReader() : impl_(std::make_unique<Impl>()) {}
StepLineReader::~StepLineReader() = default;
StepLineReader::StepLineReader(StepLineReader&&) noexcept = default;
StepLineReader& StepLineReader::operator=(StepLineReader&&) noexcept = default;

const StepLine& StepLineReader::read(std::string_view line) {
  return impl_->read(line, nullptr, nullptr, {});
}

const StepLine& StepLineReader::read_planned(std::string_view line, StepCodec& codec, StepView& view,
                                             std::string_view node) {
  return impl_->read(line, &codec, &view, node);
}

// Stage 1 over the line, as Go reads it (invalid UTF-8 masked for stage 1).
bool StepLineReader::Impl::index(std::string_view text) {
  if (tokens.index_go(text.data(), text.size(), masked) != step_json::Tokens::Found::ok) return false;
  t.text = text.data();
  t.tok = tokens.offsets();
  t.n = tokens.count();
  t.know_escapes(tokens.escapes());
  return true;
}

const StepLine& StepLineReader::Impl::read(std::string_view text, StepCodec* codec, StepView* view,
                                           std::string_view node) {
  line = StepLine{};
  masked = false;
  wrong = nullptr;
  const char* e = text.data() + text.size();
  if (step_json::skip_ws(text.data(), e) == e || text.size() >= 0xFFFFFFF0u || !index(text)) return broken();
  return walk(codec, view, node);
}

const StepLine& StepLineReader::Impl::read_indexed(const step_json::TokenText& tokens, StepCodec* codec, StepView* view,
                                                   std::string_view node) {
  line = StepLine{};
  masked = false;
  wrong = nullptr;
  t = tokens;
  return walk(codec, view, node);
}

const StepLine& StepLineReader::Impl::walk(StepCodec* codec, StepView* view, std::string_view node) {
  if (t.at(0) != '{') return check(0) == t.n ? malformed("the line is no JSON object") : broken();
  // The object, field by field. Go's grammar is checked to the end before a field of
  // the wrong type is told; after one, the rest is only checked.
  std::uint32_t i = 1;
  if (i < t.n && t.at(i) == '}') {
    ++i;
  } else {
    for (;;) {
      step_json::StringToken ks;
      // A name is looked for escapes only when it is none of the three byte for byte.
      if (i + 2 >= t.n || !step_json::string_token(t, i, ks, false) || t.at(i + 1) != ':') return broken();
      std::string_view raw(t.text + ks.begin, ks.end - ks.begin);
      if (masked || (raw != "key" && raw != "revision" && raw != "value")) {
        ks.escaped = raw.find('\\') != std::string_view::npos;
        raw = decoded(ks, name);
      }
      std::uint32_t v = i + 2;
      std::uint32_t next = wrong != nullptr ? check(v) : field(raw, v, codec, view, node);
      if (next == step_json::no_token || next >= t.n) return broken();
      i = next + 1;
      if (t.at(next) == '}') break;
      if (t.at(next) != ',') return broken();
    }
  }
  if (i != t.n) return broken();
  if (wrong != nullptr) return malformed(wrong);
  if (!line.has_key) return malformed("it names no key");
  if (line.key.size() > 0xFFFFFFFFu || line.value.size() > 0xFFFFFFFFu)
    return malformed("its key or value is over 4 GiB");
  return line;
}

std::uint32_t StepLineReader::Impl::field(std::string_view field_name, std::uint32_t v, StepCodec* codec,
                                          StepView* view, std::string_view node) {
  if (field_name == "key") {
    step_json::StringToken s;
    if (t.at(v) != '"') {
      wrong = "its key is no string";
      return check(v);
    }
    if (!step_json::string_token(t, v, s)) return step_json::no_token;
    line.key = decoded(s, key);
    line.has_key = true;
    line.key_checked = false;
    return v + 1;
  }
  if (field_name == "revision") {
    std::uint32_t next = check(v);
    if (next == step_json::no_token) return next;
    const char* b = t.text + t.tok[v];
    if (next == v + 1 && *b == 'n') {
      line.revision = 0;
    } else if (next != v + 1 || !revision_of(b, t.text + t.end_of(v), line.revision)) {
      wrong = "its revision is no integer from 0 to 2^64-1";
    }
    return next;
  }
  if (field_name == "value") return value_field(v, codec, view, node);
  return check(v);
}

std::uint32_t StepLineReader::Impl::value_field(std::uint32_t v, StepCodec* codec, StepView* view,
                                                std::string_view node) {
  line.read = false;
  if (t.at(v) == '"') {
    // A JSON string carries stored bytes that are not JSON.
    step_json::StringToken s;
    if (!step_json::string_token(t, v, s)) return step_json::no_token;
    line.value = decoded(s, stored);
    return v + 1;
  }
  std::uint32_t next;
  // Read as a step from this index, unless the key already said whose it is not.
  if (codec != nullptr && line.has_key) {
    line.key_checked = true;
    line.of_node = is_step_key_of(line.key, node);
  }
  if (codec != nullptr && (!line.has_key || line.of_node)) {
    StepCodecAccess::Within w = StepCodecAccess::read(*codec, t, masked, v, 1, *view);
    if (w.broken) return step_json::no_token;
    next = w.after;
    line.read = true;
    line.shape = w.shape;
  } else {
    next = check(v);
    if (next == step_json::no_token) return next;
  }
  std::uint32_t end = t.at(v) == '{' || t.at(v) == '[' ? t.tok[next - 1] + 1 : t.end_of(v);
  line.value = std::string_view(t.text + t.tok[v], end - t.tok[v]);
  return next;
}

namespace {
// What follows the key in the answer line of a leave, for each reason (< step_reason_count):
// the same for every key, so written once.
const std::string& leave_tail(StepReason reason) {
  static const auto tails = [] {
    std::array<std::string, step_reason_count> t;
    for (int r = 0; r < step_reason_count; ++r) {
      const auto reason_of = static_cast<StepReason>(r);
      std::string& tail = t[static_cast<std::size_t>(r)];
      tail = fmt::format("\",\"action\":\"leave\",\"reason\":\"{}\",\"why\":", step_reason_name(reason_of));
      step_json::append_json_string(tail, step_leave_why(reason_of));
      tail += "}\n";
    }
    return t;
  }();
  return tails[static_cast<std::size_t>(reason)];
}
}  // namespace

void append_step_plan_line(std::string& out, std::string_view key, const StepVerdict& verdict) {
  if (verdict.action == StepAction::leave && static_cast<std::uint8_t>(verdict.reason) < step_reason_count &&
      step_json::plain_json(key)) {
    // Most lines: the key as it is, then the leave's tail.
    out.append("{\"key\":\"").append(key).append(leave_tail(verdict.reason));
    return;
  }
  char why[step_why_max];
  std::string_view why_text = verdict.action == StepAction::leave ? step_leave_why(verdict.reason)
                                                                  : std::string_view(why, step_why(verdict, why));
  std::string_view action = step_action_name(verdict.action);
  std::string_view reason = step_reason_name(verdict.reason);
  constexpr std::string_view a = "{\"key\":\"", b = "\",\"action\":\"", c = "\",\"reason\":\"", d = "\",\"why\":\"",
                             e = "\"}\n";
  if (key.size() <= 1024 && step_json::plain_json(key) && step_json::plain_json(why_text)) {
    // Nearly every line: nothing to escape, the line put together once.
    char line[1024 + step_why_max + 96];
    char* p = line;
    for (std::string_view piece : {a, key, b, action, c, reason, d, why_text, e}) {
      std::memcpy(p, piece.data(), piece.size());
      p += piece.size();
    }
    out.append(line, static_cast<std::size_t>(p - line));
    return;
  }
  out.append("{\"key\":");
  step_json::append_json_string(out, key);
  out.append(",\"action\":\"");
  out.append(action);
  out.append("\",\"reason\":\"");
  out.append(reason);
  out.append("\",\"why\":");
  step_json::append_json_string(out, why_text);
  out.append("}\n");
}

bool append_step_line(std::string& out, std::string_view key, Revision revision, std::string_view value) {
  out.append("{\"key\":");
  step_json::append_json_string(out, key);
  out.append(fmt::format(",\"revision\":{}", revision));
  bool kept = simdjson::validate_utf8(key.data(), key.size());
  if (!value.empty()) {
    out.append(",\"value\":");
    auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
    // A stored JSON string is carried as a string of its bytes: a string value in a
    // line always is one.
    bool one_line = value.front() != '"' && value.find_first_of("\n\r") == std::string_view::npos &&
                    !space(value.front()) && !space(value.back());
    thread_local simdjson::dom::parser parser;
    simdjson::dom::element ignored;
    if (one_line && parser.parse(value.data(), value.size()).get(ignored) == simdjson::SUCCESS) {
      out.append(value);  // one valid JSON value: as it is (stage 1 checked its UTF-8)
    } else {
      kept = kept && simdjson::validate_utf8(value.data(), value.size());
      step_json::append_json_string(out, value);
    }
  }
  out.append("}\n");
  return kept;
}

void append_step_malformed_line(std::string& out, const StepLine& line) {
  out.append("{\"key\":");
  if (line.has_key)
    step_json::append_json_string(out, line.key);
  else
    out.append("null");
  std::string_view what = line.malformed != nullptr ? line.malformed : "";
  out.append(",\"action\":\"leave\",\"reason\":\"malformed\",\"why\":");
  step_json::append_json_string(out, what);
  out.append(",\"malformed\":");
  step_json::append_json_string(out, what);
  out.append("}\n");
}

// --- the plan ----------------------------------------------------------------------------

namespace {
// Lines are indexed this many bytes at a time (a longer line alone): one stage 1 call for
// many lines costs less than a call a line.
constexpr std::size_t lines_at_once = 256 << 10;

// A piece of lines is shared between threads only when each gets this much of it: less
// costs more in handing over than it saves.
constexpr std::size_t lines_a_thread = 64 << 10;

// Where to cut text, from pos, near at (pos < at < text.size()): after the last newline
// before at, else after the first after it, else at its end; never at pos.
std::size_t line_cut(std::string_view text, std::size_t pos, std::size_t at) noexcept {
  std::size_t nl = text.rfind('\n', at - 1);
  std::size_t cut = nl != std::string_view::npos && nl >= pos ? nl + 1 : text.find('\n', pos);
  return cut == std::string_view::npos ? text.size() : std::max(cut, pos + 1);
}

// each(line) for every line of chunk (without its newline).
template <typename Each>
void each_line(std::string_view chunk, Each&& each) {
  std::size_t at = 0;
  while (at < chunk.size()) {
    std::size_t nl = chunk.find('\n', at);
    if (nl == std::string_view::npos) nl = chunk.size();
    each(chunk.substr(at, nl - at));
    at = nl + 1;
  }
}

// The first of tok[j, n) (ascending) at or after end: std::lower_bound's answer. A line
// holds tens of tokens and its chunk thousands, so they are counted from j, four at a
// time, rather than searched for.
std::uint32_t first_token_at(const std::uint32_t* tok, std::uint32_t j, std::uint32_t n, std::uint32_t end) noexcept {
#if defined(__SSE2__)
  // Unsigned order as signed: the top bit flipped on both sides.
  const __m128i top = _mm_set1_epi32(std::numeric_limits<std::int32_t>::min());
  const __m128i bound = _mm_xor_si128(_mm_set1_epi32(static_cast<std::int32_t>(end)), top);
  for (; n - j >= 4; j += 4) {
    const __m128i x = _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(tok + j)), top);
    const auto before = static_cast<unsigned>(_mm_movemask_ps(_mm_castsi128_ps(_mm_cmplt_epi32(x, bound))));
    if (before != 0xF) return j + static_cast<std::uint32_t>(__builtin_ctz(~before));
  }
#endif
  while (j < n && tok[j] < end) ++j;
  return j;
}
}  // namespace

struct StepLinesPlan::Impl {
  // What planning lines keeps from line to line: the readers, the index of many lines at
  // once, the owners judged. One a thread.
  struct Run {
    explicit Run(const StepRules& r) : rules(r) {}
    const StepRules& rules;
    StepLineReader reader;
    step_json::Tokens tokens;  // of many lines at once
    StepCodec codec;
    OwnerVerdicts cache;
    StepView view;
    StepLinesSummary summary;

    void answer(const StepLine& l, std::string& out);
    void plan_line(std::string_view text, std::string& out) {
      const char* e = text.data() + text.size();
      if (step_json::skip_ws(text.data(), e) == e) return;  // blank lines get no answer
      answer(reader.read_planned(text, codec, view, rules.node), out);
    }
    void plan_lines(std::string_view text, std::string& out);
    bool plan_indexed(std::string_view chunk, std::string& out);
  };
  class Helper;

  explicit Impl(StepRules r, unsigned n)
      : rules(std::move(r)), threads(std::clamp(n, 1u, StepLinesPlan::max_threads)), main(rules) {}
  ~Impl();
  StepRules rules;
  unsigned threads;
  Run main;
  std::vector<std::unique_ptr<Helper>> helpers;  // made when a piece is first large enough to share
  std::string pending;                           // a line cut short by the end of a chunk

  // Complete lines, over the threads when each has enough of them.
  void plan(std::string_view text, std::string& out);
};

// A Run on a thread of its own, handed a piece of lines at a time; its answers are kept
// until taken. Signals are blocked on the thread: they are the caller's to take.
class StepLinesPlan::Impl::Helper {
 public:
  explicit Helper(const StepRules& rules) : run(rules) {
    sigset_t all, before;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &before);
    try {
      thread_ = std::thread([this] { serve(); });
    } catch (...) {
      pthread_sigmask(SIG_SETMASK, &before, nullptr);
      throw;
    }
    pthread_sigmask(SIG_SETMASK, &before, nullptr);
  }
  ~Helper() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      quit_ = true;
    }
    changed_.notify_all();
    thread_.join();
  }
  Helper(const Helper&) = delete;
  Helper& operator=(const Helper&) = delete;

  // Plan lines (complete ones, valid until finish returns) on the thread.
  void start(std::string_view lines) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      job_ = lines;
      busy_ = true;
    }
    changed_.notify_all();
  }
  // Wait for the lines started: what planning them threw, or null and their answers in
  // answers.
  std::exception_ptr finish() {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [this] { return !busy_; });
    return std::exchange(error_, nullptr);
  }

  Run run;
  std::string answers;

 private:
  void serve() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      changed_.wait(lock, [this] { return busy_ || quit_; });
      if (!busy_) return;
      std::string_view lines = job_;
      lock.unlock();
      std::exception_ptr error;
      try {
        answers.clear();
        run.plan_lines(lines, answers);
      } catch (...) {
        error = std::current_exception();
      }
      lock.lock();
      error_ = error;
      busy_ = false;
      changed_.notify_all();
    }
  }

  std::mutex mutex_;
  std::condition_variable changed_;
  std::string_view job_;
  bool busy_ = false, quit_ = false;
  std::exception_ptr error_;
  std::thread thread_;  // last: started once the rest is made
};

StepLinesPlan::Impl::~Impl() = default;

void StepLinesPlan::Impl::Run::answer(const StepLine& l, std::string& out) {
  if (l.malformed != nullptr) {
    ++summary.malformed;
    append_step_malformed_line(out, l);
    return;
  }
  StepVerdict v{StepAction::leave, StepReason::other_node, {}};
  if (l.key_checked ? l.of_node : is_step_key_of(l.key, rules.node)) {
    StepShape shape = l.shape;
    if (!l.read && !l.value.empty()) shape = codec.read(l.value, view);
    v = judge_step(StepRead{l.key, l.value, shape, view}, rules, &cache);
  }
  summary.plan.add(v);
  append_step_plan_line(out, l.key, v);
}

// Complete lines: indexed a chunk at a time, each line read from its part of the index.
// A chunk stage 1 refuses (a line not UTF-8, a string left open, a bad escape: a string
// never spans lines in an index that stands) is read line by line instead.
void StepLinesPlan::Impl::Run::plan_lines(std::string_view text, std::string& out) {
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t cut = std::min(text.size(), pos + lines_at_once);
    if (cut < text.size()) cut = line_cut(text, pos, cut);
    std::string_view chunk = text.substr(pos, cut - pos);
    if (!plan_indexed(chunk, out)) each_line(chunk, [&](std::string_view line) { plan_line(line, out); });
    pos = cut;
  }
}

bool StepLinesPlan::Impl::Run::plan_indexed(std::string_view chunk, std::string& out) {
  if (chunk.size() >= 0xFFFFFFF0u || tokens.index(chunk.data(), chunk.size()) != step_json::Tokens::Found::ok)
    return false;
  const std::uint32_t* tok = tokens.offsets();
  const std::uint32_t n = tokens.count();
  const std::span<const std::uint64_t> escapes = tokens.escapes();
  std::uint32_t j = 0;
  each_line(chunk, [&](std::string_view line) {
    auto line_end = static_cast<std::uint32_t>(line.data() + line.size() - chunk.data());
    std::uint32_t first = j;
    j = first_token_at(tok, j, n, line_end);
    if (first == j) return;  // blank: white space only
    // The line's tokens; the one after its last (the next line's first, or the chunk's
    // end) bounds its last token as the text's end would. The escapes are the chunk's:
    // the line's offsets are the chunk's.
    step_json::TokenText text{chunk.data(), tok + first, j - first};
    text.know_escapes(escapes);
    answer(reader.impl_->read_indexed(text, &codec, &view, rules.node), out);
  });
  return true;
}

void StepLinesPlan::Impl::plan(std::string_view text, std::string& out) {
  std::size_t parts = std::min<std::size_t>(threads, text.size() / lines_a_thread);
  if (parts <= 1) {
    main.plan_lines(text, out);
    return;
  }
  try {
    while (helpers.size() < parts - 1) helpers.push_back(std::make_unique<Helper>(rules));
  } catch (const std::system_error&) {
    parts = helpers.size() + 1;  // no more threads to be had: plan over those there are
  }
  // Parts of about equal size, each cut after a newline; the first is planned here.
  std::size_t started = 0, pos = 0;
  std::string_view first;
  for (std::size_t p = 0; p < parts && pos < text.size(); ++p) {
    std::size_t cut =
        p + 1 == parts ? text.size() : line_cut(text, pos, std::max(pos + 1, text.size() * (p + 1) / parts));
    std::string_view part = text.substr(pos, cut - pos);
    pos = cut;
    if (p == 0)
      first = part;
    else
      helpers[started++]->start(part);
  }
  std::exception_ptr error;
  try {
    main.plan_lines(first, out);
  } catch (...) {
    error = std::current_exception();
  }
  // Every helper is waited for, whatever failed: their lines are the caller's.
  for (std::size_t h = 0; h < started; ++h) {
    std::exception_ptr failed = helpers[h]->finish();
    if (error == nullptr) error = failed;
    if (error == nullptr) out.append(helpers[h]->answers);
  }
  if (error != nullptr) std::rethrow_exception(error);
}

StepLinesPlan::StepLinesPlan(StepRules rules, unsigned threads)
    : impl_(std::make_unique<Impl>(std::move(rules), threads)) {}
StepLinesPlan::~StepLinesPlan() = default;
StepLinesPlan::StepLinesPlan(StepLinesPlan&&) noexcept = default;
StepLinesPlan& StepLinesPlan::operator=(StepLinesPlan&&) noexcept = default;

void StepLinesPlan::feed(std::string_view input, std::string& out) {
  Impl& m = *impl_;
  std::size_t pos = 0;
  if (!m.pending.empty()) {
    std::size_t nl = input.find('\n');
    if (nl == std::string_view::npos) {
      m.pending.append(input);
      return;
    }
    m.pending.append(input.substr(0, nl));
    m.main.plan_line(m.pending, out);
    m.pending.clear();
    pos = nl + 1;
  }
  std::size_t last = input.rfind('\n');
  if (last == std::string_view::npos || last < pos) {
    m.pending.assign(input.substr(pos));
    return;
  }
  m.plan(input.substr(pos, last + 1 - pos), out);
  m.pending.assign(input.substr(last + 1));
}

void StepLinesPlan::finish(std::string& out) {
  Impl& m = *impl_;
  if (m.pending.empty()) return;
  m.main.plan_line(m.pending, out);
  m.pending.clear();
}

StepLinesSummary StepLinesPlan::summary() const noexcept {
  StepLinesSummary total = impl_->main.summary;
  for (const auto& h : impl_->helpers) {  // idle between the caller's calls
    total.plan.add(h->run.summary.plan);
    total.malformed += h->run.summary.malformed;
  }
  return total;
}

void plan_step_lines(std::string_view text, const StepRules& rules, unsigned threads, StepLinesSummary& summary,
                     const std::function<void(std::string_view answers)>& emit) {
  // The answers handed over a piece of input at a time: a chunk the index takes at once
  // for each thread (the answers, some 50 KiB a chunk, stay in cache until handed over).
  StepLinesPlan plan(rules, threads);
  const std::size_t piece = lines_at_once * std::clamp(threads, 1u, StepLinesPlan::max_threads);
  std::string answers;
  for (std::size_t at = 0; at < text.size(); at += piece) {
    answers.clear();
    plan.feed(text.substr(at, piece), answers);
    if (!answers.empty()) emit(answers);
  }
  answers.clear();
  plan.finish(answers);
  if (!answers.empty()) emit(answers);
  summary = plan.summary();
}

std::string plan_step_lines(std::string_view text, const StepRules& rules, unsigned threads,
                            StepLinesSummary& summary) {
  std::string out;
  plan_step_lines(text, rules, threads, summary, [&out](std::string_view answers) { out.append(answers); });
  return out;
}

namespace {

Status write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status(Errc::io, fmt::format("writing the plan: {}", std::strerror(errno)));
    }
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return Status::success();
}

}  // namespace

Status plan_step_lines_fd(StepLinesPlan& plan, int in_fd, int out_fd, const std::atomic<bool>* stop) {
  constexpr std::size_t chunk = 512 << 10;  // a piece that stays in cache while it is planned
  std::unique_ptr<char[]> in(new char[chunk]);
  std::string out;
  out.reserve(chunk / 2);
  for (;;) {
    if (stop != nullptr && stop->load()) return Status::success();
    ssize_t n = ::read(in_fd, in.get(), chunk);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status(Errc::io, fmt::format("reading the lines: {}", std::strerror(errno)));
    }
    if (n == 0) break;
    plan.feed(std::string_view(in.get(), static_cast<std::size_t>(n)), out);
    if (out.size() >= chunk / 4) {
      if (Status st = write_all(out_fd, out); !st.ok()) return st;
      out.clear();
    }
  }
  plan.finish(out);
  return write_all(out_fd, out);
}

}  // namespace leasejudge
