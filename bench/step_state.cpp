// The steps-state generator (step_state.hpp). Values are written as Go's encoding/json
// writes a step (fields in the struct's order, RFC3339Nano times, ended as Go's zero time
// while running), with unknown fields and realistic result and ask payloads around them.
#include "step_state.hpp"

#include <fmt/format.h>

#include <array>
#include <string_view>

namespace leasejudge::bench {
namespace {

// splitmix64: fixed, portable, fast; the same seed gives the same state everywhere.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : s_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (s_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  std::uint64_t below(std::uint64_t n) { return n == 0 ? 0 : next() % n; }
  std::int64_t between(std::int64_t lo, std::int64_t hi) {  // inclusive
    return lo + static_cast<std::int64_t>(below(static_cast<std::uint64_t>(hi - lo) + 1));
  }
  bool chance(unsigned per_mille) { return below(1000) < per_mille; }
  template <typename T, std::size_t N>
  const T& pick(const std::array<T, N>& a) {
    return a[below(N)];
  }

 private:
  std::uint64_t s_;
};

constexpr std::int64_t kSecond = 1000000000LL;
constexpr std::int64_t kHour = 3600 * kSecond;

enum class Kind {
  other_node,
  finished,
  own,
  other_owner,
  other_owner_ask,
  ask_old,
  ask_young,
  hand_before,
  hand_after,
  no_step,
  edge
};

// Weights per 1000 local keys (other nodes are drawn first, by other_node_pct).
struct Weight {
  Kind kind;
  unsigned w;
};
constexpr std::array<Weight, 9> kLocalWeights{{{Kind::finished, 652},
                                               {Kind::own, 76},
                                               {Kind::other_owner, 54},
                                               {Kind::other_owner_ask, 65},
                                               {Kind::ask_old, 33},
                                               {Kind::ask_young, 33},
                                               {Kind::hand_before, 33},
                                               {Kind::hand_after, 22},
                                               {Kind::no_step, 32}}};

constexpr std::array<std::string_view, 5> kHandTools{"build_go_module", "check_go_race", "compose_stack",
                                                     "publish_release", "build_go_step_end"};
constexpr std::array<std::string_view, 3> kAskKinds{"check", "build", "compose"};
constexpr std::array<std::string_view, 6> kRepositories{
    "git.novox.be/novox/mesh-sdk", "git.novox.be/novox/hq",          "git.novox.be/novox/build-modules",
    "github.com/nats-io/nats.go",  "git.novox.be/novox/conformance", "git.novox.be/novox/delivery"};
constexpr std::array<std::string_view, 5> kModules{"mesh-sdk/go", "hq/api", "build-modules/go", "delivery/puller",
                                                   "conformance/kit"};
constexpr std::array<std::string_view, 6> kLevels{"unit", "lint", "race", "vet", "integration", "conformance"};
constexpr std::array<std::string_view, 24> kWords{"ok",        "PASS",   "go",      "test",    "-race",   "./...",
                                                  "coverage:", "of",     "package", "cached",  "build",   "module",
                                                  "fetch",     "commit", "levels",  "checked", "(0.42s)", "warning",
                                                  "vet:",      "no",     "issues",  "runtime", "wrote",   "artifact"};
// Escapes a real log carries; each is one JSON escape sequence.
constexpr std::array<std::string_view, 6> kEscapes{"\\n", "\\t", "\\\"", "\\u00e9", "\\\\", "\\u2713"};

void put_hex(std::string& out, Rng& rng, std::size_t n) {
  static constexpr char digits[] = "0123456789abcdef";
  for (std::size_t i = 0; i < n; ++i) out.push_back(digits[rng.below(16)]);
}

void put_uuid(std::string& out, Rng& rng, bool upper) {
  static constexpr char lower_digits[] = "0123456789abcdef";
  static constexpr char upper_digits[] = "0123456789ABCDEF";
  const char* digits = upper ? upper_digits : lower_digits;
  for (int i = 0; i < 36; ++i) {
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      out.push_back('-');
    } else if (i == 14) {
      out.push_back('4');  // version 4, as uuid_generate_random writes
    } else {
      out.push_back(digits[rng.below(16)]);
    }
  }
}

