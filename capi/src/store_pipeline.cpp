// The C ABI's store pipeline: a WritePipeline behind a handle, its outcomes as codes.
#include <memory>
#include <string_view>

#include "internal.hpp"
#include "store_handle.hpp"

using leasejudge::Errc;
using leasejudge::WriteOutcome;
using namespace leasejudge::capi;

namespace {
constexpr size_t kMostWindow = 1 << 20;
}  // namespace

struct lj_store_pipeline_t {
  std::unique_ptr<leasejudge::WritePipeline> pipe;
  std::size_t window = 0;
};

extern "C" {

LJ_API int lj_store_pipeline_open(lj_store_pipeline_t** out, lj_store_t* store, size_t window, lj_error_t** err) {
  reset(err);
  if (out == nullptr) return fail(err, LJ_EINVAL, "out is NULL");
  *out = nullptr;
  if (store == nullptr || store->store == nullptr) return fail(err, LJ_EINVAL, "store is NULL");
  if (window > kMostWindow) return fail(err, LJ_EINVAL, "window is over 1048576");
  return guard(err, [&] {
    leasejudge::PipelineOptions options;
    options.window = window > 0 ? window : store->store->write_window();
    auto handle = std::make_unique<lj_store_pipeline_t>();
    handle->pipe = store->store->pipeline(options);
    handle->window = options.window;
    *out = handle.release();
    return LJ_OK;
  });
}

LJ_API void lj_store_pipeline_destroy(lj_store_pipeline_t* pipeline) { delete pipeline; }

LJ_API int lj_store_pipeline_create(lj_store_pipeline_t* pipeline, const char* key, size_t key_len,
                                    const char* value, size_t value_len) {
  if (pipeline == nullptr) return LJ_EINVAL;
  std::string_view k, v;
  if (!view_of(key, key_len, k) || !view_of(value, value_len, v)) return LJ_EINVAL;
  return guard(nullptr, [&] {
    pipeline->pipe->create(k, v);
    return LJ_OK;
  });
}

LJ_API size_t lj_store_pipeline_in_flight(const lj_store_pipeline_t* pipeline) {
  return pipeline == nullptr ? 0 : pipeline->pipe->in_flight();
}

LJ_API size_t lj_store_pipeline_window(const lj_store_pipeline_t* pipeline) {
  return pipeline == nullptr ? 0 : pipeline->window;
}

LJ_API size_t lj_store_pipeline_ready(const lj_store_pipeline_t* pipeline) {
  return pipeline == nullptr ? 0 : pipeline->pipe->ready();
}

LJ_API int lj_store_pipeline_next(uint64_t* out_revision, lj_store_pipeline_t* pipeline, lj_error_t** err) {
  reset(err);
  if (pipeline == nullptr) return fail(err, LJ_EINVAL, "pipeline is NULL");
  return guard(err, [&] {
    auto o = pipeline->pipe->next();
    if (!o) return fail(err, LJ_ENOTFOUND, "no write is in flight");
    switch (o->kind) {
      case WriteOutcome::Kind::done:
        if (out_revision != nullptr) *out_revision = o->revision;
        return LJ_OK;
      case WriteOutcome::Kind::changed:
        return fail(err, o->error.code == Errc::exists ? LJ_EEXISTS : LJ_ECHANGED, o->error.message);
      case WriteOutcome::Kind::unknown:
        return fail(err, LJ_EUNKNOWN, o->error.message);
      case WriteOutcome::Kind::failed:
        break;
    }
    // A failure keeps the store's code, unless it names none of the failure codes.
    int code = static_cast<int>(o->error.code);
    return fail(err, code < 0 ? code : LJ_ESTORE, o->error.message);
  });
}

}  // extern "C"
