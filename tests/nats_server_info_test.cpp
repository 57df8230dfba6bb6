// A nats-server's INFO line: parsed, refused when it is anything else, read from a
// socket (a fake server here, sending what the test says) and from a real server,
// whose version must be the one its binary prints.
#include <doctest/doctest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <thread>

#include "nats_server.hpp"

#if defined(LEASEJUDGE_HAVE_NATS)

#include "store/nats_server_info.hpp"

using namespace leasejudge;

namespace {

// One connection accepted on a free loopback port; it is sent `reply` (and kept
// open for `hold_ms` after) or closed at once when reply is empty.
struct FakeServer {
  int listener = -1;
  int port = 0;
  std::thread t;
  FakeServer(std::string reply, int hold_ms = 0) {
    listener = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(listener, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    socklen_t len = sizeof a;
    REQUIRE(::getsockname(listener, reinterpret_cast<sockaddr*>(&a), &len) == 0);
    port = ntohs(a.sin_port);
    REQUIRE(::listen(listener, 1) == 0);
    t = std::thread([this, reply = std::move(reply), hold_ms] {
      int c = ::accept(listener, nullptr, nullptr);
      if (c < 0) return;
      std::size_t sent = 0;
      while (sent < reply.size()) {
        ssize_t n = ::send(c, reply.data() + sent, reply.size() - sent, MSG_NOSIGNAL);
        if (n <= 0) break;
        sent += static_cast<std::size_t>(n);
      }
      if (hold_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(hold_ms));
      ::close(c);
    });
  }
  ~FakeServer() {
    t.join();
    ::close(listener);
  }
  std::string address() const { return "127.0.0.1:" + std::to_string(port); }
};

}  // namespace

TEST_SUITE("nats server info") {
  TEST_CASE("an INFO line is read: version, name, the cluster's other servers") {
    auto info = parse_nats_info(
        R"(INFO {"server_id":"X","server_name":"lj-node-0","version":"2.10.27","connect_urls":["127.0.0.1:4223","127.0.0.1:4224"]})"
        "\r\n");
    REQUIRE(info.ok());
    CHECK(info->version == "2.10.27");
    CHECK(info->major == 2);
    CHECK(info->minor == 10);
    CHECK(info->patch == 27);
    CHECK(info->name == "lj-node-0");
    CHECK(info->connect_urls == std::vector<std::string>{"127.0.0.1:4223", "127.0.0.1:4224"});
    CHECK(fences_other_writers(*info));

    auto rc = parse_nats_info(R"(INFO {"version":"2.11.0-RC.1"})");
    REQUIRE(rc.ok());
    CHECK(rc->patch == 0);
    CHECK(rc->connect_urls.empty());
  }

  TEST_CASE("the fenced versions start at 2.9.21") {
    auto fences = [](const char* v) {
      auto info = parse_nats_info(std::string(R"(INFO {"version":")") + v + "\"}");
      REQUIRE(info.ok());
      return fences_other_writers(*info);
    };
    CHECK_FALSE(fences("2.9.10"));
    CHECK_FALSE(fences("2.9.20"));
    CHECK(fences("2.9.21"));
    CHECK(fences("2.9.100"));
    CHECK(fences("2.10.0"));
    CHECK(fences("3.0.0"));
    CHECK_FALSE(fences("1.99.99"));
    CHECK_FALSE(fences("0.0.0"));
  }

  TEST_CASE("anything else is a parse error naming what is wrong") {
    struct Bad {
      std::string line;
      const char* says;
    };
    const Bad bad[] = {
        {"", "not INFO"},
        {"INFO", "not INFO"},
        {"-ERR 'Authorization Violation'", "not INFO"},
        {"info {\"version\":\"2.10.0\"}", "not INFO"},
        {"INFO ", "not a JSON object"},
        {"INFO [1,2]", "not a JSON object"},
        {"INFO {\"version\":\"2.10", "not a JSON object"},
        {"INFO {}", "no version"},
        {"INFO {\"version\":2.10}", "no version"},
        {"INFO {\"version\":\"\"}", "not major.minor.patch"},
        {"INFO {\"version\":\"v2.10.1\"}", "not major.minor.patch"},
        {"INFO {\"version\":\"2.10\"}", "not major.minor.patch"},
        {"INFO {\"version\":\"2..1\"}", "not major.minor.patch"},
        {"INFO {\"version\":\"99999999999.1.1\"}", "not major.minor.patch"},
        {std::string("INFO {\"version\":\"2.10.1") + '\0' + "\"}", "not a JSON object"},
        {"INFO {\"version\":\"\xff\xfe\"}", "not a JSON object"},
        {"INFO " + std::string(100000, '{'), "not a JSON object"},
    };
    for (const Bad& b : bad) {
      CAPTURE(b.line.substr(0, 60));
      auto info = parse_nats_info(b.line);
      REQUIRE_FALSE(info.ok());
      CHECK(info.code() == Errc::parse);
      CHECK(info.error().message.find(b.says) != std::string::npos);
    }
  }

  TEST_CASE("a server URL's host and port") {
    CHECK(*nats_host_port("nats://127.0.0.1:4222") == "127.0.0.1:4222");
    CHECK(*nats_host_port("nats://user:pa:ss@host.example:7422") == "host.example:7422");
    CHECK(*nats_host_port("tls://host") == "host:4222");
    CHECK(*nats_host_port("host:1") == "host:1");
    CHECK(*nats_host_port("nats://[::1]:4222") == "[::1]:4222");
    CHECK(*nats_host_port("nats://[::1]") == "[::1]:4222");
    CHECK(*nats_host_port("nats://h:4222/") == "h:4222");
    CHECK(nats_host_port("").code() == Errc::invalid_argument);
    CHECK(nats_host_port("nats://").code() == Errc::invalid_argument);
    CHECK(nats_host_port("nats://u@").code() == Errc::invalid_argument);
    CHECK(nats_host_port("nats://:4222").code() == Errc::invalid_argument);
    CHECK(nats_host_port("nats://[::1").code() == Errc::invalid_argument);
  }

  TEST_CASE("read from a socket: the line, or a store error naming the address") {
    using std::chrono::milliseconds;
    {
      FakeServer s("INFO {\"version\":\"2.9.10\"}\r\nPING\r\n");
      auto info = read_nats_info(s.address(), milliseconds(2000));
      REQUIRE(info.ok());
      CHECK(info->version == "2.9.10");
    }
    {  // the line in many small pieces is still one line
      FakeServer s("INFO {\"version\":\"2.10.3\", \"pad\":\"" + std::string(20000, 'x') + "\"}\n");
      auto info = read_nats_info(s.address(), milliseconds(2000));
      REQUIRE(info.ok());
      CHECK(info->version == "2.10.3");
    }
    {
      FakeServer s("");
      auto info = read_nats_info(s.address(), milliseconds(2000));
      CHECK(info.code() == Errc::store);
      CHECK(info.error().message.find(s.address()) != std::string::npos);
      CHECK(info.error().message.find("closed") != std::string::npos);
    }
    {  // a line that never ends
      FakeServer s("INFO " + std::string((1 << 20) + 10, 'x'), 3000);
      auto info = read_nats_info(s.address(), milliseconds(2000));
      CHECK(info.code() == Errc::store);
      CHECK(info.error().message.find("without a line end") != std::string::npos);
    }
    {  // a server that says nothing
      FakeServer s("INFO", 1500);
      auto info = read_nats_info(s.address(), milliseconds(300));
      CHECK(info.code() == Errc::store);
      CHECK(info.error().message.find("no line within 300 ms") != std::string::npos);
    }
    {
      FakeServer s("-ERR 'no'\r\n");
      CHECK(read_nats_info(s.address(), milliseconds(2000)).code() == Errc::parse);
    }
    int closed_port = test::free_port();
    auto none = read_nats_info("127.0.0.1:" + std::to_string(closed_port), milliseconds(1000));
    CHECK(none.code() == Errc::store);
    CHECK(read_nats_info("127.0.0.1", milliseconds(100)).code() == Errc::invalid_argument);
    CHECK(read_nats_info(":4222", milliseconds(100)).code() == Errc::invalid_argument);
    CHECK(read_nats_info("", milliseconds(100)).code() == Errc::invalid_argument);
    CHECK(read_nats_info("no-such-host.invalid:4222", milliseconds(1000)).code() == Errc::store);
  }

  TEST_CASE("a real nats-server: the version its binary prints") {
    SKIP_WITHOUT_NATS_SERVER();
    const std::string version = test::nats_server_version();
    REQUIRE(!version.empty());
    test::NatsServer server;
    REQUIRE(server.start());
    auto info = read_nats_info("127.0.0.1:" + std::to_string(server.port()), std::chrono::milliseconds(5000));
    REQUIRE_MESSAGE(info.ok(), (info.ok() ? std::string() : info.error().message));
    CHECK(info->version == version);
  }
}

#else

TEST_CASE("nats server info: the NATS store" * doctest::skip()) {}

#endif