// A time as Go's encoding/json writes a time.Time in a zone offset_min east of UTC.
void put_time(std::string& out, Instant t, int offset_min) {
  char buf[rfc3339_max];
  std::size_t n = format_rfc3339_nano(t.plus_ns(std::int64_t{offset_min} * 60 * kSecond), buf);
  out.push_back('"');
  out.append(buf, n - 1);  // without its Z
  if (offset_min == 0) {
    out.push_back('Z');
  } else {
    int m = offset_min < 0 ? -offset_min : offset_min;
    fmt::format_to(std::back_inserter(out), "{}{:02}:{:02}", offset_min < 0 ? '-' : '+', m / 60, m % 60);
  }
  out.push_back('"');
}

// A realistic owner token of another process: <boot id>.<pid>.<start ms base 36>.
void put_other_owner(std::string& out, Rng& rng, Instant now) {
  put_uuid(out, rng, false);
  fmt::format_to(std::back_inserter(out), ".{}.", rng.between(300, 4194304));
  std::int64_t ms = now.unix_ms() - rng.between(60000, 40LL * 24 * 3600 * 1000);
  char b36[16];
  int n = 0;
  do {
    b36[n++] = "0123456789abcdefghijklmnopqrstuvwxyz"[ms % 36];
    ms /= 36;
  } while (ms > 0);
  while (n > 0) out.push_back(b36[--n]);
}

void put_fetch(std::string& out, Rng& rng) {
  out += R"({"repository":")";
  out += rng.pick(kRepositories);
  out += R"(","commit":")";
  put_hex(out, rng, 40);
  out += R"(","ref":"refs/heads/)";
  out += rng.chance(700) ? "main" : "release";
  out += "\"}";
}

void put_ask(std::string& out, Rng& rng, std::string_view kind) {
  fmt::format_to(std::back_inserter(out), R"({{"kind":"{}",)", kind);
  if (kind == "check") {
    out += R"("check":{"fetch":)";
    put_fetch(out, rng);
    out += R"(,"levels":[)";
    unsigned n = 1 + static_cast<unsigned>(rng.below(3));
    for (unsigned i = 0; i < n; ++i)
      fmt::format_to(std::back_inserter(out), "{}\"{}\"", i ? "," : "",
                     kLevels[(i * 2 + rng.below(2)) % kLevels.size()]);
    out += "]";
    if (rng.chance(400))
      fmt::format_to(std::back_inserter(out), R"(,"run":"Test{}")", rng.chance(500) ? "Sweep" : "Stale");
    out += "}}";
  } else if (kind == "build") {
    fmt::format_to(std::back_inserter(out), R"("build":{{"module":"{}")", rng.pick(kModules));
    if (rng.chance(850)) {
      out += R"(,"fetch":)";
      put_fetch(out, rng);
    }
    if (rng.chance(800)) {
      out += R"(,"fp":")";
      put_hex(out, rng, 64);
      out += '"';
    }
    out += "}}";
  } else {
    out += R"("compose":{"fetch":)";
    put_fetch(out, rng);
    out += "}}";
  }
}

// Fill up to n bytes of JSON string text (no quotes) that reads like a log.
void put_text(std::string& out, Rng& rng, std::size_t n) {
  std::size_t end = out.size() + n;
  while (out.size() < end) {
    std::size_t left = end - out.size();
    if (rng.chance(60)) {
      std::string_view e = rng.pick(kEscapes);
      if (e.size() <= left) {
        out += e;
        continue;
      }
    }
    std::string_view w = rng.pick(kWords);
    if (w.size() + 1 > left) {
      out.append(left, 'x');
      break;
    }
    out += w;
    out += ' ';
  }
}

// value as the JSON string that holds its bytes: how a JSON line carries a stored value
// that is not JSON (or not only JSON) for `leasejudge step plan`.
std::string quoted(std::string_view value) {
  std::string out = "\"";
  for (char ch : value) {
    auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += ch;
    } else if (c < 0x20) {
      fmt::format_to(std::back_inserter(out), "\\u{:04x}", c);
    } else {
      out += ch;
    }
  }
  out += '"';
  return out;
}

enum class OwnerForm { absent, empty, null, token };
enum class EndedForm { absent, null, zero, time };
enum class StartedForm { time, absent, null };

