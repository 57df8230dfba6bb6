// The C store handle: what an lj_store_t is on the C++ side. Private to capi/: other
// C ABI parts (lock, step, nats) reach the leasejudge::Store through it, and a new
// backend hands its Store over with adopt_store.
#pragma once

#include <memory>

#include "leasejudge.h"
#include "leasejudge/store.hpp"

struct lj_store_t {
  std::unique_ptr<leasejudge::Store> owned;
  leasejudge::Store* store = nullptr;  // owned.get(): never null in a live handle
};

namespace leasejudge::capi {

// A new handle owning store. Throws std::bad_alloc only (call inside guard()).
inline lj_store_t* adopt_store(std::unique_ptr<Store> store) {
  auto handle = std::make_unique<lj_store_t>();
  handle->store = store.get();
  handle->owned = std::move(store);
  return handle.release();
}

}  // namespace leasejudge::capi
