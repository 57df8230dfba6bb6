// The names of leasejudge's error codes. They are part of the contract: the C ABI's
// lj_strerror and the bindings print them, so a name never changes once released.
#include "leasejudge/error.hpp"

namespace leasejudge {

const char* errc_message(Errc code) noexcept {
  switch (code) {
    case Errc::ok: return "ok";
    case Errc::invalid_argument: return "invalid argument";
    case Errc::no_memory: return "out of memory";
    case Errc::parse: return "parse error";
    case Errc::changed: return "changed";
    case Errc::not_found: return "not found";
    case Errc::io: return "i/o error";
    case Errc::version: return "unsupported version";
    case Errc::user: return "stopped by callback";
    case Errc::timeout: return "timed out";
    case Errc::unsupported: return "unsupported";
    case Errc::exists: return "exists";
    case Errc::refused: return "refused";
    case Errc::store: return "store error";
    case Errc::busy: return "busy";
    case Errc::internal: return "internal error";
    case Errc::unknown_outcome: return "outcome unknown";
  }
  // A number no Errc names (a cast from a foreign int): still a readable string.
  return "unknown error";
}

}  // namespace leasejudge
