// Errc: the numbers are the C ABI's LJ_E* codes and the names are stable text.
#include <doctest/doctest.h>

#include <cstring>
#include <set>
#include <string>

#include "leasejudge.h"
#include "leasejudge/error.hpp"

using leasejudge::Errc;
using leasejudge::errc_message;

namespace {

struct Code {
  Errc code;
  int c_code;
  const char* name;
};

// Every Errc, its LJ_E* twin and its name, written out by hand.
constexpr Code all_codes[] = {
    {Errc::ok, LJ_OK, "ok"},
    {Errc::invalid_argument, LJ_EINVAL, "invalid argument"},
    {Errc::no_memory, LJ_ENOMEM, "out of memory"},
    {Errc::parse, LJ_EPARSE, "parse error"},
    {Errc::changed, LJ_ECHANGED, "changed"},
    {Errc::not_found, LJ_ENOTFOUND, "not found"},
    {Errc::io, LJ_EIO, "i/o error"},
    {Errc::version, LJ_EVERSION, "unsupported version"},
    {Errc::user, LJ_EUSER, "stopped by callback"},
    {Errc::timeout, LJ_ETIMEOUT, "timed out"},
    {Errc::unsupported, LJ_EUNSUPPORTED, "unsupported"},
    {Errc::exists, LJ_EEXISTS, "exists"},
    {Errc::refused, LJ_EREFUSED, "refused"},
    {Errc::store, LJ_ESTORE, "store error"},
    {Errc::busy, LJ_EBUSY, "busy"},
    {Errc::internal, LJ_EINTERNAL, "internal error"},
    {Errc::unknown_outcome, LJ_EUNKNOWN, "outcome unknown"},
};

}  // namespace

TEST_SUITE("error") {
  TEST_CASE("Errc numbers are the C ABI's LJ_E* codes, pinned") {
    for (const Code& c : all_codes) {
      CAPTURE(c.name);
      CHECK(static_cast<int>(c.code) == c.c_code);
    }
    // The numbers themselves never change meaning.
    CHECK(LJ_OK == 0);
    CHECK(LJ_EINVAL == -1);
    CHECK(LJ_ENOMEM == -2);
    CHECK(LJ_EPARSE == -3);
    CHECK(LJ_ECHANGED == -4);
    CHECK(LJ_ENOTFOUND == -5);
    CHECK(LJ_EIO == -6);
    CHECK(LJ_EVERSION == -7);
    CHECK(LJ_EUSER == -8);
    CHECK(LJ_ETIMEOUT == -9);
    CHECK(LJ_EUNSUPPORTED == -10);
    CHECK(LJ_EEXISTS == -11);
    CHECK(LJ_EREFUSED == -12);
    CHECK(LJ_ESTORE == -13);
    CHECK(LJ_EBUSY == -14);
    CHECK(LJ_EINTERNAL == -15);
    CHECK(LJ_EUNKNOWN == -16);
  }

  TEST_CASE("every code 0..-16 is an Errc with its own stable name") {
    std::set<std::string> names;
    for (int n = 0; n >= -16; --n) {
      const Code& c = all_codes[-n];
      REQUIRE(static_cast<int>(c.code) == n);
      const char* message = errc_message(c.code);
      REQUIRE(message != nullptr);
      CHECK(std::strlen(message) > 0);
      CHECK(std::string(message) == c.name);
      names.insert(message);
    }
    CHECK(names.size() == 17);  // distinct
  }

  TEST_CASE("a number no Errc names still gets a readable string") {
    for (int n : {1, -17, -1000, 12345}) {
      const char* message = errc_message(static_cast<Errc>(n));
      REQUIRE(message != nullptr);
      CHECK(std::string(message) == "unknown error");
    }
  }

  TEST_CASE("Result and Status carry the code") {
    leasejudge::Result<int> good(7);
    CHECK(good.ok());
    CHECK(good.code() == Errc::ok);
    CHECK(*good == 7);
    leasejudge::Result<int> bad(Errc::changed, "key steps.a moved");
    CHECK_FALSE(bad.ok());
    CHECK(bad.code() == Errc::changed);
    CHECK(bad.error().message == "key steps.a moved");
    leasejudge::Status fine;
    CHECK(fine.ok());
    CHECK(fine.code() == Errc::ok);
    leasejudge::Status busy(Errc::busy, "held by 1234");
    CHECK_FALSE(busy.ok());
    CHECK(busy.code() == Errc::busy);
  }
}
