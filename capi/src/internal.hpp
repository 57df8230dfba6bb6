// What every C ABI source shares: the error object, copying results out, and the
// guard that keeps exceptions from crossing into C. Private to capi/.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>
#include <string>
#include <string_view>

#include "leasejudge.h"
#include "leasejudge/error.hpp"
#include "leasejudge/text.hpp"

struct lj_error_t {
  int code;
  std::string message;
};

namespace leasejudge::capi {

// Set *err (when err is not NULL) and return code. The message is text.hpp's
// c_text: it quotes arguments, which may hold any byte.
inline int fail(lj_error_t** err, int code, std::string_view message) noexcept {
  if (err != nullptr) {
    *err = nullptr;
    try {
      *err = new lj_error_t{code, c_text(message)};
    } catch (...) {
      // Out of memory while reporting: the code alone still says what failed.
    }
  }
  return code;
}
inline int fail(lj_error_t** err, const Error& e) noexcept {
  return fail(err, static_cast<int>(e.code), e.message);
}

// Clear *err at the start of a call, so a caller never frees a stale pointer.
inline void reset(lj_error_t** err) noexcept {
  if (err != nullptr) *err = nullptr;
}

// A malloc'ed NUL-terminated copy of s, for lj_free. nullptr when out of memory.
inline char* dup_out(std::string_view s) noexcept {
  char* p = static_cast<char*>(std::malloc(s.size() + 1));
  if (p == nullptr) return nullptr;
  if (!s.empty()) std::memcpy(p, s.data(), s.size());
  p[s.size()] = '\0';
  return p;
}

// Copy s to (*out, *out_len); LJ_ENOMEM on failure. out_len may be NULL.
inline int give(char** out, size_t* out_len, std::string_view s, lj_error_t** err) noexcept {
  char* p = dup_out(s);
  if (p == nullptr) return fail(err, LJ_ENOMEM, "out of memory");
  *out = p;
  if (out_len != nullptr) *out_len = s.size();
  return LJ_OK;
}

// Text built where the caller frees it (lj_free), grown by realloc. realloc moves a
// block malloc mapped on its own by moving its pages, but copies one from the heap (and
// the heap keeps the old one's pages): once a freed large block has raised glibc's
// mapping threshold (up to 32 MiB), a long answer grown from small would be held about
// twice over. reserve() what the text will likely need at once: a block of that size
// is mapped (or heap beyond what was touched), and its pages count only once written.
class MallocText {
 public:
  MallocText() = default;
  MallocText(const MallocText&) = delete;
  MallocText& operator=(const MallocText&) = delete;
  ~MallocText() { std::free(p_); }
  // Room for bytes, if memory can be had now: a guess, so none is no failure (append
  // grows as it needs).
  void reserve(std::size_t bytes) noexcept {
    if (bytes >= cap_) {
      if (char* grown = static_cast<char*>(std::realloc(p_, bytes + 1)); grown != nullptr) {
        p_ = grown;
        cap_ = bytes + 1;
        huge_asked_ = false;
      }
    }
  }
  // Throws std::bad_alloc when memory runs out.
  void append(std::string_view s) {
    if (s.size() >= cap_ - size_)
      grow(std::max<std::size_t>({cap_ * 2, size_ + s.size() + 1, 4096}));  // room for the NUL stays
    if (size_ + s.size() > resident_) make_resident(size_ + s.size());
    if (!s.empty()) std::memcpy(p_ + size_, s.data(), s.size());
    size_ += s.size();
  }
  // Hand the text, NUL-terminated, to (*out, *out_len).
  int give(char** out, size_t* out_len, lj_error_t** err) noexcept {
    if (p_ == nullptr) return leasejudge::capi::give(out, out_len, std::string_view(), err);
    p_[size_] = '\0';
    if (char* fitted = static_cast<char*>(std::realloc(p_, size_ + 1)); fitted != nullptr) p_ = fitted;
    *out = p_;
    if (out_len != nullptr) *out_len = size_;
    p_ = nullptr;
    size_ = cap_ = resident_ = 0;
    return LJ_OK;
  }