// One step value as the seed's encoder writes it, with room for edge cases.
struct StepText {
  std::string id, tool;
  std::string_view state = "running";
  OwnerForm owner_form = OwnerForm::absent;
  std::string owner;
  StartedForm started_form = StartedForm::time;
  Instant started{};
  int offset_min = 0;
  EndedForm ended_form = EndedForm::zero;
  Instant ended{};
  std::string_view reason;
  bool result = false;
  std::string_view ask_kind;  // empty: no ask
  // Edges: the state field named "State", or written twice (the last wins).
  bool state_folded = false;
  std::string_view state_first;  // when set, "state" is written first with this value
};

class StateWriter {
 public:
  StateWriter(const StepStateSpec& spec, std::FILE* out, StepStateCounts* counts)
      : spec_(spec), rng_(spec.seed), out_(out), counts_(counts) {
    buf_.reserve(1 << 20);
  }

  bool run() {
    for (std::uint64_t i = 0; i < spec_.keys; ++i) {
      line(i);
      if (buf_.size() >= (1u << 20) && !flush()) return false;
    }
    return flush();
  }

 private:
  const StepStateSpec& spec_;
  Rng rng_;
  std::FILE* out_;
  StepStateCounts* counts_;
  std::string buf_, key_, value_;
  bool no_value_ = false;  // this line's key holds no value

  bool flush() {
    if (!buf_.empty() && std::fwrite(buf_.data(), 1, buf_.size(), out_) != buf_.size()) return false;
    buf_.clear();
    return true;
  }

  std::size_t target_size() { return static_cast<std::size_t>(rng_.between(spec_.min_value, spec_.max_value)); }

  Kind draw() {
    // Drawn only when asked for, so the default states stay as they were.
    if (spec_.edge_pct > 0 && rng_.below(100) < spec_.edge_pct) return Kind::edge;
    if (rng_.below(100) < spec_.other_node_pct) return Kind::other_node;
    unsigned r = static_cast<unsigned>(rng_.below(1000));
    for (const Weight& w : kLocalWeights) {
      if (r < w.w) return w.kind;
      r -= w.w;
    }
    return Kind::finished;
  }

  void local_key(bool ask_id) {
    key_ = spec_.rules.node;
    key_ += '.';
    if (ask_id) {
      put_uuid(key_, rng_, rng_.chance(30));
    } else {
      key_ += rng_.chance(500) ? "h-" : "step-";
      put_hex(key_, rng_, 12);
    }
  }
  std::string id_of_key() const { return key_.substr(key_.find('.') + 1); }

  Instant ago(std::int64_t lo_ns, std::int64_t hi_ns) { return spec_.rules.now.plus_ns(-rng_.between(lo_ns, hi_ns)); }
  int offset() { return rng_.chance(850) ? 0 : static_cast<int>(rng_.pick(std::array<int, 4>{120, 60, -300, 330})); }

  void hand(StepText& s) {
    local_key(false);
    s.id = id_of_key();
    s.tool = rng_.pick(kHandTools);
  }
  void ask(StepText& s) {
    local_key(true);
    s.id = id_of_key();
    s.ask_kind = rng_.pick(kAskKinds);
    s.tool = std::string(s.ask_kind) + " ask";
  }
  // No owner, in each of the forms that mean none.
  void no_owner(StepText& s) {
    unsigned r = static_cast<unsigned>(rng_.below(10));
    s.owner_form = r < 7 ? OwnerForm::absent : r < 9 ? OwnerForm::empty : OwnerForm::null;
  }
  void ended_running(StepText& s) {
    unsigned r = static_cast<unsigned>(rng_.below(20));
    s.ended_form = r < 16 ? EndedForm::zero : r < 18 ? EndedForm::absent : r < 19 ? EndedForm::null : EndedForm::time;
    if (s.ended_form == EndedForm::time) s.ended = s.started.plus_ns(kSecond);  // an end that did not stick
  }

