// The C ABI's NATS part: an lj_store_t over a JetStream key/value bucket. In a build
// without NATS the options still initialise and the store says LJ_EUNSUPPORTED.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "internal.hpp"
#include "options.hpp"
#include "store_handle.hpp"

#if defined(LEASEJUDGE_HAVE_NATS)
#include "leasejudge/store/nats.hpp"
#endif

using namespace leasejudge::capi;

namespace {

#if defined(LEASEJUDGE_HAVE_NATS)

// The comma-separated URL list, each entry trimmed of spaces; empty entries are
// refused rather than skipped (a doubled comma is a typo worth reporting).
bool split_urls(const std::string& text, std::vector<std::string>& out) {
  if (text.empty()) return true;
  std::size_t start = 0;
  for (;;) {
    std::size_t end = text.find(',', start);
    std::string_view one(text.data() + start, (end == std::string::npos ? text.size() : end) - start);
    while (!one.empty() && one.front() == ' ') one.remove_prefix(1);
    while (!one.empty() && one.back() == ' ') one.remove_suffix(1);
    if (one.empty()) return false;
    out.emplace_back(one);
    if (end == std::string::npos) return true;
    start = end + 1;
  }
}

// The C options read into the store's: each text a valid one, each time-out within a
// day; 0 takes the store's default.
int nats_options_of(const lj_nats_options_t& in, leasejudge::NatsOptions& o, lj_error_t** err) {
  std::string urls;
  std::string name;
  if (!option_text(in.urls, in.urls_len, urls) || !split_urls(urls, o.urls)) {
    return fail(err, LJ_EINVAL, "urls is not a comma-separated list of server URLs");
  }
  if (!option_text(in.bucket, in.bucket_len, o.bucket)) return fail(err, LJ_EINVAL, "bucket is not a name");
  if (!option_text(in.credentials_file, in.credentials_file_len, o.credentials_file)) {
    return fail(err, LJ_EINVAL, "credentials_file is not a path");
  }
  if (!option_text(in.tls_ca_file, in.tls_ca_file_len, o.tls_ca_file) ||
      !option_text(in.tls_cert_file, in.tls_cert_file_len, o.tls_cert_file) ||
      !option_text(in.tls_key_file, in.tls_key_file_len, o.tls_key_file)) {
    return fail(err, LJ_EINVAL, "a TLS file is not a path");
  }
  if (!option_text(in.name, in.name_len, name)) return fail(err, LJ_EINVAL, "name is not a name");
  if (!name.empty()) o.name = name;
  if (in.connect_timeout_ms < 0 || in.request_timeout_ms < 0 || in.list_timeout_ms < 0 || in.reconnect_wait_ms < 0) {
    return fail(err, LJ_EINVAL, "a NATS timeout is negative");
  }
  // Beyond a day no wait is meant, and the clocks' arithmetic would overflow.
  constexpr int64_t day_ms = 86'400'000;
  if (in.connect_timeout_ms > day_ms || in.request_timeout_ms > day_ms || in.list_timeout_ms > day_ms ||
      in.reconnect_wait_ms > day_ms) {
    return fail(err, LJ_EINVAL, "a NATS timeout is over a day");
  }
  using ms = std::chrono::milliseconds;
  if (in.connect_timeout_ms > 0) o.connect_timeout = ms(in.connect_timeout_ms);
  if (in.request_timeout_ms > 0) o.request_timeout = ms(in.request_timeout_ms);
  if (in.list_timeout_ms > 0) o.list_timeout = ms(in.list_timeout_ms);
  if (in.reconnect_wait_ms > 0) o.reconnect_wait = ms(in.reconnect_wait_ms);
  o.tls = in.tls != 0;
  o.direct_reads = in.direct_reads != 0;
  o.create_bucket = in.create_bucket != 0;
  o.history = in.history == 0 ? 1 : in.history;
  o.replicas = in.replicas == 0 ? 1 : in.replicas;
  o.refuse_unfenced = in.refuse_unfenced != 0;
  if (in.note != nullptr) {
    auto note = in.note;
    void* payload = in.note_payload;
    o.note = [note, payload](std::string_view line) { note(line.data(), line.size(), payload); };
  }
  return LJ_OK;
}

#endif

// Version 1 ends with replicas: its size is where version 2's first field begins
// (not its sizeof, whose padding version 2's first field fills).
const OptionsVersions<lj_nats_options_t, 2> nats_options_versions{
    "lj_nats_options_t",
    LJ_NATS_OPTIONS_INIT,
    {offsetof(lj_nats_options_t, refuse_unfenced), sizeof(lj_nats_options_t)}};

}  // namespace

extern "C" {

LJ_API int lj_nats_options_init(lj_nats_options_t* opts, uint32_t version) {
  return init_options(opts, version, nats_options_versions);
}

LJ_API int lj_nats_store_open(lj_store_t** out, const lj_nats_options_t* in, lj_error_t** err) {
  reset(err);
  if (out == nullptr) return fail(err, LJ_EINVAL, "out is NULL");
  *out = nullptr;
  if (in == nullptr) return fail(err, LJ_EINVAL, "opts is NULL: the bucket is required");
  lj_nats_options_t read;
  if (int rc = read_options(read, in, nats_options_versions, err); rc != LJ_OK) return rc;
  const lj_nats_options_t* opts = &read;
#if defined(LEASEJUDGE_HAVE_NATS)
  return guard(err, [&] {
    leasejudge::NatsOptions o;
    if (int rc = nats_options_of(*opts, o, err); rc != LJ_OK) return rc;
    auto store = leasejudge::NatsStore::open(o);
    if (!store.ok()) return fail(err, store.error());
    *out = adopt_store(std::move(store).value());
    return LJ_OK;
  });
#else
  return fail(err, LJ_EUNSUPPORTED, "this build of leasejudge has no NATS support (libnats was not found)");
#endif
}

LJ_API int lj_nats_store_server(const lj_store_t* store, lj_nats_server_t* out, lj_error_t** err) {
  reset(err);
  if (store == nullptr || out == nullptr) return fail(err, LJ_EINVAL, "store or out is NULL");
#if defined(LEASEJUDGE_HAVE_NATS)
  return guard(err, [&] {
    const auto* nats = dynamic_cast<const leasejudge::NatsStore*>(store->store);
    if (nats == nullptr) return fail(err, LJ_EINVAL, "the store is not a NATS store");
    leasejudge::NatsServerState s = nats->server();
    *out = lj_nats_server_t{};
    std::size_t n = std::min(s.version.size(), sizeof out->version - 1);
    std::memcpy(out->version, s.version.data(), n);
    out->fenced = s.fenced ? 1 : 0;
    return LJ_OK;
  });
#else
  return fail(err, LJ_EUNSUPPORTED, "this build of leasejudge has no NATS support (libnats was not found)");
#endif
}

}  // extern "C"
