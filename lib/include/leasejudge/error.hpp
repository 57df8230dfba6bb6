// leasejudge errors: expected failures are values, never exceptions.
//
// Errc numbers are the C ABI's LJ_E* codes (capi/include/leasejudge.h) and never
// change meaning. A verdict (held, unknown) is not an error: only a failure to do
// what was asked is.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <variant>

namespace leasejudge {

enum class Errc : int {
  ok = 0,
  invalid_argument = -1,  // a NULL pointer, an empty name, an option out of range
  no_memory = -2,
  parse = -3,        // bytes that are not what the format says
  changed = -4,      // a compare-and-swap lost: the key moved since it was read
  not_found = -5,    // no such key, pid, file or executable
  io = -6,           // a system call or a child process failed
  version = -7,      // an options struct of an unknown version
  user = -8,         // a caller's callback asked to stop
  timeout = -9,      // a child process or a lock did not answer in time
  unsupported = -10, // the platform or the build lacks what is needed
  exists = -11,      // create-if-absent found the key
  refused = -12,     // a rule refuses the action (EndOne on a live step, ...)
  store = -13,       // the store failed (server down, bucket missing)
  busy = -14,        // a live holder keeps the lock
  internal = -15,    // a bug: an exception escaped where none should
  unknown_outcome = -16,  // a write was sent and no answer came: it may have landed
};

// The lowest code: every code lies in [lowest_errc, 0].
inline constexpr Errc lowest_errc = Errc::unknown_outcome;

// A stable, short English name for the code ("changed", "not found", ...).
const char* errc_message(Errc code) noexcept;

struct Error {
  Errc code = Errc::internal;
  std::string message;  // a sentence naming what failed and on which input
};

// Result<T>: either a T or an Error. Small on purpose: std::expected is C++23.
template <typename T>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}           // NOLINT: implicit by design
  Result(Error error) : v_(std::move(error)) {}        // NOLINT
  Result(Errc code, std::string message) : v_(Error{code, std::move(message)}) {}

  bool ok() const noexcept { return v_.index() == 0; }
  explicit operator bool() const noexcept { return ok(); }
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T* operator->() { return &std::get<0>(v_); }
  const T* operator->() const { return &std::get<0>(v_); }
  T& operator*() & { return std::get<0>(v_); }
  const T& operator*() const& { return std::get<0>(v_); }
  const Error& error() const& { return std::get<1>(v_); }
  Error&& error() && { return std::get<1>(std::move(v_)); }
  Errc code() const noexcept { return ok() ? Errc::ok : std::get<1>(v_).code; }

 private:
  std::variant<T, Error> v_;
};

// Status: a Result with nothing to carry.
class Status {
 public:
  Status() = default;
  Status(Error error) : error_(std::move(error)), ok_(false) {}  // NOLINT
  Status(Errc code, std::string message) : error_{code, std::move(message)}, ok_(false) {}
  static Status success() { return Status(); }

  bool ok() const noexcept { return ok_; }
  explicit operator bool() const noexcept { return ok_; }
  Errc code() const noexcept { return ok_ ? Errc::ok : error_.code; }
  const Error& error() const noexcept { return error_; }

 private:
  Error error_{Errc::ok, {}};
  bool ok_ = true;
};

}  // namespace leasejudge