  void line(std::uint64_t i) {
    Kind kind = draw();
    StepText s;
    value_.clear();
    std::int64_t bound = spec_.rules.bound_ms * 1000000;
    std::int64_t since_start = (spec_.rules.now.sec - spec_.rules.before.sec) * kSecond + (spec_.rules.now.nsec - spec_.rules.before.nsec);
    switch (kind) {
      case Kind::other_node: {
        other_node_key();
        // Any value at all: it is never read.
        StepText o;
        o.id = id_of_key();
        o.tool = rng_.pick(kHandTools);
        o.owner_form = OwnerForm::token;
        put_other_owner(o.owner, rng_, spec_.rules.now);
        o.started = ago(kSecond, 30 * 24 * kHour);
        step(o);
        break;
      }
      case Kind::finished: {
        if (rng_.chance(600))
          ask(s);
        else
          hand(s);
        s.state = rng_.chance(750) ? "succeeded" : "failed";
        if (rng_.chance(700)) {
          s.owner_form = OwnerForm::token;
          put_other_owner(s.owner, rng_, spec_.rules.now);
        }
        s.started = ago(kSecond, 30 * 24 * kHour);
        s.offset_min = offset();
        s.ended_form = EndedForm::time;
        s.ended = s.started.plus_ns(rng_.between(kSecond / 10, 2 * kHour));
        if (s.state == "failed")
          s.reason = rng_.chance(500) ? "the build module restarted while it ran" : "exit status 1";
        s.result = rng_.chance(900);
        if (rng_.chance(20)) s.state = "Running";  // not running: case counts in a value
        step(s);
        break;
      }
      case Kind::own: {
        if (rng_.chance(500))
          ask(s);
        else
          hand(s);
        s.owner_form = OwnerForm::token;
        s.owner = spec_.rules.owner;
        s.started = ago(0, 3 * bound);  // an own step is left whatever its age
        s.offset_min = offset();
        ended_running(s);
        step(s);
        break;
      }
      case Kind::other_owner: {
        // A hand-started step of a gone process, and near misses of an ask: a UUID id with
        // a hand tool, an ask tool on an id that is no UUID. All are ended.
        unsigned r = static_cast<unsigned>(rng_.below(100));
        if (r < 90) {
          hand(s);
        } else if (r < 95) {
          local_key(true);
          s.id = id_of_key();
          s.tool = rng_.pick(kHandTools);
        } else {
          local_key(false);
          s.id = id_of_key();
          s.ask_kind = rng_.pick(kAskKinds);
          s.tool = std::string(s.ask_kind) + " ask";
        }
        s.owner_form = OwnerForm::token;
        if (rng_.chance(100)) {
          // This process's boot id and pid with another start: another process.
          s.owner = spec_.rules.owner.substr(0, spec_.rules.owner.rfind('.') + 1) + "zz";
        } else {
          put_other_owner(s.owner, rng_, spec_.rules.now);
        }
        s.started = ago(0, 3 * bound);
        s.offset_min = offset();
        ended_running(s);
        if (rng_.chance(20)) s.state_folded = true;
        step(s);
        break;
      }
      case Kind::other_owner_ask: {
        ask(s);
        s.owner_form = OwnerForm::token;
        put_other_owner(s.owner, rng_, spec_.rules.now);
        s.started = ago(0, 3 * bound);
        s.offset_min = offset();
        ended_running(s);
        if (rng_.chance(20)) s.state_first = "succeeded";  // "state" twice: running wins
        step(s);
        break;
      }
      case Kind::ask_old: {
        ask(s);
        no_owner(s);
        unsigned r = static_cast<unsigned>(rng_.below(100));
        if (r < 2) {
          s.started = spec_.rules.now.plus_ns(-bound - 1);  // one nanosecond past the bound
        } else if (r < 4) {
          s.started_form = rng_.chance(500) ? StartedForm::absent : StartedForm::null;  // Go's zero time
        } else {
          s.started = ago(bound + 1, bound + 48 * kHour);
        }
        s.offset_min = offset();
        ended_running(s);
        step(s);
        break;
      }
      case Kind::ask_young: {
        ask(s);
        no_owner(s);
        s.started = rng_.chance(30) ? spec_.rules.now.plus_ns(-bound) : ago(0, bound - 1);  // exactly at it: left
        s.offset_min = offset();
        ended_running(s);
        step(s);
        break;
      }
      case Kind::hand_before: {
        hand(s);
        no_owner(s);
        unsigned r = static_cast<unsigned>(rng_.below(100));
        if (r < 2) {
          s.started = spec_.rules.before.plus_ns(-1);
        } else if (r < 4) {
          s.started_form = rng_.chance(500) ? StartedForm::absent : StartedForm::null;
        } else {
          s.started = spec_.rules.before.plus_ns(-rng_.between(1, 30 * 24 * kHour));
        }
        s.offset_min = offset();
        ended_running(s);
        if (rng_.chance(20)) s.state_folded = true;
        step(s);
        if (rng_.chance(20)) value_ = quoted(value_);  // the same step, carried as its bytes
        break;
      }
      case Kind::hand_after: {
        hand(s);
        no_owner(s);
        s.started = rng_.chance(30) ? spec_.rules.before : spec_.rules.before.plus_ns(rng_.between(0, since_start));
        s.offset_min = offset();
        ended_running(s);
        step(s);
        break;
      }
      case Kind::no_step:
        no_step();
        break;
      case Kind::edge:
        edge();
        break;
    }
    std::uint64_t revision = 1000 + i * 3 + rng_.below(3);
    if (no_value_) {
      fmt::format_to(std::back_inserter(buf_), R"({{"key":"{}","revision":{}}})", key_, revision);
      no_value_ = false;
    } else {
      fmt::format_to(std::back_inserter(buf_), R"({{"key":"{}","revision":{},"value":{}}})", key_, revision, value_);
    }
    buf_.push_back('\n');
    if (counts_ != nullptr) count(kind);
  }

