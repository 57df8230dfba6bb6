// Versioned option structs: how the C ABI reads a caller's struct of any version it
// has ever had. Private to capi/.
//
// A struct only grows at its end, and each growth raises its version, so version v
// is the first sizes[v-1] bytes of today's struct. A caller built against version v
// passes a struct of that size: the library copies those bytes over today's
// defaults and reads the rest as defaults, so a program built against an older
// header keeps working with a newer library. A version of 0 or above the newest is
// LJ_EVERSION (a caller built against a newer header than this library).
#pragma once

#include <fmt/format.h>

#include <array>
#include <cstddef>
#include <cstring>
#include <type_traits>

#include "internal.hpp"

namespace leasejudge::capi {

template <typename T, std::size_t N>
struct OptionsVersions {
  static_assert(std::is_trivially_copyable_v<T>, "an options struct is plain data");
  const char* name;                  // "lj_x_options_t", for messages
  T defaults;                        // the newest version's defaults
  std::array<std::size_t, N> sizes;  // sizes[v-1]: the struct's size at version v
  static constexpr std::uint32_t newest = N;
};

// out = *in read as its version says, over the defaults; out.version the newest.
// NULL in: the defaults.
template <typename T, std::size_t N>
int read_options(T& out, const T* in, const OptionsVersions<T, N>& v, lj_error_t** err) {
  out = v.defaults;
  if (in == nullptr) return LJ_OK;
  if (in->version == 0 || in->version > N)
    return fail(err, LJ_EVERSION,
                fmt::format("{} version {} is unknown (this library reads versions 1 to {})", v.name, in->version, N));
  std::memcpy(static_cast<void*>(&out), static_cast<const void*>(in), v.sizes[in->version - 1]);
  out.version = static_cast<std::uint32_t>(N);
  return LJ_OK;
}

// The lj_x_options_init of a struct: the defaults of version `version`, written
// only over the bytes that version has.
template <typename T, std::size_t N>
int init_options(T* opts, std::uint32_t version, const OptionsVersions<T, N>& v) {
  if (opts == nullptr) return LJ_EINVAL;
  if (version == 0 || version > N) return LJ_EVERSION;
  std::memcpy(static_cast<void*>(opts), static_cast<const void*>(&v.defaults), v.sizes[version - 1]);
  opts->version = version;
  return LJ_OK;
}

}  // namespace leasejudge::capi