 private:
  void grow(std::size_t want) {
    char* grown = static_cast<char*>(std::realloc(p_, want));
    if (grown == nullptr) throw std::bad_alloc();
    p_ = grown;
    cap_ = want;
    huge_asked_ = false;
    resident_ = size_;  // what was copied
  }
  // The pages up to a window past upto made resident in one call, where the kernel takes
  // MADV_POPULATE_WRITE, rather than one fault each as the text first touches them: a
  // fault costs the more where the kernel runs virtualized, and a text of answers is
  // megabytes. Only a window ahead of what is written: the resident size follows the
  // text's. Where the advice is refused, pages fault in as they would.
  void make_resident(std::size_t upto) noexcept {
    resident_ = std::min(cap_, upto + populate_window);
#if defined(MADV_POPULATE_WRITE)
    if (!populate_) return;
    static const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
    // A text of megabytes in huge pages where the kernel gives them on advice (THP
    // "madvise"): a fault, or a populate, then makes 2 MiB resident at once. The text
    // grows by at most one huge page past what is written.
    if (!huge_asked_ && cap_ >= huge_from) {
      huge_asked_ = true;
      constexpr std::uintptr_t huge = std::uintptr_t{2} << 20;
      const auto hb = (reinterpret_cast<std::uintptr_t>(p_) + huge - 1) & ~(huge - 1);
      const auto he = reinterpret_cast<std::uintptr_t>(p_ + cap_) & ~(huge - 1);
      if (he > hb) ::madvise(reinterpret_cast<void*>(hb), he - hb, MADV_HUGEPAGE);  // a hint: refused, nothing changes
    }
    const auto from = (reinterpret_cast<std::uintptr_t>(p_ + size_) + page - 1) & ~(page - 1);
    const auto to = reinterpret_cast<std::uintptr_t>(p_ + resident_) & ~(page - 1);
    if (to > from && ::madvise(reinterpret_cast<void*>(from), to - from, MADV_POPULATE_WRITE) != 0) populate_ = false;
#endif
  }
  static constexpr std::size_t populate_window = 64 << 10;
  static constexpr std::size_t huge_from = std::size_t{8} << 20;

  char* p_ = nullptr;
  std::size_t size_ = 0, cap_ = 0;
  std::size_t resident_ = 0;  // the bytes made resident (or, where the advice is refused, passed over)
  bool populate_ = true;
  bool huge_asked_ = false;
};

// Copy text quoted from input out as text.hpp's c_text makes it (UTF-8, no NUL).
inline int give_text(char** out, size_t* out_len, std::string_view s, lj_error_t** err) {
  return give(out, out_len, c_text(s), err);
}

// (ptr, len) as a string_view; a NULL ptr is only valid with len 0.
inline bool view_of(const char* ptr, size_t len, std::string_view& out) noexcept {
  if (ptr == nullptr && len != 0) return false;
  out = ptr == nullptr ? std::string_view() : std::string_view(ptr, len);
  return true;
}

// One (pointer, length) string of an options struct: "not set" for NULL or empty;
// false for a NULL pointer with a length, or a NUL inside (no URL, path or name has one).
inline bool option_text(const char* p, size_t len, std::string& out) {
  std::string_view v;
  if (!view_of(p, len, v) || v.find('\0') != std::string_view::npos) return false;
  out.assign(v);
  return true;
}

// Run body (returning int), mapping any escaping exception to a code.
template <typename Body>
int guard(lj_error_t** err, Body&& body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return fail(err, LJ_ENOMEM, "out of memory");
  } catch (const std::exception& e) {
    return fail(err, LJ_EINTERNAL, e.what());
  } catch (...) {
    return fail(err, LJ_EINTERNAL, "unexpected exception");
  }
}

}  // namespace leasejudge::capi
