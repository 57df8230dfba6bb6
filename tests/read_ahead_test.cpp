// The command's read-ahead (bindings/cli/read_ahead.hpp): a regular file read a piece
// ahead on a thread, anything else in the caller's thread; the same bytes either way.
#include "read_ahead.hpp"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

using leasejudge::cli::ReadAhead;

namespace {

// A file of n bytes, byte i being (i * 7 + i / 251) % 256, made afresh; its path.
std::string made_file(const char* name, std::size_t n) {
  std::string path = std::string(LEASEJUDGE_BINARY_DIR) + "/read_ahead_test." + name;
  std::string bytes(n, '\0');
  for (std::size_t i = 0; i < n; ++i) bytes[i] = static_cast<char>((i * 7 + i / 251) % 256);
  std::FILE* f = std::fopen(path.c_str(), "wb");
  REQUIRE(f != nullptr);
  REQUIRE(std::fwrite(bytes.data(), 1, n, f) == n);
  REQUIRE(std::fclose(f) == 0);
  return path;
}

// Everything in reads, in order, up to its end; each piece checked to be still whole
// after the reader has had time to fill the other buffer.
std::string read_all(ReadAhead& in, std::size_t piece, int& pieces) {
  std::string all;
  pieces = 0;
  for (;;) {
    const char* data = nullptr;
    ssize_t got = in.next(&data);
    REQUIRE(got >= 0);
    if (got == 0) {
      CHECK(data == nullptr);
      return all;
    }
    REQUIRE(data != nullptr);
    REQUIRE(static_cast<std::size_t>(got) <= piece);
    std::string now(data, static_cast<std::size_t>(got));
    if (++pieces % 3 == 1) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    CHECK(std::string(data, static_cast<std::size_t>(got)) == now);  // not written over meanwhile
    all += now;
  }
}

}  // namespace

TEST_SUITE("read_ahead") {
  TEST_CASE("a regular file is read ahead on a thread: every byte, in order, then its end again and again") {
    const std::size_t piece = 4096;
    for (std::size_t n : {std::size_t{0}, std::size_t{1}, piece, 10000 + piece * 25}) {
      CAPTURE(n);
      std::string path = made_file("regular", n);
      int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
      REQUIRE(fd >= 0);
      std::string expected(n, '\0');
      for (std::size_t i = 0; i < n; ++i) expected[i] = static_cast<char>((i * 7 + i / 251) % 256);
      {
        ReadAhead in(fd, piece);
        CHECK(in.ahead());
        int pieces = 0;
        CHECK(read_all(in, piece, pieces) == expected);
        CHECK(pieces == static_cast<int>((n + piece - 1) / piece));
        const char* data = reinterpret_cast<const char*>(1);
        CHECK(in.next(&data) == 0);
        CHECK(data == nullptr);
      }
      ::close(fd);
      ::unlink(path.c_str());
    }
  }

  TEST_CASE("a pipe is read in the caller's thread, as it comes") {
    int p[2];
    REQUIRE(::pipe(p) == 0);
    const std::string sent = "line one\nline two\n";
    REQUIRE(::write(p[1], sent.data(), sent.size()) == static_cast<ssize_t>(sent.size()));
    ::close(p[1]);
    {
      ReadAhead in(p[0], 4);
      CHECK_FALSE(in.ahead());
      int pieces = 0;
      CHECK(read_all(in, 4, pieces) == sent);
      CHECK(pieces == 5);
    }
    ::close(p[0]);
  }

  TEST_CASE("what cannot be read says why, as read(2) does") {
    ReadAhead none(-1, 64);
    CHECK_FALSE(none.ahead());
    const char* data = nullptr;
    errno = 0;
    CHECK(none.next(&data) == -1);
    CHECK(errno == EBADF);
    CHECK(data == nullptr);

    int dir = ::open(LEASEJUDGE_BINARY_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    REQUIRE(dir >= 0);
    {
      ReadAhead in(dir, 64);
      CHECK_FALSE(in.ahead());
      errno = 0;
      CHECK(in.next(&data) == -1);
      CHECK(errno == EISDIR);
    }
    ::close(dir);

    // A regular file open for writing only: read ahead, and its first read fails, for
    // good.
    std::string path = made_file("write-only", 100);
    int wo = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    REQUIRE(wo >= 0);
    {
      ReadAhead in(wo, 64);
      CHECK(in.ahead());
      for (int i = 0; i < 2; ++i) {
        errno = 0;
        CHECK(in.next(&data) == -1);
        CHECK(errno == EBADF);
        CHECK(data == nullptr);
      }
    }
    ::close(wo);
    ::unlink(path.c_str());
  }

  TEST_CASE("left before the file's end, it stops: no read is waited for past the one under way") {
    std::string path = made_file("left", 1 << 20);
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    REQUIRE(fd >= 0);
    for (int taken = 0; taken < 3; ++taken) {
      ReadAhead in(fd, 4096);
      REQUIRE(in.ahead());
      for (int i = 0; i < taken; ++i) {
        const char* data = nullptr;
        CHECK(in.next(&data) == 4096);
      }
    }
    ::close(fd);
    ::unlink(path.c_str());
  }
}
