#include "leasejudge/leasedir.hpp"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "leasedir_shell.hpp"

using namespace leasejudge;
namespace sh = leasejudge::shell;

namespace {

// A scratch directory, removed with everything in it.
struct Scratch {
  std::string path;
  Scratch() {
    char tmpl[] = "/tmp/leasedir-unit.XXXXXX";
    REQUIRE(mkdtemp(tmpl) != nullptr);
    path = tmpl;
  }
  ~Scratch() { std::system(("rm -rf '" + path + "'").c_str()); }
  std::string operator/(const std::string& name) const { return path + "/" + name; }
};

void write_file(const std::string& path, const std::string& content) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << content;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool exists(const std::string& path) {
  struct stat st {};
  return lstat(path.c_str(), &st) == 0;
}

// The file's own mtime set to sec.nsec.
void set_mtime(const std::string& path, std::int64_t sec, long nsec = 0) {
  timespec ts[2] = {{static_cast<time_t>(sec), nsec}, {static_cast<time_t>(sec), nsec}};
  REQUIRE(utimensat(AT_FDCWD, path.c_str(), ts, AT_SYMLINK_NOFOLLOW) == 0);
}

pid_t spawn_sleeper() {
  pid_t pid = fork();
  if (pid == 0) {
    for (;;) pause();
  }
  return pid;
}

void stop(pid_t pid) {
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
}

// A pid no process has: a child that exited and was reaped.
pid_t dead_pid() {
  pid_t pid = fork();
  if (pid == 0) _exit(0);
  int status = 0;
  waitpid(pid, &status, 0);
  return pid;
}

std::string boot() {
  std::string b = read_file("/proc/sys/kernel/random/boot_id");
  return b.substr(0, 36);
}

// The seed's identity() of a live pid, computed here from /proc without the library.
std::string seed_identity(pid_t pid) {
  std::string stat = read_file("/proc/" + std::to_string(pid) + "/stat");
  std::string rest = stat.substr(stat.rfind(") ") + 2);
  std::istringstream in(rest);
  std::string field;
  for (int i = 0; i < 20; ++i) in >> field;  // awk '{print $20}'
  return "linux " + boot() + " " + field;
}

struct Lines {
  std::vector<std::string> out, err;
  LeaseLineSink sink() {
    return [this](LeaseStream s, std::string_view line) {
      (s == LeaseStream::out ? out : err).emplace_back(line);
      return true;
    };
  }
};

constexpr std::int64_t T = 1900000000;  // the fixed now of these tests

const char* const test_env[] = {"PATH=/usr/bin:/bin", "LC_ALL=C", nullptr};

LeaseDirOptions fixed_options() {
  LeaseDirOptions o;
  o.environment = test_env;
  o.clock = fixed_clock(Instant{T, 500000000});
  o.lock_tries = 3;
  o.lock_retry_ms = 1;
  return o;
}

}  // namespace

