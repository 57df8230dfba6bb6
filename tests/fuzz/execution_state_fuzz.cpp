// The execution-state parser on any gcloud output. Properties: a failed call is
// never running or finished; not found has no detail; a successful call is never
// "not found"; running has no detail; every detail is UTF-8 without NUL and within
// its cap; the same output always gives the same answer.
#include <cstring>

#include "fuzz.hpp"
#include "leasejudge/lock.hpp"

namespace {
// The cap (4096 bytes of the source, each byte at most 3 bytes once replaced) and
// its " [cut: N more bytes]" mark.
constexpr std::size_t detail_bound = 3 * 4096 + 40;
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::Input in(data, size);
  const std::uint8_t mode = in.byte();
  int exit_code = 0;
  if (mode & 1) exit_code = in.i32();
  if (mode & 2) exit_code = 1;
  std::string_view err_text = (mode & 4) ? in.medium() : in.small();
  std::string_view out_text = in.rest();

  lj_execution_kind_t kind;
  char* detail = nullptr;
  size_t len = 0;
  lj_error_t* err = nullptr;
  int rc = lj_execution_state_parse(&kind, &detail, &len, exit_code, out_text.data(), out_text.size(), err_text.data(),
                                    err_text.size(), &err);
  fuzz::check_error(err, rc);
  FUZZ_CHECK(rc == LJ_OK);
  FUZZ_CHECK(fuzz::c_text(detail, len));
  FUZZ_CHECK(len <= detail_bound);
  const int k = kind;
  FUZZ_CHECK(k >= LJ_EXECUTION_RUNNING && k <= LJ_EXECUTION_UNKNOWN);
  if (exit_code != 0) {
    FUZZ_CHECK(k == LJ_EXECUTION_NOT_FOUND || k == LJ_EXECUTION_UNKNOWN);
    FUZZ_CHECK(k != LJ_EXECUTION_UNKNOWN || len > 0);
  } else {
    FUZZ_CHECK(k != LJ_EXECUTION_NOT_FOUND);
  }
  if (k == LJ_EXECUTION_NOT_FOUND || k == LJ_EXECUTION_RUNNING) FUZZ_CHECK(len == 0);
  if (k == LJ_EXECUTION_FINISHED) FUZZ_CHECK(len > 0 || out_text.find("\"\"") != std::string_view::npos);

  lj_execution_kind_t again;
  char* detail2 = nullptr;
  size_t len2 = 0;
  FUZZ_CHECK(lj_execution_state_parse(&again, &detail2, &len2, exit_code, out_text.data(), out_text.size(),
                                      err_text.data(), err_text.size(), nullptr) == LJ_OK);
  FUZZ_CHECK(again == kind && len2 == len && std::memcmp(detail, detail2, len) == 0);
  lj_free(detail);
  lj_free(detail2);
  return 0;
}
