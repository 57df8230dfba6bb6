// Stores by URL: the one grammar every door opens stores with, its refusals (a
// missing directory is never made unless asked), and messages that never show a
// password.
#include "leasejudge/store_url.hpp"

#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

using namespace leasejudge;

namespace {

bool exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

std::string temp_dir() {
  std::string t = (std::filesystem::temp_directory_path() / "lj-store-url-XXXXXX").string();
  REQUIRE(::mkdtemp(t.data()) != nullptr);
  return t;
}

}  // namespace

TEST_SUITE("store url") {
  TEST_CASE("mem: is an empty store in this process") {
    auto s = open_store_url("mem:");
    REQUIRE(s.ok());
    auto keys = (*s)->keys();
    REQUIRE(keys.ok());
    CHECK(keys->empty());
    CHECK((*s)->create("k", "v").ok());
  }

  TEST_CASE("file:DIR: a missing directory is refused and not made, unless creation is asked") {
    const std::string dir = temp_dir();
    const std::string typo = dir + "/typo";
    auto refused = open_store_url("file:" + typo);
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.code() == Errc::store);
    CHECK(refused.error().message ==
          "opening file:" + typo + ": the directory " + typo + " does not exist (nothing was made; creation makes it)");
    CHECK_FALSE(exists(typo));
    StoreUrlOptions named;  // the caller's own words for creation, in the message
    named.create_name = "--create-bucket";
    auto said = open_store_url("file:" + typo, named);
    REQUIRE_FALSE(said.ok());
    CHECK(said.error().message == "opening file:" + typo + ": the directory " + typo +
                                      " does not exist (nothing was made; --create-bucket makes it)");
    CHECK_FALSE(exists(typo));
    StoreUrlOptions create;
    create.create = true;
    auto made = open_store_url("file:" + typo, create);
    REQUIRE(made.ok());
    CHECK(exists(typo));
    REQUIRE((*made)->create("k", "v").ok());
    made->reset();
    // An existing directory opens without creation, with what it holds.
    auto again = open_store_url("file:" + typo);
    REQUIRE(again.ok());
    auto got = (*again)->get("k");
    REQUIRE(got.ok());
    REQUIRE(got->has_value());
    CHECK((**got).value == "v");
    std::filesystem::remove_all(dir);
  }

  TEST_CASE("any other text is an invalid argument naming the forms") {
    const std::string forms =
        "(mem:, file:DIR, nats://[user:pass@]host:port[,host:port...]/BUCKET, "
        "etcd://[user:pass@]host:port[,host:port...]/PREFIX)";
    for (std::string bad : {"", "mem", "memory", "MEM:", "mem:x", "redis://x/y", "file", "http://h/b", "\xff\xfe"}) {
      CAPTURE(bad);
      auto s = open_store_url(bad);
      REQUIRE_FALSE(s.ok());
      CHECK(s.code() == Errc::invalid_argument);
      CHECK(s.error().message == "opening " + bad + ": not a store URL " + forms);
    }
    for (std::string bad : {"nats://", "nats:///b", "nats://h:1", "nats://h:1/", "nats://h:1,/b", "nats://,h:1/b",
                            "tls://h:1/"}) {
      CAPTURE(bad);
      auto s = open_store_url(bad);
      CHECK(s.code() == Errc::invalid_argument);
      CHECK(s.error().message == "opening " + bad + ": it is not nats://[user:pass@]host:port[,host:port...]/BUCKET");
    }
    CHECK(open_store_url("file:").code() == Errc::invalid_argument);
    CHECK(open_store_url(std::string("mem:\0", 5)).code() == Errc::invalid_argument);
    CHECK(open_store_url(std::string("file:/tmp\0/x", 12)).error().message == "a store URL holds a NUL byte");
    // A huge text is refused, its message cut.
    auto huge = open_store_url(std::string(1 << 20, 'x'));
    CHECK(huge.code() == Errc::invalid_argument);
    CHECK(huge.error().message.size() < 400);
  }

  TEST_CASE("etcd://: hosts with ports and a prefix, or an invalid argument saying what is wrong") {
    const std::string form = ": it is not etcd://[user:pass@]host:port[,host:port...]/PREFIX";
    struct Bad {
      std::string url, wrong;
    };
    for (const Bad& b : std::vector<Bad>{
             {"etcd://", "it names no prefix"},
             {"etcd:///p", "\"\" is not host:port (a port in 1..65535)"},
             {"etcd://:2379/p", "\":2379\" is not host:port (a port in 1..65535)"},
             {"etcd://h/p", "\"h\" is not host:port (a port in 1..65535)"},
             {"etcd://h:/p", "\"h:\" is not host:port (a port in 1..65535)"},
             {"etcd://h:0/p", "\"h:0\" is not host:port (a port in 1..65535)"},
             {"etcd://h:65536/p", "\"h:65536\" is not host:port (a port in 1..65535)"},
             {"etcd://h:12x/p", "\"h:12x\" is not host:port (a port in 1..65535)"},
             {"etcd://h:99999999999999999999/p", "\"h:99999999999999999999\" is not host:port (a port in 1..65535)"},
             {"etcd://h:1", "it names no prefix"},
             {"etcd://h:1/", "it names no prefix"},
             {"etcd://h:1,/p", "\"\" is not host:port (a port in 1..65535)"},
             {"etcd://,h:1/p", "\"\" is not host:port (a port in 1..65535)"},
             {"etcd://@h:1/p", "a user is empty"},
             {"etcd://:pw@h:1/p", "a user is empty"},
         }) {
      CAPTURE(b.url);
      auto s = open_store_url(b.url);
      CHECK(s.code() == Errc::invalid_argument);
      CHECK(s.error().message == "opening " + shown_store_url(b.url) + ": " + b.wrong + form);
    }
    // A password stays out of every message, the parser's and the connection's.
    for (std::string url : {"etcd://root:secret@h:0/p", "etcd://root:secret@h:1", "etcd://root:secret@127.0.0.1:1/p"}) {
      CAPTURE(url);
      auto s = open_store_url(url);
      REQUIRE_FALSE(s.ok());
      CHECK(s.error().message.find("secret") == std::string::npos);
      CHECK(s.error().message.rfind("opening etcd://***@", 0) == 0);
    }
#if defined(LEASEJUDGE_HAVE_ETCD)
    auto down = open_store_url("etcd://127.0.0.1:1,127.0.0.1:2/p");
    CHECK(down.code() == Errc::store);
    CHECK(down.error().message.rfind("opening etcd://127.0.0.1:1,127.0.0.1:2/p: etcd at http://127.0.0.1:2 ", 0) == 0);
#endif
  }

  TEST_CASE("a password is never shown") {
    CHECK(shown_store_url("nats://user:secret@h:4222/b") == "nats://***@h:4222/b");
    CHECK(shown_store_url("nats://h:4222/b") == "nats://h:4222/b");
    CHECK(shown_store_url("file:/a@b") == "file:/a@b");
    auto bad = open_store_url("nats://user:secret@h:1");
    CHECK(bad.code() == Errc::invalid_argument);
    CHECK(bad.error().message.find("secret") == std::string::npos);
#if defined(LEASEJUDGE_HAVE_NATS)
    // No server: a store error, the password hidden.
    auto down = open_store_url("nats://user:secret@127.0.0.1:1/bucket");
    CHECK(down.code() == Errc::store);
    CHECK(down.error().message.find("secret") == std::string::npos);
    CHECK(down.error().message.rfind("opening nats://***@127.0.0.1:1/bucket: ", 0) == 0);
#endif
  }
}