TEST_SUITE("leasedir") {
  TEST_CASE("canonical pids") {
    CHECK(sh::canonical_pid("1") == 1);
    CHECK(sh::canonical_pid("2147483647") == 2147483647);
    CHECK_FALSE(sh::canonical_pid("2147483648"));
    CHECK_FALSE(sh::canonical_pid("0"));
    CHECK_FALSE(sh::canonical_pid("01"));
    CHECK_FALSE(sh::canonical_pid(""));
    CHECK_FALSE(sh::canonical_pid("-1"));
    CHECK_FALSE(sh::canonical_pid("+1"));
    CHECK_FALSE(sh::canonical_pid("12a"));
    CHECK_FALSE(sh::canonical_pid("99999999999"));
  }

  TEST_CASE("bash reads numbers as legal_number does") {
    CHECK(sh::bash_number("5") == 5);
    CHECK(sh::bash_number(" 5") == 5);
    CHECK(sh::bash_number("\n5") == 5);
    CHECK(sh::bash_number("+5") == 5);
    CHECK(sh::bash_number("-5") == -5);
    CHECK(sh::bash_number("5 \t") == 5);
    CHECK(sh::bash_number("007") == 7);
    CHECK(sh::bash_number("9223372036854775807") == INTMAX_MAX);
    CHECK(sh::bash_number("-9223372036854775808") == INTMAX_MIN);
    CHECK_FALSE(sh::bash_number("9223372036854775808"));
    CHECK_FALSE(sh::bash_number("5\n"));
    CHECK_FALSE(sh::bash_number(""));
    CHECK_FALSE(sh::bash_number(" "));
    CHECK_FALSE(sh::bash_number("+"));
    CHECK_FALSE(sh::bash_number("1 2"));
    CHECK_FALSE(sh::bash_number("0x10"));
  }

  TEST_CASE("tokens split as ${t%% *} and ${t#* }") {
    CHECK(sh::token_pid("123 linux x 5") == "123");
    CHECK(sh::token_identity("123 linux x 5") == "linux x 5");
    CHECK(sh::token_pid("123") == "123");
    CHECK(sh::token_identity("123") == "123");
    CHECK(sh::token_pid("123 ") == "123");
    CHECK(sh::token_identity("123 ") == "");
    CHECK(sh::token_pid("") == "");
    CHECK(sh::token_identity("") == "");
    CHECK(sh::token_pid(" x") == "");
    CHECK(sh::token_identity(" x") == "x");
    CHECK(sh::token_pid_malformed(""));
    CHECK(sh::token_pid_malformed("0"));
    CHECK(sh::token_pid_malformed("012"));
    CHECK(sh::token_pid_malformed("1a"));
    CHECK(sh::token_pid_malformed("-1"));
    CHECK_FALSE(sh::token_pid_malformed("12"));
  }

  TEST_CASE("the environment") {
    const char* env[] = {"A=1", "B=", "AB=2", "LANG=C.UTF-8", nullptr};
    CHECK(sh::env_value(env, "A") == "1");
    CHECK(sh::env_value(env, "B") == "");
    CHECK(sh::env_value(env, "AB") == "2");
    CHECK_FALSE(sh::env_value(env, "C"));
    CHECK(sh::env_first(env, {"B", "AB"}) == "2");
    CHECK_FALSE(sh::env_first(env, {"B", "C"}));
    CHECK(sh::EnvLocale(env).utf8());
    const char* c_env[] = {"LC_ALL=C", "LANG=C.UTF-8", nullptr};
    CHECK_FALSE(sh::EnvLocale(c_env).utf8());
    const char* empty_all[] = {"LC_ALL=", "LC_CTYPE=C.UTF-8", nullptr};
    CHECK(sh::EnvLocale(empty_all).utf8());
    const char* unknown[] = {"LANG=xx_YY.nothing", nullptr};
    CHECK_FALSE(sh::EnvLocale(unknown).utf8());
  }

  TEST_CASE("first lines as $(head -1 FILE)") {
    Scratch s;
    write_file(s / "a", "abc\ndef\n");
    write_file(s / "b", "\nx");
    write_file(s / "c", "");
    write_file(s / "d", std::string("a\0b\n", 4));
    write_file(s / "e", "no newline");
    write_file(s / "f", "a\r\n");
    CHECK(sh::first_line(s / "a") == "abc");
    CHECK(sh::first_line(s / "b") == "");
    CHECK(sh::first_line(s / "c") == "");
    CHECK(sh::first_line(s / "d") == "ab");
    CHECK(sh::first_line(s / "e") == "no newline");
    CHECK(sh::first_line(s / "f") == "a\r");
    CHECK_FALSE(sh::first_line(s / "missing"));
    CHECK_FALSE(sh::first_line(s.path));  // a directory: head fails
    REQUIRE(mkfifo((s / "fifo").c_str(), 0600) == 0);
    CHECK_FALSE(sh::first_line(s / "fifo"));  // never blocks
    write_file(s / "big", std::string(3u << 20, 'x'));
    CHECK(sh::first_line(s / "big")->size() == (1u << 20));
    REQUIRE(symlink("a", (s / "link").c_str()) == 0);
    CHECK(sh::first_line(s / "link") == "abc");
    REQUIRE(symlink("target\n\n", (s / "nl").c_str()) == 0);
    CHECK(sh::link_target(s / "nl") == "target");
    CHECK_FALSE(sh::link_target(s / "a"));
  }

  TEST_CASE("find -mmin compares in full precision, strictly") {
    Scratch s;
    Instant now{T, 500000000};
    write_file(s / "f", "");
    set_mtime(s / "f", T - 120, 500000000);  // exactly 2 minutes
    CHECK_FALSE(sh::modified_before(s / "f", now, 2));
    CHECK_FALSE(sh::modified_within(s / "f", now, 2));
    set_mtime(s / "f", T - 120, 499999999);
    CHECK(sh::modified_before(s / "f", now, 2));
    set_mtime(s / "f", T - 120, 500000001);
    CHECK(sh::modified_within(s / "f", now, 2));
    CHECK_FALSE(sh::modified_before(s / "missing", now, 2));
    CHECK_FALSE(sh::modified_within(s / "missing", now, 2));
    CHECK(sh::mtime_seconds(s / "f") == T - 120);
    // find DIR -mmin -2 prints a recent entry below an old directory.
    REQUIRE(mkdir((s / "d").c_str(), 0777) == 0);
    write_file(s / "d/x", "");
    set_mtime(s / "d/x", T - 10);
    set_mtime(s / "d", T - 1000);
    CHECK(sh::find_prints_within(s / "d", now, 2));
    set_mtime(s / "d/x", T - 1000);
    CHECK_FALSE(sh::find_prints_within(s / "d", now, 2));
    CHECK_FALSE(sh::find_prints_within(s / "missing", now, 2));
  }

  TEST_CASE("globs as bash expands them") {
    Scratch s;
    for (const char* n : {"b", "a", "10", "9", ".hidden", ".lock.claim.1", ".lock.break.claim.2", ".lockx.claim.",
                          ".lock.claim", ".claim.lock", ".lock.gone.3", "lock.claim.4"})
      write_file(s / n, "");
    using V = std::vector<std::string>;
    CHECK(sh::glob_names(s.path, "", "", nullptr) ==
          V{"10", "9", "a", "b", "lock.claim.4"});
    CHECK(sh::glob_names(s.path, ".lock", ".claim.", nullptr) ==
          V{".lock.break.claim.2", ".lock.claim.1", ".lockx.claim."});
    CHECK(sh::glob_names(s.path, ".lock.claim.", "", nullptr) == V{".lock.claim.1"});
    CHECK(sh::glob_names(s.path, ".lock", ".gone.", nullptr) == V{".lock.gone.3"});
    CHECK(sh::glob_names(s / "missing", "", "", nullptr).empty());
  }

  TEST_CASE("ps renders command names") {
    const char* c_env[] = {"LC_ALL=C", nullptr};
    const char* u_env[] = {"LANG=C.UTF-8", nullptr};
    sh::EnvLocale c(c_env), u(u_env);
    CHECK(sh::ps_command_text("sleep", c) == "sleep");
    CHECK(sh::ps_command_text("a\nb\x01", c) == "a.b.");
    CHECK(sh::ps_command_text("\xc3\xa9x\x7f", c) == "??x.");
    CHECK(sh::ps_command_text("\xc3\xa9x", u) == "\xc3\xa9x");
    CHECK(sh::ps_command_text("a\nb\x01" "c\x7f" "d", u) == "a?b?c?d");
    // From the first byte that is not UTF-8 on, procps' byte table (seen on procps-ng 4.0.2).
    CHECK(sh::ps_command_text("\xffz\x7f", u) == "?z.");
    CHECK(sh::ps_command_text("\xff\xc3\xa9\n\x01" "Ab", u) == "???..Ab");
    CHECK(sh::ps_command_text("a b/c", u) == "a b/c");
  }

  TEST_CASE("file tools and their messages") {
    Scratch s;
    write_file(s / "file", "x");
    auto m = sh::make_dirs(s / "file/sub", false);
    CHECK_FALSE(m.ok);
    CHECK(m.message == "mkdir: cannot create directory '" + (s / "file") + "': Not a directory");
    m = sh::make_dirs(s / "file", true);
    CHECK(m.message == "mkdir: cannot create directory \u2018" + (s / "file") + "\u2019: File exists");
    CHECK(sh::make_dirs(s / "a/b/c", false).ok);
    CHECK(sh::make_dirs(s / "a/b/c", false).ok);
    CHECK(sh::path_is_dir(s / "a/b/c"));

    // mv -f into a directory; a no-replace move never overwrites, silently.
    write_file(s / "src", "1");
    CHECK(sh::move_path(s / "src", s / "a", false, false).ok);
    CHECK(read_file(s / "a/src") == "1");
    write_file(s / "one", "1");
    write_file(s / "two", "2");
    auto r = sh::move_path(s / "one", s / "two", true, false);
    CHECK_FALSE(r.ok);
    CHECK(r.message.empty());
    CHECK(read_file(s / "two") == "2");
    CHECK(sh::move_path(s / "one", s / "two", false, false).ok);
    CHECK(read_file(s / "two") == "1");
    r = sh::move_path(s / "none", s / "x", false, false);
    CHECK(r.message == "mv: cannot stat '" + (s / "none") + "': No such file or directory");

    CHECK(sh::remove_tree(s / "a", false).ok);
    CHECK_FALSE(exists(s / "a"));
    CHECK(sh::remove_tree(s / "a", false).ok);  // rm -rf of nothing
    CHECK(sh::tool_quote("x", true) == "\u2018x\u2019");
    CHECK(sh::tool_quote("x", false) == "'x'");
  }

  TEST_CASE("processes as kill and ps see them") {
    pid_t live = spawn_sleeper();
    pid_t dead = dead_pid();
    CHECK(sh::name_alive(std::to_string(live), nullptr));
    CHECK_FALSE(sh::name_alive(std::to_string(dead), nullptr));
    CHECK(sh::name_alive("0", nullptr));        // kill -0 0: this process group
    CHECK(sh::name_alive("+1", nullptr));       // kill reads +1
    CHECK_FALSE(sh::name_alive("abc", nullptr));
    CHECK_FALSE(sh::name_alive("99999999999", nullptr));
    CHECK(sh::name_identity(std::to_string(live), nullptr) == seed_identity(live));
    CHECK(sh::name_identity(std::to_string(dead), nullptr) == "");
    CHECK(sh::name_identity("abc", nullptr) == "");
    const char* env[] = {"LANG=C.UTF-8", nullptr};
    sh::EnvLocale loc(env);
    std::string comm = read_file("/proc/" + std::to_string(live) + "/comm");
    CHECK(sh::name_command(std::to_string(live), nullptr, loc) == comm.substr(0, comm.size() - 1));
    CHECK(sh::name_command(std::to_string(dead), nullptr, loc) == "");
    CHECK(sh::name_parent(std::to_string(live), nullptr) == std::to_string(getpid()));
    CHECK(sh::name_parent(std::to_string(dead), nullptr) == "");
    // A thread that is not its group's leader: kill -0 sees it, ps -p does not.
    std::atomic<pid_t> tid{0};
    std::atomic<bool> done{false};
    std::thread t([&] {
      tid = gettid();
      while (!done) usleep(1000);
    });
    while (tid == 0) usleep(1000);
    CHECK(sh::name_alive(std::to_string(tid), nullptr));
    CHECK(sh::name_command(std::to_string(tid), nullptr, loc) == "");
    CHECK(sh::name_parent(std::to_string(tid), nullptr) == "");
    done = true;
    t.join();
    stop(live);
  }

  TEST_CASE("child processes: status, output, environment") {
    const char* env[] = {"PATH=/usr/bin:/bin", "X=1", nullptr};
    auto r = sh::run_tool({"sh", "-c", "echo \"$X$Y\"; exit 3"}, env, {"Y=2"});
    CHECK(r.status == 3);
    CHECK(r.out == "12\n");
    r = sh::run_tool({"sh", "-c", "kill -9 $$"}, env);
    CHECK(r.status == 128 + 9);
    CHECK(sh::run_tool({"no-such-program-here"}, env).status == 127);
    const char* no_path[] = {"PATH=/nonexistent", nullptr};
    CHECK(sh::run_tool({"sh", "-c", "true"}, no_path).status == 127);
  }

  TEST_CASE("list: every state, with exact lines") {
    Scratch s;
    pid_t live = spawn_sleeper();
    pid_t other = spawn_sleeper();
    pid_t dead = dead_pid();
    std::string me = std::to_string(getpid()), l = std::to_string(live), o = std::to_string(other),
                d = std::to_string(dead);
    write_file(s / l, seed_identity(live) + "\n");
    set_mtime(s / l, T - 59);  // 0m
    write_file(s / o, "linux " + boot() + " 1\n");
    set_mtime(s / o, T - 60);  // 1m: (T + 0.5 - (T - 60)) / 60 in whole seconds
    write_file(s / d, "");
    set_mtime(s / d, T - 3600);
    write_file(s / me, "");
    set_mtime(s / me, T - 120 * 60);  // no identity at 120 minutes: stale
    write_file(s / "0", "");
    set_mtime(s / "0", T + 90);  // -1m
    write_file(s / ".hidden", "");
    REQUIRE(mkdir((s / "12").c_str(), 0777) == 0);
    LeaseDir leases(s.path, fixed_options());
    Lines lines;
    auto rc = leases.list(lines.sink());
    REQUIRE(rc);
    CHECK(*rc == 0);
    // glob order: byte order in the C locale of this test
    std::vector<std::string> expect;
    std::vector<std::pair<std::string, std::string>> rows = {
        {l, l + " 0m alive"}, {o, o + " 1m stale"}, {d, d + " 60m dead"}, {me, me + " 120m stale"}, {"0", "0 -1m alive"}};
    std::sort(rows.begin(), rows.end());
    for (auto& r : rows) expect.push_back(r.second);
    CHECK(lines.out == expect);
    CHECK(lines.err.empty());
    auto entries = leases.entries();
    REQUIRE(entries.size() == 5);
    stop(live);
    stop(other);
  }

  TEST_CASE("live: reclaims stale leases with one line, skips the dead and the ancestry") {
    Scratch s;
    pid_t live = spawn_sleeper();
    pid_t other = spawn_sleeper();
    pid_t dead = dead_pid();
    std::string me = std::to_string(getpid()), l = std::to_string(live), o = std::to_string(other),
                d = std::to_string(dead);
    write_file(s / l, seed_identity(live) + "\n");
    set_mtime(s / l, T - 61);
    write_file(s / o, "linux " + boot() + " 1\n");
    set_mtime(s / o, T - 125);
    write_file(s / d, "x\n");
    write_file(s / me, seed_identity(getpid()) + "\n");
    set_mtime(s / me, T);
    LeaseDir leases(s.path, fixed_options());
    Lines lines;
    auto rc = leases.live("", false, lines.sink());
    REQUIRE(rc);
    CHECK(*rc == 0);
    std::string my_comm = read_file("/proc/self/comm");
    my_comm.pop_back();
    std::vector<std::pair<std::string, std::string>> rows = {{l, l + " 1m " + my_comm}, {me, me + " 0m " + my_comm}};
    std::sort(rows.begin(), rows.end());
    CHECK(lines.out == std::vector<std::string>{rows[0].second, rows[1].second});
    REQUIRE(lines.err.size() == 1);
    CHECK(lines.err[0] == "gstack-lease: reclaimed stale lease " + o + " (2m; recorded 'linux " + boot() +
                              " 1', pid " + o + " is now " + my_comm + " '" + seed_identity(other) + "')");
    CHECK_FALSE(exists(s / o));
    CHECK(exists(s / d));  // dead leases are left for touch's prune
    CHECK_FALSE(exists(s / ".lock"));

    // The caller's own chain never counts: this process and its parents, not its child.
    Lines mine;
    rc = leases.live(me, false, mine.sink());
    REQUIRE(rc);
    CHECK(*rc == 0);
    CHECK(mine.out == std::vector<std::string>{l + " 1m " + my_comm});
    Lines child;
    rc = leases.live(l, false, child.sink());  // the child and, above it, this process
    REQUIRE(rc);
    CHECK(*rc == 1);
    CHECK(child.out.empty());
    Lines init;
    rc = leases.live("1", false, init.sink());  // 1 is never a caller
    REQUIRE(rc);
    CHECK(init.out.size() == 2);
    stop(live);
    stop(other);
  }

  TEST_CASE("live: the shared harness counts under 120 minutes with the option") {
    Scratch s;
    std::string me = std::to_string(getpid());
    write_file(s / me, seed_identity(getpid()) + "\n");
    set_mtime(s / me, T - 60);
    std::string my_comm = read_file("/proc/self/comm");
    my_comm.pop_back();
    LeaseDirOptions o = fixed_options();
    o.shared_harness = my_comm;
    LeaseDir leases(s.path, o);
    Lines a, b, c;
    REQUIRE(leases.live(me, true, a.sink()));
    CHECK(a.out == std::vector<std::string>{me + " 1m " + my_comm});
    REQUIRE(leases.live(me, false, b.sink()));
    CHECK(b.out.empty());
    set_mtime(s / me, T - 120 * 60);
    REQUIRE(leases.live(me, true, c.sink()));
    CHECK(c.out.empty());
    // Named by the environment when the option is empty.
    std::string var = "LEASEJUDGE_SHARED_HARNESS=" + my_comm;
    const char* env[] = {var.c_str(), "PATH=/usr/bin:/bin", nullptr};
    LeaseDirOptions e = fixed_options();
    e.environment = env;
    LeaseDir by_env(s.path, e);
    set_mtime(s / me, T - 60);
    Lines d;
    REQUIRE(by_env.live(me, true, d.sink()));
    CHECK(d.out.size() == 1);
  }

  TEST_CASE("touch: the lease, the prune window, claims and leftovers") {
    Scratch s;
    // Now is the real time here: touch writes the lease at the real time, and a lease
    // that looked 120 minutes old to the clock would be pruned at once.
    const std::int64_t T = time(nullptr);
    LeaseDirOptions opts = fixed_options();
    opts.clock = fixed_clock(Instant{T, 500000000});
    auto fixed_options = [&] { return opts; };
    pid_t live = spawn_sleeper();
    pid_t dead = dead_pid();
    std::string l = std::to_string(live), d = std::to_string(dead);
    std::string dir = s / "leases";
    REQUIRE(mkdir(dir.c_str(), 0777) == 0);
    auto at = [&](const std::string& name, const std::string& content, std::int64_t sec, long nsec = 0) {
      write_file(dir + "/" + name, content);
      set_mtime(dir + "/" + name, sec, nsec);
    };
    at("old", "", T - 7200, 500000000);           // exactly 120 minutes: kept
    at("older", "", T - 7200, 499999999);         // a nanosecond more: pruned
    at(".tmp.1.2", "", T - 9000);                 // a dotfile too
    at(".lock.keep", "", T - 9000);               // .lock*: never by age
    at(".lock.claim.9", "9 \n", T - 121);         // no identity, over 2 minutes: abandoned
    at(".lock.claim.8", "8 \n", T - 119);         // young
    at(".lock.claim." + l, l + " " + seed_identity(live) + "\n", T - 500);  // its claimant lives
    at(".lock.claim." + d, d + " linux " + boot() + " 1\n", T - 500);      // its claimant is gone
    at(".lock.break.claim.7", "", T - 500);       // empty: gone
    REQUIRE(mkdir((dir + "/.lock.gone.5").c_str(), 0777) == 0);
    write_file(dir + "/.lock.gone.5/owner", "x");
    LeaseDir leases(dir, fixed_options());
    Lines lines;
    auto rc = leases.touch(l, lines.sink());
    REQUIRE(rc);
    CHECK(*rc == 0);
    CHECK(lines.err.empty());
    CHECK(read_file(dir + "/" + l) == seed_identity(live) + "\n");
    CHECK(exists(dir + "/old"));
    CHECK_FALSE(exists(dir + "/older"));
    CHECK_FALSE(exists(dir + "/.tmp.1.2"));
    CHECK(exists(dir + "/.lock.keep"));
    CHECK_FALSE(exists(dir + "/.lock.claim.9"));
    CHECK(exists(dir + "/.lock.claim.8"));
    CHECK(exists(dir + "/.lock.claim." + l));
    CHECK_FALSE(exists(dir + "/.lock.claim." + d));
    CHECK_FALSE(exists(dir + "/.lock.break.claim.7"));
    CHECK_FALSE(exists(dir + "/.lock.gone.5"));
    CHECK_FALSE(exists(dir + "/.lock"));
    // No identity: an empty lease. A name that is no pid: the same.
    REQUIRE(leases.touch(d, lines.sink()));
    CHECK(read_file(dir + "/" + d) == "");
    REQUIRE(leases.touch("abc", lines.sink()));
    CHECK(read_file(dir + "/abc") == "");
    // The directory is made; a file in its way is mkdir's message and exit 2.
    LeaseDir fresh(s / "new/leases", fixed_options());
    REQUIRE(fresh.touch(l, lines.sink()));
    CHECK(exists(s / "new/leases/" + l));
    write_file(s / "blocker", "");
    LeaseDir blocked(s / "blocker/leases", fixed_options());
    Lines b;
    rc = blocked.touch(l, b.sink());
    REQUIRE(rc);
    CHECK(*rc == 2);
    CHECK(b.err == std::vector<std::string>{"mkdir: cannot create directory '" + (s / "blocker") +
                                            "': Not a directory"});
    // A temporary that cannot be made: exit 2, the lock released.
    Lines t;
    rc = leases.touch("sub/" + l, t.sink());
    REQUIRE(rc);
    CHECK(*rc == 2);
    REQUIRE(t.err.size() == 1);
    CHECK(t.err[0] == "gstack-lease: " + dir + "/.sub/" + l + "." + std::to_string(getpid()) +
                          ": No such file or directory");
    CHECK_FALSE(exists(dir + "/.lock"));
    stop(live);
  }

  TEST_CASE("the lock: tokens, live and dead holders, orphans") {
    Scratch s;
    pid_t holder = spawn_sleeper();
    pid_t dead = dead_pid();
    std::string lock = s / ".lock";
    LeaseDir leases(s.path, fixed_options());
    CHECK(leases.token() == std::to_string(getpid()) + " " + seed_identity(getpid()));

    SUBCASE("taken and released") {
      auto got = leases.lock();
      REQUIRE(got);
      CHECK(*got);
      CHECK(read_file(lock + "/owner") == leases.token() + "\n");
      CHECK_FALSE(exists(s / (".lock.claim." + std::to_string(getpid()))));
      leases.unlock();
      CHECK_FALSE(exists(lock));
    }
    SUBCASE("a live holder keeps it; touch exits 3 naming it") {
      REQUIRE(mkdir(lock.c_str(), 0777) == 0);
      std::string token = std::to_string(holder) + " " + seed_identity(holder);
      write_file(lock + "/owner", token + "\n");
      auto got = leases.lock();
      REQUIRE(got);
      CHECK_FALSE(*got);
      CHECK(leases.lock_owner() == token);
      Lines lines;
      auto rc = leases.touch("5", lines.sink());
      REQUIRE(rc);
      CHECK(*rc == 3);
      CHECK(lines.err == std::vector<std::string>{"gstack-lease: the lease directory is locked by live process " +
                                                  std::to_string(holder) + "; lease 5 not renewed"});
      CHECK(read_file(lock + "/owner") == token + "\n");
      leases.unlock();  // not ours: kept
      CHECK(exists(lock + "/owner"));
    }
    SUBCASE("a dead holder's lock is broken") {
      REQUIRE(mkdir(lock.c_str(), 0777) == 0);
      write_file(lock + "/owner", std::to_string(dead) + " linux x 1\n");
      auto got = leases.lock();
      REQUIRE(got);
      CHECK(*got);
      CHECK(read_file(lock + "/owner") == leases.token() + "\n");
      CHECK_FALSE(exists(s / ".lock.break"));
      leases.unlock();
    }
    SUBCASE("owners whose pid is malformed are gone") {
      for (const std::string& owner : std::vector<std::string>{"0 x", "0" + std::to_string(holder) + " x", "x 1", " 1", ""}) {
        CAPTURE(owner);
        REQUIRE(mkdir(lock.c_str(), 0777) == 0);
        write_file(lock + "/owner", owner + "\n");
        set_mtime(lock, T - 10);
        auto got = leases.lock();
        REQUIRE(got);
        CHECK(*got);
        leases.unlock();
      }
    }
    SUBCASE("ownerless: broken at 2 s, kept when younger or claimed by a live taker") {
      REQUIRE(mkdir(lock.c_str(), 0777) == 0);
      set_mtime(lock, T - 1);  // 1 s (the clock is T + 0.5, the age in whole seconds)
      auto got = leases.lock();
      REQUIRE(got);
      CHECK_FALSE(*got);
      CHECK(leases.lock_owner() == "");
      set_mtime(lock, T - 59 - 60);  // far in the past, but a live claimant
      write_file(s / (".lock.claim." + std::to_string(holder)), std::to_string(holder) + " " + seed_identity(holder) + "\n");
      got = leases.lock();
      REQUIRE(got);
      CHECK_FALSE(*got);
      unlink((s / (".lock.claim." + std::to_string(holder))).c_str());
      set_mtime(lock, T + 59);  // 59 s in the future: young
      got = leases.lock();
      REQUIRE(got);
      CHECK_FALSE(*got);
      set_mtime(lock, T + 60);  // a minute in the future: clock skew, old
      got = leases.lock();
      REQUIRE(got);
      CHECK(*got);
      leases.unlock();
    }
    SUBCASE("a symbolic-link lock names its holder") {
      REQUIRE(symlink((std::to_string(holder) + " " + seed_identity(holder)).c_str(), lock.c_str()) == 0);
      auto got = leases.lock();
      REQUIRE(got);
      CHECK_FALSE(*got);
      unlink(lock.c_str());
      REQUIRE(symlink((std::to_string(dead) + " x").c_str(), lock.c_str()) == 0);
      got = leases.lock();
      REQUIRE(got);
      CHECK(*got);
      leases.unlock();
    }
    SUBCASE("the tries come from the environment") {
      REQUIRE(mkdir(lock.c_str(), 0777) == 0);
      write_file(lock + "/owner", std::to_string(holder) + " " + seed_identity(holder) + "\n");
      struct Case {
        std::vector<const char*> env;
        int tries;
      };
      for (const Case& c : {Case{{"GSTACK_LEASE_LOCK_TRIES=0", nullptr}, 1},
                            Case{{"GSTACK_LEASE_LOCK_TRIES=4", nullptr}, 4},
                            Case{{"GSTACK_LEASE_LOCK_TRIES=004", nullptr}, 4},
                            Case{{"LEASEJUDGE_LEASE_LOCK_TRIES=2", "GSTACK_LEASE_LOCK_TRIES=7", nullptr}, 2},
                            Case{{"LEASEJUDGE_LEASE_LOCK_TRIES=", "GSTACK_LEASE_LOCK_TRIES=3", nullptr}, 3},
                            Case{{"GSTACK_LEASE_LOCK_TRIES=2x", nullptr}, 300},
                            Case{{"GSTACK_LEASE_LOCK_TRIES=", nullptr}, 300},
                            Case{{nullptr}, 300}}) {
        CAPTURE(c.tries);
        LeaseDirOptions o = fixed_options();
        o.lock_tries = -1;
        o.lock_retry_ms = 0;
        o.environment = c.env.data();
        int polls = 0;
        o.interrupted = [&] {
          ++polls;
          return false;
        };
        LeaseDir counted(s.path, o);
        auto got = counted.lock();
        REQUIRE(got);
        CHECK_FALSE(*got);
        // polled before and after each pause; no pause after the last try
        CHECK(polls == 2 * (c.tries - 1));
      }
    }
    SUBCASE("interrupted while waiting") {
      REQUIRE(mkdir(lock.c_str(), 0777) == 0);
      write_file(lock + "/owner", std::to_string(holder) + " " + seed_identity(holder) + "\n");
      LeaseDirOptions o = fixed_options();
      o.lock_tries = 1000000;
      o.interrupted = [] { return true; };
      LeaseDir stopped(s.path, o);
      auto got = stopped.lock();
      REQUIRE_FALSE(got);
      CHECK(got.code() == Errc::user);
      Lines lines;
      auto rc = stopped.touch("5", lines.sink());
      CHECK(rc.code() == Errc::user);
    }
    stop(holder);
  }

  TEST_CASE("a sink that stops a verb gets Errc::user, and the lock is released") {
    Scratch s;
    pid_t live = spawn_sleeper();
    pid_t other = spawn_sleeper();
    write_file(s / std::to_string(other), "linux " + boot() + " 1\n");
    write_file(s / std::to_string(live), seed_identity(live) + "\n");
    LeaseDir leases(s.path, fixed_options());
    LeaseLineSink refuse = [](LeaseStream, std::string_view) { return false; };
    CHECK(leases.list(refuse).code() == Errc::user);
    CHECK(leases.live("", false, refuse).code() == Errc::user);
    CHECK_FALSE(exists(s / ".lock"));
    stop(live);
    stop(other);
  }

  TEST_CASE("threads of one process take the lock in turn") {
    Scratch s;
    LeaseDirOptions o;
    o.lock_retry_ms = 1;
    std::atomic<int> inside{0}, overlap{0}, renewed{0};
    std::vector<std::thread> threads;
    for (int i = 0; i < 4; ++i) {
      threads.emplace_back([&, i] {
        LeaseDir leases(s.path, o);
        for (int k = 0; k < 25; ++k) {
          auto got = leases.lock();
          if (!got || !*got) continue;
          if (inside.fetch_add(1) != 0) ++overlap;
          usleep(100);
          inside.fetch_sub(1);
          leases.unlock();
          Lines lines;
          auto rc = leases.touch(std::to_string(100 + i), lines.sink());
          if (rc && *rc == 0) ++renewed;
        }
      });
    }
    for (auto& t : threads) t.join();
    CHECK(overlap == 0);
    CHECK(renewed == 100);
    CHECK_FALSE(exists(s / ".lock"));
  }

  TEST_CASE("one thread holding the lock is told so, never deadlocked") {
    Scratch s;
    LeaseDirOptions o = fixed_options();
    LeaseDir first(s.path, o), second(s.path, o);
    auto got = first.lock();
    REQUIRE(got);
    REQUIRE(*got);
    auto again = first.lock();
    REQUIRE(again);
    CHECK_FALSE(*again);
    CHECK(first.lock_owner() == first.token());
    auto other = second.lock();
    REQUIRE(other);
    CHECK_FALSE(*other);
    CHECK(second.lock_owner() == second.token());
    CHECK(exists(s / ".lock/owner"));
    first.unlock();
    CHECK_FALSE(exists(s / ".lock"));
    got = second.lock();
    REQUIRE(got);
    CHECK(*got);
    // Left held: the destructor releases it.
  }

  TEST_CASE("the command: usage, arguments, roots") {
    Scratch s;
    LeaseDirOptions o;
    Lines help;
    std::vector<std::string_view> args{"--help"};
    auto rc = run_lease_command(args, {}, o, help.sink());
    REQUIRE(rc);
    CHECK(*rc == 0);
    CHECK(help.out.size() > 5);
    Lines none;
    rc = run_lease_command({}, {}, o, none.sink());
    CHECK(*rc == 0);
    CHECK(none.out == help.out);
    Lines bad;
    args = {"bogus", "--zz"};
    rc = run_lease_command(args, {}, o, bad.sink());
    CHECK(*rc == 2);
    CHECK(bad.err == std::vector<std::string>{"gstack-lease: unknown argument '--zz'"});
    Lines verb;
    args = {"bogus"};
    rc = run_lease_command(args, {}, o, verb.sink());
    CHECK(*rc == 2);
    CHECK(verb.err == std::vector<std::string>{"gstack-lease: unknown verb 'bogus'"});
    Lines notgit;
    args = {"touch", "--root", s.path, "--pid", "5"};
    rc = run_lease_command(args, {}, o, notgit.sink());
    CHECK(*rc == 2);
    CHECK(notgit.err == std::vector<std::string>{"gstack-lease: " + s.path + " is not a git checkout"});
    CHECK_FALSE(exists(s / ".git"));

    REQUIRE(std::system(("git init -q '" + (s / "repo") + "' >/dev/null 2>&1").c_str()) == 0);
    Lines touched;
    std::string repo = s / "repo";  // args only view their strings
    args = {"touch", "--root", repo};
    LeaseCommandDefaults defaults;
    defaults.pid = std::to_string(getpid());
    rc = run_lease_command(args, defaults, o, touched.sink());
    REQUIRE(rc);

    CHECK(*rc == 0);
    CHECK(read_file(s / ("repo/.git/gstack-leases/" + std::to_string(getpid()))) == seed_identity(getpid()) + "\n");
    Lines from;
    args = {"touch", "--root", repo, "--from", "77", "--pid", ""};
    rc = run_lease_command(args, defaults, o, from.sink());
    CHECK(*rc == 0);
    CHECK(exists(s / "repo/.git/gstack-leases/77"));
    // The directory from the environment; the root must still be a checkout.
    std::string var = "LEASEJUDGE_LEASE_DIR=" + (s / "elsewhere");
    const char* env[] = {var.c_str(), "GSTACK_LEASE_DIR=/nonexistent", "PATH=/usr/bin:/bin", nullptr};
    LeaseDirOptions e;
    e.environment = env;
    CHECK(lease_dir_of(s / "repo", e).value() == s / "elsewhere");
    CHECK(lease_dir_of(s.path, e).code() == Errc::not_found);
    const char* gstack_env[] = {"GSTACK_LEASE_DIR=/x/y", "LEASEJUDGE_LEASE_DIR=", "PATH=/usr/bin:/bin", nullptr};
    e.environment = gstack_env;
    CHECK(lease_dir_of(s / "repo", e).value() == "/x/y");
    CHECK(lease_dir_of(s / "repo", {}).value() == s / "repo/.git/gstack-leases");
  }

  TEST_CASE("git dirs: a worktree's .git file, a bare repository, a subdirectory") {
    Scratch s;
    std::string git = "git -c user.email=t@t -c user.name=t ";
    REQUIRE(std::system((git + "init -q '" + (s / "main") + "' && " + git + "-C '" + (s / "main") +
                         "' commit -q --allow-empty -m x && " + git + "-C '" + (s / "main") + "' worktree add -q '" +
                         (s / "wt") + "' >/dev/null 2>&1 && " + git + "init -q --bare '" + (s / "bare.git") +
                         "' && mkdir -p '" + (s / "main/sub/dir") + "'")
                            .c_str()) == 0);
    CHECK(checkout_git_dir(s / "main").value() == s / "main/.git");
    CHECK(checkout_git_dir(s / "main/sub/dir").value() == s / "main/.git");
    CHECK(checkout_git_dir(s / "wt").value() == s / "main/.git/worktrees/wt");
    CHECK(checkout_git_dir(s / "bare.git").value() == s / "bare.git");
    CHECK(checkout_git_dir(s / "none").code() == Errc::not_found);
    CHECK(checkout_git_dir(s.path).code() == Errc::not_found);
  }

  TEST_CASE("state names") {
    CHECK(std::string(lease_state_name(LeaseState::alive)) == "alive");
    CHECK(std::string(lease_state_name(LeaseState::dead)) == "dead");
    CHECK(std::string(lease_state_name(LeaseState::stale)) == "stale");
  }
}