  void count(Kind kind) {
    StepStateCounts& c = *counts_;
    ++c.keys;
    c.value_bytes += value_.size();
    switch (kind) {
      case Kind::other_node:
        ++c.other_node;
        break;
      case Kind::finished:
        ++c.finished;
        break;
      case Kind::own:
        ++c.own;
        break;
      case Kind::other_owner:
        ++c.other_owner;
        break;
      case Kind::other_owner_ask:
        ++c.other_owner_ask;
        break;
      case Kind::ask_old:
        ++c.ask_old;
        break;
      case Kind::ask_young:
        ++c.ask_young;
        break;
      case Kind::hand_before:
        ++c.hand_before;
        break;
      case Kind::hand_after:
        ++c.hand_after;
        break;
      case Kind::no_step:
        ++c.no_step;
        break;
      case Kind::edge:
        ++c.edge;
        break;
    }
  }

  void other_node_key() {
    unsigned r = static_cast<unsigned>(rng_.below(100));
    if (r < 3) {
      key_ = "nodot-";  // no node at all
      put_hex(key_, rng_, 12);
      return;
    }
    if (r < 5) {
      key_ = ".";  // an empty node
      put_uuid(key_, rng_, false);
      return;
    }
    // Names that share this node's prefix are other nodes all the same.
    static constexpr std::array<std::string_view, 3> near{"-old", "1", "-canary"};
    if (r < 15) {
      key_ = spec_.rules.node;
      key_ += rng_.pick(near);
    } else {
      std::uint32_t others = spec_.nodes > 1 ? spec_.nodes - 1 : 1;
      key_ = fmt::format("build-node-{}", 2 + rng_.below(others));
    }
    key_ += '.';
    put_uuid(key_, rng_, false);
  }

