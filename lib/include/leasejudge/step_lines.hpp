// The JSON lines of `leasejudge step plan`: a steps state as one line per key,
//   {"key":"<node>.<id>","revision":N,"value":<the stored value>}
// and the plan's answer, one line per line read, in order:
//   {"key":"..","action":"end"|"delete"|"leave","reason":"<reason code>","why":".."}
//   {"key":null,"action":"leave","reason":"malformed","why":"<what is wrong>","malformed":"<the same>"}
// (why: the seed's for an end or a delete, step_leave_why for a leave)
//
// The value is the stored JSON itself, or a JSON string holding the stored bytes (for
// values that are not JSON); a line without one is a key that holds none. revision is
// optional (null: 0). A line is one JSON object as Go's scanner reads it, its names
// matched exactly (escapes undone), the last repeat winning, unknown names skipped.
// A line that is no entry gets a malformed answer, with its key when the line is JSON
// and its key came before the field that is wrong; blank lines get none. Answers are
// written as json.Marshal writes strings.
//
// A line is indexed once (simdjson's stage 1; StepLinesPlan indexes many lines at once)
// and its envelope and its value are read from that one index. StepLinesPlan plans
// lines as they come, in chunks cut anywhere, holding one chunk, the longest line and
// one chunk of answers at a time: a state larger than memory plans in bounded memory.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "leasejudge/step.hpp"
#include "leasejudge/store.hpp"
#include "leasejudge/sweep.hpp"

namespace leasejudge {

// One line read.
struct StepLine {
  const char* malformed = nullptr;  // what makes the line no entry; nullptr for an entry
  bool has_key = false;             // (also for a malformed line, when read before)
  std::string_view key;             // decoded (escapes undone, invalid UTF-8 as U+FFFD)
  std::string_view value;           // the stored bytes; empty: the key holds none
  Revision revision = 0;
  // read_planned only: the value as StepCodec::read reads it, when `read` (a value
  // carried as a string of its bytes is left for the caller to read).
  bool read = false;
  StepShape shape = StepShape::no_step;
  // read_planned only: whether the key was checked against the node when the value was
  // read (a key given before its value, and none after it), and what the check found.
  bool key_checked = false;
  bool of_node = false;
};

// Reads lines. Keeps its buffers between reads: one per thread, reused.
class StepLineReader {
 public:
  StepLineReader();
  ~StepLineReader();
  StepLineReader(StepLineReader&&) noexcept;
  StepLineReader& operator=(StepLineReader&&) noexcept;
  StepLineReader(const StepLineReader&) = delete;
  StepLineReader& operator=(const StepLineReader&) = delete;

  // Read one line (without its newline; white space around it is fine). The views
  // point into line or into the reader, valid until the next read.
  const StepLine& read(std::string_view line);
  // The same, and the value read as a step by codec from the line's own index (view
  // filled for a step, valid until codec's next read), unless the line's key is known,
  // before its value, to be none of `node`'s.
  const StepLine& read_planned(std::string_view line, StepCodec& codec, StepView& view, std::string_view node);

 private:
  friend class StepLinesPlan;  // reads lines it indexed many at a time
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// A state's line for a key: {"key":..,"revision":N,"value":..}, the value as it is
// when it is one JSON value on one line (no line break, no white space around it, not
// a string), else a JSON string of its bytes; no value when it is empty. What StepLineReader
// reads back as the same key, revision and bytes, but for bytes that are no UTF-8
// (written as U+FFFD: false says so).
bool append_step_line(std::string& out, std::string_view key, Revision revision, std::string_view value);

// The answer line of a key and its verdict, appended to out.
void append_step_plan_line(std::string& out, std::string_view key, const StepVerdict& verdict);
// The answer line of a malformed line.
void append_step_malformed_line(std::string& out, const StepLine& line);

// What a plan of lines counted: plan.end + ... + plan.other_node entries, and the lines
// that were no entry.
struct StepLinesSummary {
  BatchSummary plan;
  std::uint64_t malformed = 0;
};

// Plans lines as they come. With threads > 1, a piece of input large enough (64 KiB of
// lines a thread) is cut at newlines and its parts planned at once, on threads the plan
// keeps (made when first needed; where none can be made, fewer); the answers are the
// same, in input order. rules.judge is then called from each of them at once. One
// caller at a time.
class StepLinesPlan {
 public:
  static constexpr unsigned max_threads = 64;  // more are taken as this many
  explicit StepLinesPlan(StepRules rules, unsigned threads = 1);
  ~StepLinesPlan();
  StepLinesPlan(StepLinesPlan&&) noexcept;
  StepLinesPlan& operator=(StepLinesPlan&&) noexcept;

  // Plan every line input completes (with what earlier calls left of a line), its
  // answers appended to out; the rest of a line cut short is kept for the next call.
  void feed(std::string_view input, std::string& out);
  // Plan what is left: the last line, when the input did not end with a newline.
  void finish(std::string& out);
  // What was planned so far, over every thread (also when a feed threw).
  StepLinesSummary summary() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The plan of the lines of text, over `threads` threads (a StepLinesPlan fed 256 KiB a
// thread at a time): the answers in input order. rules.judge may be called from every
// thread at once.
std::string plan_step_lines(std::string_view text, const StepRules& rules, unsigned threads,
                            StepLinesSummary& summary);
// The same, the answers handed to emit in input order as they are made, those of 256
// KiB of input a thread at a time, so that a caller puts them where it wants them
// without holding them twice.
void plan_step_lines(std::string_view text, const StepRules& rules, unsigned threads, StepLinesSummary& summary,
                     const std::function<void(std::string_view answers)>& emit);

// Plan the lines read from in_fd until its end, the answers written to out_fd as they
// come: at most one chunk of input (512 KiB), the longest line and one chunk of answers
// are held. stop (optional) is looked at between chunks: true ends the plan (ok). The
// summary is plan's. Errc::io when a read or a write fails (what was answered before
// stays written).
Status plan_step_lines_fd(StepLinesPlan& plan, int in_fd, int out_fd, const std::atomic<bool>* stop = nullptr);

}  // namespace leasejudge
