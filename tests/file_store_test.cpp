// The file store: revisions, compare-and-swap, file names, and processes racing on
// one directory.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include "leasejudge/store/file.hpp"
#include "store_contract.hpp"

using namespace leasejudge;

namespace {

struct TempDir {
  std::string path;
  TempDir() {
    char buf[] = "/tmp/lj-file-store-XXXXXX";
    REQUIRE(::mkdtemp(buf) != nullptr);
    path = buf;
  }
  ~TempDir() {
    std::string cmd = "rm -rf '" + path + "'";
    (void)std::system(cmd.c_str());
  }
};

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void spit(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

}  // namespace

TEST_SUITE("file_store") {
  TEST_CASE("the store contract every store keeps") {
    TempDir dir;
    auto opened = FileStore::open(dir.path);
    REQUIRE(opened.ok());
    test::check_store_contract(**opened);
  }

  TEST_CASE("create, get, update, remove with revisions") {
    TempDir dir;
    auto opened = FileStore::open(dir.path + "/locks");  // made when missing
    REQUIRE(opened.ok());
    FileStore& store = **opened;
    CHECK(store.dir() == dir.path + "/locks");

    CHECK(!store.get("a")->has_value());
    auto r1 = store.create("a", "one");
    REQUIRE(r1.ok());
    CHECK(*r1 == 1);
    CHECK(store.create("a", "again").code() == Errc::exists);
    auto got = store.get("a");
    REQUIRE(got.ok());
    REQUIRE(got->has_value());
    CHECK((*got)->value == "one");
    CHECK((*got)->revision == 1);
    // The file holds the revision line and the value, as the header says.
    CHECK(slurp(dir.path + "/locks/a") == "lj1 1\none");

    CHECK(store.update("a", "two", 7).code() == Errc::changed);
    auto r2 = store.update("a", "two", 1);
    REQUIRE(r2.ok());
    CHECK(*r2 == 2);
    CHECK((*store.get("a"))->value == "two");
    CHECK(store.update("missing", "x", 1).code() == Errc::changed);

    CHECK(store.remove("a", 1).code() == Errc::changed);
    CHECK(store.remove("a", 2).ok());
    CHECK(store.remove("a", 2).code() == Errc::changed);
    CHECK(!store.get("a")->has_value());

    // Created again, the key gets a larger revision: fencing tokens only grow.
    auto r3 = store.create("a", "three");
    REQUIRE(r3.ok());
    CHECK(*r3 == 3);
    auto r4 = store.create("b", "");
    REQUIRE(r4.ok());
    CHECK(*r4 == 4);
    CHECK((*store.get("b"))->value.empty());

    // Values are bytes: NUL, newlines, anything.
    std::string bytes("x\0y\n\xFF", 5);
    REQUIRE(store.update("b", bytes, 4).ok());
    CHECK((*store.get("b"))->value == bytes);

    auto keys = store.keys();
    REQUIRE(keys.ok());
    CHECK(*keys == std::vector<std::string>{"a", "b"});

    // A second handle on the same directory sees the same store and revisions.
    auto again = FileStore::open(dir.path + "/locks/");
    REQUIRE(again.ok());
    CHECK((*again)->dir() == dir.path + "/locks");
    CHECK((*(*again)->get("a"))->revision == 3);
    CHECK(*(*again)->create("c", "c") == 6);
  }

  TEST_CASE("key names: any bytes, kept apart from the store's own files") {
    CHECK(*FileStore::file_name_of("locks/state") == "locks%2Fstate");
    CHECK(*FileStore::file_name_of(".hidden") == "%2Ehidden");
    CHECK(*FileStore::file_name_of("a.b") == "a.b");
    CHECK(*FileStore::file_name_of("50%") == "50%25");
    CHECK(*FileStore::file_name_of("\xC3\xA9 x") == "%C3%A9%20x");
    CHECK(*FileStore::file_name_of("..") == "%2E.");
    CHECK(FileStore::file_name_of("").code() == Errc::invalid_argument);
    CHECK(FileStore::file_name_of(std::string(100, '/')).code() == Errc::invalid_argument);
    CHECK(FileStore::file_name_of(std::string(255, 'k')).ok());

    CHECK(FileStore::key_of("locks%2Fstate") == "locks/state");
    CHECK(FileStore::key_of("%2Ehidden") == ".hidden");
    CHECK(!FileStore::key_of("%2fstate"));  // only the one spelling
    CHECK(!FileStore::key_of("%2"));
    CHECK(!FileStore::key_of("%zz"));
    CHECK(!FileStore::key_of("a b"));
    CHECK(!FileStore::key_of("%41"));  // 'A' is written as itself

    TempDir dir;
    auto store = FileStore::open(dir.path);
    REQUIRE(store.ok());
    for (const std::string& key :
         std::vector<std::string>{"locks/state", ".hidden", "50%", "\xC3\xA9 x", std::string("nul\0key", 7)}) {
      REQUIRE((*store)->create(key, key).ok());
      CHECK((*(*store)->get(key))->value == key);
    }
    spit(dir.path + "/stray file", "not ours");  // a name no key has: not listed
    auto keys = (*store)->keys();
    REQUIRE(keys.ok());
    CHECK(*keys == std::vector<std::string>{".hidden", "50%", "locks/state", std::string("nul\0key", 7), "\xC3\xA9 x"});
  }

  TEST_CASE("bad files and bad directories are errors, never values") {
    TempDir dir;
    auto store = FileStore::open(dir.path);
    REQUIRE(store.ok());
    spit(dir.path + "/junk", "hello");
    CHECK((*store)->get("junk").code() == Errc::store);
    CHECK((*store)->update("junk", "x", 1).code() == Errc::store);
    CHECK((*store)->create("junk", "x").code() == Errc::exists);
    spit(dir.path + "/zero", "lj1 0\nx");
    CHECK((*store)->get("zero").code() == Errc::store);
    spit(dir.path + "/nonum", "lj1 12a\nx");
    CHECK((*store)->get("nonum").code() == Errc::store);

    spit(dir.path + "/plain", "x");
    CHECK(FileStore::open(dir.path + "/plain").code() == Errc::io);
    CHECK(FileStore::open(dir.path + "/no/such/parent").code() == Errc::io);
    CHECK(FileStore::open("").code() == Errc::invalid_argument);
    CHECK((*store)->get("").code() == Errc::invalid_argument);
  }

  TEST_CASE("processes racing on one directory: one creator wins, no update is lost") {
    TempDir dir;
    constexpr int children = 6;
    constexpr int rounds = 40;
    {
      auto store = FileStore::open(dir.path);
      REQUIRE(store.ok());
      REQUIRE((*store)->create("counter", "0").ok());
    }
    std::vector<pid_t> pids;
    for (int c = 0; c < children; ++c) {
      pid_t pid = ::fork();
      REQUIRE(pid >= 0);
      if (pid == 0) {
        int status = 0;
        auto store = FileStore::open(dir.path);
        if (!store) ::_exit(10);
        // Everyone tries to take the one lock; the exit code says who won.
        auto created = (*store)->create("lock", std::to_string(c));
        if (created.ok())
          status |= 1;
        else if (created.code() != Errc::exists)
          ::_exit(11);
        // Compare-and-swap increments: a lost race reads again, never overwrites.
        for (int i = 0; i < rounds; ++i) {
          while (true) {
            auto entry = (*store)->get("counter");
            if (!entry || !entry->has_value()) ::_exit(12);
            int value = std::stoi((*entry)->value);
            auto put = (*store)->update("counter", std::to_string(value + 1), (*entry)->revision);
            if (put.ok()) break;
            if (put.code() != Errc::changed) ::_exit(13);
          }
        }
        ::_exit(status);
      }
      pids.push_back(pid);
    }
    int winners = 0;
    for (pid_t pid : pids) {
      int status = 0;
      REQUIRE(::waitpid(pid, &status, 0) == pid);
      REQUIRE(WIFEXITED(status));
      REQUIRE(WEXITSTATUS(status) <= 1);
      winners += WEXITSTATUS(status);
    }
    CHECK(winners == 1);
    auto store = FileStore::open(dir.path);
    REQUIRE(store.ok());
    auto counter = (*store)->get("counter");
    REQUIRE(counter.ok());
    CHECK((*counter)->value == std::to_string(children * rounds));
    // One revision per write: the first create, the lock, and every increment.
    CHECK((*counter)->revision == static_cast<Revision>(2 + children * rounds));
    // No temp file is left behind.
    auto keys = (*store)->keys();
    REQUIRE(keys.ok());
    CHECK(*keys == std::vector<std::string>{"counter", "lock"});
    CHECK(std::system(("test -z \"$(ls -A '" + dir.path + "' | grep '^\\.tmp')\"").c_str()) == 0);
  }

}  // TEST_SUITE