  // Where Go's encoding/json is easy to get wrong: field names folded as Go folds them
  // (ASCII case, the long s and the Kelvin sign), escaped names, repeated fields, numbers a
  // float64 cannot hold, nesting at Go's limit, lone surrogates, white space, and bytes
  // that are no JSON at all. Each would be ended if it were a step (running, no owner,
  // hand-started long before this process), so reading one wrongly changes its decision.
  void edge() {
    local_key(false);
    std::string id = id_of_key();
    std::string started;
    put_time(started, ago(2 * kHour, 30 * 24 * kHour), 0);
    struct Shape {
      bool stored_bytes;  // carried as a JSON string: not JSON, or deeper than a reader of the lines takes
      std::string_view text;
    };
    static constexpr std::string_view H = R"("id":"%I","tool":"build_go_module",)";
    static constexpr std::array<Shape, 40> shapes{{
        {false, R"({%H"\u017ftate":"running","started":%S})"},
        {false, "{%H\"\xC5\xBFtate\":\"running\",\"started\":%S}"},
        {false, R"({%H"\u0073tate":"running","started":%S})"},
        {false, R"({%H"STATE":"running","started":%S})"},
        {false, R"({%H"sTaTe":"running","Started":%S})"},
        {false, R"({%H"state":"running","started":%S,"as\u212a":5})"},
        {false, "{%H\"state\":\"running\",\"started\":%S,\"as\xE2\x84\xAA\":5}"},
        {false, R"({%H"state":"running","started":%S,"asK":5})"},
        {false, R"({%H"state":"running","started":%S,"ask\u212a":5})"},
        {false, R"({%H"state":"running","state":"failed","started":%S})"},
        {false, R"({%H"state":"failed","state":"running","started":%S})"},
        {false, R"({%H"state":"running","owner":"gone.1.a","owner":"","started":%S})"},
        {false, R"({%H"state":"running","owner":"","OWNER":"gone.1.a","started":%S})"},
        {false, R"({%H"state":"running","owner":null,"started":%S})"},
        {false, R"({%H"state":"running","started":"2024-05-01T00:00:00.123456789123Z"})"},
        {false, R"({%H"state":"running","started":"2024-05-01T02:00:00+02:00"})"},
        {false, R"({%H"state":"running","started":"2024-06-01T11:49:59.999999999Z"})"},
        {false, R"({%H"state":"running","started":"2024-06-01T13:50:00+02:00"})"},
        {false, R"({%H"state":"running","started":%S,"ask":{"kind":"check","check":{"fetch":{"n":1e400}}}})"},
        {false, R"({%H"state":"running","started":%S,"ask":{"kind":"check","check":{"fetch":{"n":1e-400}}}})"},
        {false,
         R"({%H"state":"running","started":%S,"ask":{"kind":"build","build":{"fetch":{"n":[1,{"m":-1.5E+308}]}}}})"},
        {false, R"({%H"state":"running","started":%S,"result":{"x":1e999}})"},
        {false, R"({%H"state":"runn\u0069ng","started":%S})"},
        {false, R"({%H"state":"running\u0000","started":%S})"},
        {false, R"({%H"state":"running","started":%S,"ask":{"kind":"check","check":{"levels":[null,"unit"]}}})"},
        {false, R"({%H"state":"running","started":%S,"ask":{"kind":null,"check":null,"build":null}})"},
        {false, R"({%H"state":"running","started":%S,"ask":null,"ask":{"kind":7}})"},
        {false, R"({%H"state":"running","started":%S,"ask":{"kind":7},"ask":null})"},
        {false, R"({%H"state":"running","started":%S,"Ask":{"Kind":"check","CHECK":{"Levels":["x"],"Run":"y"}}})"},
        {false, R"({%H"state":"running","started":%S,"x":-0.0e+00,"y":[true,false,null,{}],"z":"\ud83d\ude00"})"},
        {false, R"({%H"state":"running","started":%S,"z":"\ud800","w":"\udc00\ud800x"})"},
        {false, R"({%H"state":"running","started":%S,"ask":{"kind":"check","check":{"levels":["\ud800"]}}})"},
        {true, "{%H\"state\":\"running\",\"started\":%S,\"x\":01}"},
        {true, "{%H\"state\":\"running\",\"started\":%S,\"x\":1.}"},
        {true, "{%H\"state\":\"running\",\"started\":%S,\"x\":[1,]}"},
        {true, "{%H\"state\":\"running\",\"started\":%S,\"x\":\"a\\qb\"}"},
        {true, "{%H\"state\":\"running\",\"started\":%S,\"x\":\"a\x01b\"}"},
        {true, " \t{%H \"state\" :\r\n\"running\" , \"started\" : %S }\n "},
        {true, "{%H\"state\":\"running\",\"started\":%S,\"x\":%D9999}"},
        {true, "{%H\"state\":\"running\",\"started\":%S,\"x\":%D10000}"},
    }};
    const Shape& shape = rng_.pick(shapes);
    std::string_view t = shape.text;
    for (std::size_t p = 0; p < t.size(); ++p) {
      if (t[p] != '%' || p + 1 >= t.size()) {
        value_.push_back(t[p]);
        continue;
      }
      char c = t[++p];
      if (c == 'I') {
        value_ += id;
      } else if (c == 'S') {
        value_ += started;
      } else if (c == 'H') {
        std::string h(H);
        value_ += h.replace(h.find("%I"), 2, id);
      } else if (c == 'D') {  // nested arrays, as deep as the number that follows
        std::size_t end = p + 1;
        while (end < t.size() && t[end] >= '0' && t[end] <= '9') ++end;
        std::size_t depth = std::stoul(std::string(t.substr(p + 1, end - p - 1)));
        value_.append(depth, '[');
        value_.append(depth, ']');
        p = end - 1;
      }
    }
    if (shape.stored_bytes) value_ = quoted(value_);
  }

