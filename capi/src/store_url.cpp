// The C ABI's store by its URL: translates to leasejudge::open_store_url.
#include <cstddef>
#include <string>
#include <string_view>

#include "internal.hpp"
#include "leasejudge/store_url.hpp"
#include "options.hpp"
#include "store_handle.hpp"

using namespace leasejudge::capi;

namespace {

const OptionsVersions<lj_store_url_options_t, 2> url_options_versions{
    "lj_store_url_options_t",
    LJ_STORE_URL_OPTIONS_INIT,
    {offsetof(lj_store_url_options_t, create_name), sizeof(lj_store_url_options_t)}};

}  // namespace

extern "C" {

LJ_API int lj_store_url_options_init(lj_store_url_options_t* opts, uint32_t version) {
  return init_options(opts, version, url_options_versions);
}

LJ_API int lj_store_open_url(lj_store_t** out, const char* url, size_t url_len, const lj_store_url_options_t* in,
                             lj_error_t** err) {
  reset(err);
  if (out == nullptr) return fail(err, LJ_EINVAL, "out is NULL");
  *out = nullptr;
  std::string_view u;
  if (url == nullptr || !view_of(url, url_len, u)) return fail(err, LJ_EINVAL, "url is NULL");
  lj_store_url_options_t opts;
  if (int rc = read_options(opts, in, url_options_versions, err); rc != LJ_OK) return rc;
  return guard(err, [&] {
    leasejudge::StoreUrlOptions o;
    o.create = opts.create != 0;
    if (!option_text(opts.credentials_file, opts.credentials_file_len, o.credentials_file) ||
        !option_text(opts.tls_ca_file, opts.tls_ca_file_len, o.tls_ca_file) ||
        !option_text(opts.tls_cert_file, opts.tls_cert_file_len, o.tls_cert_file) ||
        !option_text(opts.tls_key_file, opts.tls_key_file_len, o.tls_key_file)) {
      return fail(err, LJ_EINVAL, "a credentials or TLS file is not a path");
    }
    if (!option_text(opts.create_name, opts.create_name_len, o.create_name))
      return fail(err, LJ_EINVAL, "create_name is no name (NULL with a length, or a NUL byte in it)");
    o.refuse_unfenced = opts.refuse_unfenced != 0;
    if (opts.note != nullptr) {
      auto note = opts.note;
      void* payload = opts.note_payload;
      o.note = [note, payload](std::string_view line) { note(line.data(), line.size(), payload); };
    }
    auto store = leasejudge::open_store_url(u, o);
    if (!store) return fail(err, store.error());
    *out = adopt_store(std::move(store).value());
    return LJ_OK;
  });
}

}  // extern "C"
