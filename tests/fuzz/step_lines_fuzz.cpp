// The JSON lines of `leasejudge step plan` over threads, on any bytes: the input's
// lines (whatever they hold: entries, broken lines, bytes that are no UTF-8, blank
// lines, a last line with no newline) copied over and over past 200 KiB, so that each
// piece of them is cut into parts at lines the copies put anywhere. Properties: planned
// in memory over one thread and over three, and fed in pieces of the input's choosing
// to a plan over two, every way gives the same bytes and the same counts; the answer
// is UTF-8 without NUL, one line per line that is not blank. An input plans some
// 600 KiB: tens of runs a second under the sanitizers.
#include <algorithm>
#include <string>
#include <string_view>

#include "fuzz.hpp"

namespace {

struct Plan {
  std::string answer;
  lj_step_plan_summary_t summary{};
};

bool same(const lj_step_plan_summary_t& a, const lj_step_plan_summary_t& b) {
  return a.ends == b.ends && a.deletes == b.deletes && a.leaves == b.leaves && a.no_step == b.no_step &&
         a.other_node == b.other_node && a.malformed == b.malformed;
}

Plan in_memory(std::string_view text, lj_step_plan_options_t o, std::uint32_t threads) {
  o.threads = threads;
  Plan p;
  char* out = nullptr;
  size_t len = 0;
  lj_error_t* err = nullptr;
  int rc = lj_step_plan_lines(&out, &len, &p.summary, text.data(), text.size(), &o, &err);
  fuzz::check_error(err, rc);
  FUZZ_CHECK(rc == LJ_OK);
  FUZZ_CHECK(fuzz::c_text(out, len));
  p.answer.assign(out, len);
  lj_free(out);
  return p;
}

int gather(const char* data, size_t len, void* payload) {
  static_cast<std::string*>(payload)->append(data, len);
  return 0;
}

Plan fed(std::string_view text, lj_step_plan_options_t o, std::size_t piece) {
  o.threads = 2;
  Plan p;
  lj_step_lines_plan_t* plan = nullptr;
  FUZZ_CHECK(lj_step_lines_plan_create(&plan, &o, nullptr) == LJ_OK);
  for (std::size_t at = 0; at < text.size(); at += piece)
    FUZZ_CHECK(lj_step_lines_plan_feed(plan, text.data() + at, std::min(piece, text.size() - at), gather, &p.answer,
                                       nullptr) == LJ_OK);
  FUZZ_CHECK(lj_step_lines_plan_finish(&p.summary, plan, gather, &p.answer, nullptr) == LJ_OK);
  lj_step_lines_plan_destroy(plan);
  return p;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::Input in(data, size);
  // A piece of 4 KiB to 1 MiB for the fed plan, then the lines.
  const std::size_t piece = (std::size_t{1} + in.byte()) << 12;
  std::string_view lines = in.rest();
  if (lines.empty()) return 0;
  std::string text;
  while (text.size() < (std::size_t{200} << 10)) {
    text += lines;
    text += '\n';
  }
  text += lines;  // the last copy's last line may end without a newline
  const lj_step_plan_options_t o = fuzz::step_plan_options();
  const Plan one = in_memory(text, o, 1);
  const Plan three = in_memory(text, o, 3);
  FUZZ_CHECK(three.answer == one.answer);
  FUZZ_CHECK(same(three.summary, one.summary));
  const Plan pieces = fed(text, o, piece);
  FUZZ_CHECK(pieces.answer == one.answer);
  FUZZ_CHECK(same(pieces.summary, one.summary));
  // One answer a line that is not blank (a line is blank when it holds only white space).
  std::size_t answered = 0;
  for (char c : one.answer) answered += c == '\n';
  std::size_t not_blank = 0;
  std::size_t at = 0;
  while (at <= text.size()) {
    std::size_t nl = text.find('\n', at);
    if (nl == std::string::npos) nl = text.size();
    std::string_view line(text.data() + at, nl - at);
    not_blank += line.find_first_not_of(" \t\r") != std::string_view::npos;
    at = nl + 1;
  }
  FUZZ_CHECK(answered == not_blank);
  return 0;
}