  // A value that is no step. Most say "state":"running" with no owner, so a decoder that
  // skipped the type check would end them.
  void no_step() {
    local_key(rng_.chance(500));
    std::string id = id_of_key();
    std::string ask;
    put_ask(ask, rng_, "check");
    std::string started;
    put_time(started, ago(2 * kHour, 30 * 24 * kHour), 0);
    static constexpr std::array<std::string_view, 24> shapes{
        R"({"id":"%I","tool":"build_go_module","state":"running","started":1717243200,"ended":"0001-01-01T00:00:00Z"})",
        R"({"id":"%I","tool":"build_go_module","state":1,"started":%S,"ended":"0001-01-01T00:00:00Z"})",
        R"({"id":"%I","tool":"build_go_module","state":"running","owner":{"boot":"x","pid":12},"started":%S})",
        R"({"id":"%I","tool":"check ask","state":"running","started":%S,"ask":{"kind":"check","check":{"levels":"unit"}}})",
        R"({"id":"%I","tool":"build ask","state":"running","started":%S,"ask":{"kind":"build","build":{"module":"m","fetch":["x"]}}})",
        R"({"id":42,"tool":"build_go_module","state":"running","started":%S})",
        R"(["running"])",
        R"("running")",
        R"(42)",
        R"({"id":"%I","tool":"build_go_module","state":"running","started":"yesterday"})",
        R"({"id":"%I","tool":"build_go_module","state":"running","started":"2024-13-01T00:00:00Z"})",
        R"({"id":"%I","tool":"build_go_module","state":"running","started":"2024-06-01 12:00:00Z"})",
        R"({"id":"%I","tool":"build_go_module","state":"running","started":%S,"reason":7})",
        R"({"id":"%I","tool":"check ask","state":"running","started":%S,"ask":["check"]})",
        R"({"id":"%I","tool":true,"state":"running","started":%S})",
        R"({"id":"%I","tool":"build_go_module","state":"running","started":%S,"ended":0})",
        R"({"id":"%I","tool":"check ask","state":"running","started":%S,"ask":{"kind":3}})",
        R"({"id":"%I","tool":"check ask","state":"running","started":%S,"ask":{"kind":"check","check":{"levels":[1,2]}}})",
        R"({"id":"%I","tool":"check ask","state":"running","started":%S,"ask":{"kind":"check","check":{"run":false}}})",
        R"({"id":"%I","tool":"build ask","state":"running","started":%S,"ask":{"kind":"build","build":{"fp":123}}})",
        R"({"id":"%I","tool":"build_go_module","state":"running","started":[%S]})",
        R"({"id":"%I","tool":"build_go_module","state":["running"],"started":%S})",
        R"({"id":"%I","tool":"build_go_module","state":"running","owner":5,"started":%S})",
        R"({"id":"%I","tool":"compose ask","state":"running","started":%S,"ask":{"kind":"compose","compose":{"fetch":"x"}},"result":%A})",
    };
    unsigned r = static_cast<unsigned>(rng_.below(100));
    if (r < 3) {
      no_value_ = true;  // the key holds no value
      return;
    }
    if (r < 15) {
      // Stored bytes that are no single JSON value, though they begin with a step that
      // would be ended: trailing bytes, a second value, a byte-order mark.
      std::string step_text = fmt::format(
          R"({{"id":"{}","tool":"build_go_module","state":"running","started":{},"ended":"0001-01-01T00:00:00Z"}})", id,
          started);
      struct Wrap {
        std::string_view before, after;
      };
      static constexpr std::array<Wrap, 4> wraps{{{"", " x"}, {"", "{}"}, {"\xEF\xBB\xBF", ""}, {"", "\n]"}}};
      const Wrap& w = rng_.pick(wraps);
      std::string raw = std::string(w.before) + step_text + std::string(w.after);
      value_ = quoted(raw);
      return;
    }
    std::string_view shape = rng_.pick(shapes);
    for (std::size_t p = 0; p < shape.size(); ++p) {
      if (shape[p] == '%' && p + 1 < shape.size()) {
        char c = shape[++p];
        value_ += c == 'I' ? std::string_view(id) : c == 'S' ? std::string_view(started) : std::string_view(ask);
      } else {
        value_.push_back(shape[p]);
      }
    }
    // Make it as large as a real value: an unknown field the type check never excuses.
    std::size_t target = target_size();
    if (value_.front() == '{' && value_.size() + 12 < target) {
      value_.pop_back();
      value_ += R"(,"note":")";
      put_text(value_, rng_, target - value_.size() - 2);
      value_ += "\"}";
    }
  }

  void step(const StepText& s) {
    std::size_t target = target_size();
    std::string& v = value_;
    auto out = std::back_inserter(v);
    v += '{';
    if (!s.state_first.empty()) fmt::format_to(out, R"("state":"{}",)", s.state_first);
    fmt::format_to(out, R"("id":"{}","tool":"{}",)", s.id, s.tool);
    fmt::format_to(out, R"("{}":"{}")", s.state_folded ? "State" : "state", s.state);
    switch (s.owner_form) {
      case OwnerForm::absent:
        break;
      case OwnerForm::empty:
        v += R"(,"owner":"")";
        break;
      case OwnerForm::null:
        v += R"(,"owner":null)";
        break;
      case OwnerForm::token:
        fmt::format_to(out, R"(,"owner":"{}")", s.owner);
        break;
    }
    switch (s.started_form) {
      case StartedForm::absent:
        break;
      case StartedForm::null:
        v += R"(,"started":null)";
        break;
      case StartedForm::time:
        v += R"(,"started":)";
        put_time(v, s.started, s.offset_min);
        break;
    }
    switch (s.ended_form) {
      case EndedForm::absent:
        break;
      case EndedForm::null:
        v += R"(,"ended":null)";
        break;
      case EndedForm::zero:
        v += R"(,"ended":"0001-01-01T00:00:00Z")";
        break;
      case EndedForm::time:
        v += R"(,"ended":)";
        put_time(v, s.ended, 0);
        break;
    }
    if (!s.reason.empty()) fmt::format_to(out, R"(,"reason":"{}")", s.reason);
    // Where the rest of the value's size goes: a result's log, or a progress note.
    std::string tail;
    if (!s.ask_kind.empty()) {
      tail += R"(,"ask":)";
      put_ask(tail, rng_, s.ask_kind);
    }
    fmt::format_to(std::back_inserter(tail), R"(,"attempt":{},"node":"{}"}})", 1 + rng_.below(3), spec_.rules.node);
    if (s.result) {
      fmt::format_to(out, R"(,"result":{{"passed":{},"failed":{},"duration_ms":{},"coverage":{}.{},"artifacts":[)",
                     rng_.below(400), s.state == "failed" ? 1 + rng_.below(5) : 0, rng_.below(900000), rng_.below(100),
                     rng_.below(10));
      unsigned n = static_cast<unsigned>(rng_.below(3));
      for (unsigned i = 0; i < n; ++i) {
        fmt::format_to(out, R"({}"gs://novox-artifacts/{}/)", i ? "," : "", s.id);
        put_hex(v, rng_, 16);
        v += ".tar.zst\"";
      }
      v += R"(],"ok":)";
      v += s.state == "failed" ? "false" : "true";
      v += R"(,"log":")";
      std::size_t used = v.size() + tail.size() + 2;
      if (used < target) put_text(v, rng_, target - used);
      v += "\"}";
    } else {
      v += R"(,"progress":")";
      std::size_t used = v.size() + tail.size() + 1;
      if (used < target) put_text(v, rng_, target - used);
      v += '"';
    }
    v += tail;
  }
};

}  // namespace

bool write_step_state(const StepStateSpec& spec, std::FILE* out, StepStateCounts* counts) {
  StateWriter w(spec, out, counts);
  return w.run();
}

}  // namespace leasejudge::bench
