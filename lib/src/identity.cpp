#include "leasejudge/identity.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <ifaddrs.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <openssl/evp.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "child.hpp"

namespace leasejudge {
namespace {

// The whole of a small file (a /proc entry), or nullopt with errno kept.
std::optional<std::string> read_small_file(const char* path) {
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string text;
  char buf[4096];
  while (true) {
    ssize_t got = ::read(fd, buf, sizeof buf);
    if (got < 0) {
      if (errno == EINTR) continue;
      int saved = errno;
      ::close(fd);
      errno = saved;
      return std::nullopt;
    }
    if (got == 0) break;
    text.append(buf, static_cast<std::size_t>(got));
    if (text.size() > (1u << 20)) break;  // no /proc file we read is this long
  }
  ::close(fd);
  return text;
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

template <typename Int>
std::optional<Int> parse_decimal(std::string_view s) {
  if (s.empty()) return std::nullopt;
  for (char c : s)
    if (c < '0' || c > '9') return std::nullopt;
  Int v{};
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

// The n-th (1-based) space-separated field after the last ')' of a stat line; the
// fields there are numbered from 3 (state) on, as proc(5) numbers them.
std::optional<std::string_view> stat_field(std::string_view line, int field) {
  auto close = line.rfind(')');
  if (close == std::string_view::npos) return std::nullopt;
  std::string_view rest = line.substr(close + 1);
  int index = 2;
  while (!rest.empty()) {
    while (!rest.empty() && is_space(rest.front())) rest.remove_prefix(1);
    if (rest.empty()) break;
    std::size_t end = 0;
    while (end < rest.size() && !is_space(rest[end])) ++end;
    ++index;
    if (index == field) return rest.substr(0, end);
    rest.remove_prefix(end);
  }
  return std::nullopt;
}

long clock_ticks_per_second() {
  static const long ticks = [] {
    long t = sysconf(_SC_CLK_TCK);
    return t > 0 ? t : 100;
  }();
  return ticks;
}

// pidfd_open(2) and pidfd_send_signal(2) through syscall(2): glibc 2.36 has no
// wrappers in every header set, and the kernel may lack them (ENOSYS).
int open_pidfd(Pid pid) {
#ifdef SYS_pidfd_open
  return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
#else
  errno = ENOSYS;
  return -1;
#endif
}

int signal_pidfd(int pidfd) {
#ifdef SYS_pidfd_send_signal
  return static_cast<int>(::syscall(SYS_pidfd_send_signal, pidfd, 0, nullptr, 0));
#else
  errno = ENOSYS;
  return -1;
#endif
}

Result<std::string> read_stat_line(Pid pid) {
  auto path = fmt::format("/proc/{}/stat", pid);
  auto text = read_small_file(path.c_str());
  if (!text) {
    if (errno == ENOENT || errno == ESRCH)
      return Error{Errc::not_found, fmt::format("process {} does not exist", pid)};
    return Error{Errc::io, fmt::format("cannot read {}: {}", path, std::strerror(errno))};
  }
  return std::move(*text);
}

std::string hex(const unsigned char* bytes, std::size_t n) {
  std::string out;
  out.reserve(n * 2);
  for (std::size_t i = 0; i < n; ++i) fmt::format_to(std::back_inserter(out), "{:02x}", bytes[i]);
  return out;
}

bool lease_line_valid(std::string_view line) {
  // ^linux [0-9a-f-]{36} [0-9]+$
  constexpr std::string_view prefix = "linux ";
  if (line.substr(0, prefix.size()) != prefix) return false;
  line.remove_prefix(prefix.size());
  if (line.size() < 38) return false;
  for (std::size_t i = 0; i < 36; ++i) {
    char c = line[i];
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || c == '-')) return false;
  }
  if (line[36] != ' ') return false;
  line.remove_prefix(37);
  if (line.empty()) return false;
  return std::all_of(line.begin(), line.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

// --- boot id -------------------------------------------------------------------

std::string read_boot_id() {
  auto text = read_small_file("/proc/sys/kernel/random/boot_id");
  if (!text) return std::string(no_boot_id);
  auto id = trim(*text);
  return id.empty() ? std::string(no_boot_id) : std::string(id);
}

const std::string& boot_id() {
  static const std::string id = read_boot_id();
  return id;
}

// --- processes ------------------------------------------------------------------

Liveness liveness(Pid pid) noexcept {
  if (pid <= 0) return Liveness::unknown;
  if (::kill(pid, 0) == 0) return Liveness::alive;
  if (errno == EPERM) return Liveness::alive;  // it exists; it is someone else's
  if (errno == ESRCH) return Liveness::dead;
  return Liveness::unknown;
}

std::optional<std::uint64_t> parse_stat_start_ticks(std::string_view stat_line) noexcept {
  auto field = stat_field(stat_line, 22);
  if (!field) return std::nullopt;
  return parse_decimal<std::uint64_t>(*field);
}

std::optional<Pid> parse_stat_ppid(std::string_view stat_line) noexcept {
  auto field = stat_field(stat_line, 4);
  if (!field) return std::nullopt;
  return parse_decimal<Pid>(*field);
}

Result<std::int64_t> boot_time_ms() {
  auto text = read_small_file("/proc/stat");
  if (!text) return Error{Errc::io, fmt::format("cannot read /proc/stat: {}", std::strerror(errno))};
  std::string_view rest = *text;
  while (!rest.empty()) {
    auto eol = rest.find('\n');
    std::string_view line = rest.substr(0, eol);
    if (line.substr(0, 6) == "btime ") {
      auto secs = parse_decimal<std::int64_t>(trim(line.substr(6)));
      if (!secs) break;
      return *secs * 1000;
    }
    if (eol == std::string_view::npos) break;
    rest.remove_prefix(eol + 1);
  }
  return Error{Errc::io, "/proc/stat holds no readable btime"};
}

namespace {
// btime read once per process: the kernel derives it from the wall clock minus the
// time since boot, so it can move by a second between reads when the clock is
// stepped; one value keeps a process's own view of starts consistent.
Result<std::int64_t> cached_boot_time_ms() {
  static const Result<std::int64_t> btime = boot_time_ms();
  return btime;
}
}  // namespace

Result<ProcessStart> process_start(Pid pid) {
  if (pid <= 0) return Error{Errc::invalid_argument, fmt::format("no process has pid {}", pid)};
  // Pin the process with a pidfd: if it is still alive after the read, the stat we
  // read was its own, not that of a process that took its pid meanwhile.
  int pidfd = open_pidfd(pid);
  if (pidfd < 0 && errno == ESRCH) return Error{Errc::not_found, fmt::format("process {} does not exist", pid)};
  auto line = read_stat_line(pid);
  if (pidfd >= 0) {
    int rc = signal_pidfd(pidfd);
    int saved = errno;
    ::close(pidfd);
    if (rc != 0 && saved == ESRCH)
      return Error{Errc::not_found, fmt::format("process {} ended while its start was read", pid)};
  }
  if (!line) return std::move(line).error();
  auto ticks = parse_stat_start_ticks(*line);
  if (!ticks) return Error{Errc::io, fmt::format("/proc/{}/stat holds no readable start time", pid)};
  auto btime = cached_boot_time_ms();
  if (!btime) return btime.error();
  ProcessStart start;
  start.ticks = *ticks;
  start.unix_ms = *btime + static_cast<std::int64_t>(*ticks * 1000 / static_cast<std::uint64_t>(clock_ticks_per_second()));
  return start;
}

Result<Pid> parent_of(Pid pid) {
  if (pid <= 0) return Error{Errc::invalid_argument, fmt::format("no process has pid {}", pid)};
  auto line = read_stat_line(pid);
  if (!line) return std::move(line).error();
  auto ppid = parse_stat_ppid(*line);
  if (!ppid) return Error{Errc::io, fmt::format("/proc/{}/stat holds no readable parent", pid)};
  return *ppid;
}

std::vector<Pid> parent_chain(Pid pid, std::size_t max_hops) {
  std::vector<Pid> chain;
  Pid p = pid;
  while (chain.size() < max_hops && p > 1) {
    chain.push_back(p);
    auto parent = parent_of(p);
    if (!parent) break;
    p = *parent;
  }
  return chain;
}

// --- step owner tokens -----------------------------------------------------------

std::string format_owner_token(std::string_view boot, Pid pid, std::int64_t start_ms) {
  char base36[24];
  auto [end, ec] = std::to_chars(base36, base36 + sizeof base36, start_ms, 36);
  (void)ec;  // 24 bytes hold any int64 in base 36
  return fmt::format("{}.{}.{}", boot, pid, std::string_view(base36, static_cast<std::size_t>(end - base36)));
}

std::optional<OwnerToken> parse_owner_token(std::string_view text) {
  auto first = text.find('.');
  if (first == std::string_view::npos) return std::nullopt;
  auto second = text.find('.', first + 1);
  if (second == std::string_view::npos || text.find('.', second + 1) != std::string_view::npos) return std::nullopt;
  std::string_view boot = text.substr(0, first);
  std::string_view pid_text = text.substr(first + 1, second - first - 1);
  std::string_view start_text = text.substr(second + 1);

  if (boot != no_boot_id) {
    if (boot.size() != 36) return std::nullopt;
    for (char c : boot)
      if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || c == '-')) return std::nullopt;
  }
  if (pid_text.empty() || pid_text.front() == '0') return std::nullopt;
  auto pid = parse_decimal<Pid>(pid_text);
  if (!pid || *pid <= 0) return std::nullopt;
  if (start_text.empty() || (start_text.front() == '0' && start_text.size() > 1)) return std::nullopt;
  for (char c : start_text)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z'))) return std::nullopt;
  std::int64_t start = 0;
  auto [p, ec] = std::from_chars(start_text.data(), start_text.data() + start_text.size(), start, 36);
  if (ec != std::errc() || p != start_text.data() + start_text.size()) return std::nullopt;
  return OwnerToken{std::string(boot), *pid, start};
}

Result<std::string> owner_token_of(Pid pid) {
  auto start = process_start(pid);
  if (!start) return start.error();
  return format_owner_token(boot_id(), pid, start->unix_ms);
}

const std::string& self_owner_token() {
  static const std::string token = [] {
    auto t = owner_token_of(static_cast<Pid>(::getpid()));
    // Our own /proc entry is always there; should it not be, the wall clock stands
    // in for the start, as the step seed's own token uses.
    if (t) return std::move(t).value();
    timespec now{};
    clock_gettime(CLOCK_REALTIME, &now);
    return format_owner_token(boot_id(), static_cast<Pid>(::getpid()),
                              static_cast<std::int64_t>(now.tv_sec) * 1000 + now.tv_nsec / 1000000);
  }();
  return token;
}

// --- lease identities ---------------------------------------------------------------

bool valid_lease_identity(std::string_view text) noexcept {
  if (text.substr(0, 6) == "linux ") {
    // The seed pipes the text to grep: any one of its lines may match.
    while (true) {
      auto eol = text.find('\n');
      if (lease_line_valid(text.substr(0, eol))) return true;
      if (eol == std::string_view::npos) return false;
      text.remove_prefix(eol + 1);
    }
  }
  if (text.size() > 3 && text.substr(0, 3) == "ps ") {
    text.remove_prefix(3);
    return std::any_of(text.begin(), text.end(), [](char c) { return c != ' '; });
  }
  return false;
}

std::string_view lease_identity_backend(std::string_view text) noexcept {
  return text.substr(0, text.find(' '));
}

std::string lease_identity_of(Pid pid) {
  std::string id;
  auto boot = read_small_file("/proc/sys/kernel/random/boot_id");
  auto stat_path = fmt::format("/proc/{}/stat", pid);
  if (pid > 0 && boot && ::access(stat_path.c_str(), R_OK) == 0) {
    auto start = process_start(pid);
    if (!start) return "";
    // The seed's $(cat ...) drops trailing newlines only.
    std::string_view b = *boot;
    while (!b.empty() && b.back() == '\n') b.remove_suffix(1);
    id = fmt::format("linux {} {}", b, start->ticks);
  } else {
    ChildRun run;
    run.argv = {"ps", "-o", "lstart=", "-p", std::to_string(pid)};
    run.env = {{"LC_ALL", "C"}, {"TZ", "UTC0"}};
    run.timeout = std::chrono::seconds(10);
    auto ps = run_child(run);
    std::string_view lstart = ps ? std::string_view(ps->out) : std::string_view();
    // sed 's/^ *//; s/ *$//' on each line; the lstart of one pid is one line.
    while (!lstart.empty() && lstart.back() == '\n') lstart.remove_suffix(1);
    while (!lstart.empty() && lstart.front() == ' ') lstart.remove_prefix(1);
    while (!lstart.empty() && lstart.back() == ' ') lstart.remove_suffix(1);
    id = fmt::format("ps {}", lstart);
  }
  return valid_lease_identity(id) ? id : "";
}

// --- judgement --------------------------------------------------------------------------

const char* holder_state_name(HolderState s) noexcept {
  switch (s) {
    case HolderState::alive: return "alive";
    case HolderState::dead: return "dead";
    case HolderState::recycled: return "recycled";
    case HolderState::other_boot: return "other-boot";
    case HolderState::unknown: return "unknown";
  }
  return "unknown";
}

HolderJudgement judge_owner_token(std::string_view token, const OwnerJudgeOptions& opts) {
  auto owner = parse_owner_token(token);
  if (!owner) {
    return {HolderState::unknown, fmt::format("the owner '{}' is not a well-formed owner token", token)};
  }
  const std::string& ours = boot_id();
  if (owner->boot_id != no_boot_id && ours != no_boot_id && owner->boot_id != ours) {
    return {HolderState::other_boot,
            fmt::format("the owner {} was written under boot {}, and this node now runs boot {}", token,
                        owner->boot_id, ours)};
  }
  switch (liveness(owner->pid)) {
    case Liveness::dead:
      return {HolderState::dead, fmt::format("the owner {} is gone: no process has pid {}", token, owner->pid)};
    case Liveness::unknown:
      return {HolderState::unknown,
              fmt::format("could not tell whether pid {} of the owner {} is alive: {}", owner->pid, token,
                          std::strerror(errno))};
    case Liveness::alive:
      break;
  }
  auto start = process_start(owner->pid);
  if (!start) {
    if (start.code() == Errc::not_found)
      return {HolderState::dead, fmt::format("the owner {} is gone: pid {} ended", token, owner->pid)};
    return {HolderState::unknown,
            fmt::format("could not read the start of pid {} of the owner {}: {}", owner->pid, token,
                        start.error().message)};
  }
  std::int64_t diff = start->unix_ms - owner->start_ms;
  if (diff < 0) diff = -diff;
  if (diff <= opts.start_tolerance_ms) {
    return {HolderState::alive, fmt::format("the owner {} is alive: pid {} started at {} ms", token, owner->pid,
                                            start->unix_ms)};
  }
  return {HolderState::recycled,
          fmt::format("the owner {} is gone: pid {} now belongs to a process started at {} ms, not {} ms", token,
                      owner->pid, start->unix_ms, owner->start_ms)};
}

HolderJudgement judge_lease_identity(Pid pid, std::string_view record, std::int64_t age_min) {
  // The seed's alive(): kill -0 (EPERM counts: ps -p would list the pid), else ps -p,
  // which on Linux sees exactly the pids /proc has.
  bool alive = ::kill(pid, 0) == 0 || errno == EPERM;
  if (!alive && pid > 0) alive = ::access(fmt::format("/proc/{}", pid).c_str(), F_OK) == 0;
  if (!alive) return {HolderState::dead, fmt::format("pid {} is not running", pid)};
  if (record.empty()) {
    if (age_min >= 120)
      return {HolderState::recycled,
              fmt::format("the lease of pid {} records no identity and is {} minutes old", pid, age_min)};
    return {HolderState::alive,
            fmt::format("pid {} is running; its lease records no identity and is {} minutes old", pid, age_min)};
  }
  std::string now = lease_identity_of(pid);
  if (valid_lease_identity(record) && !now.empty() &&
      lease_identity_backend(record) == lease_identity_backend(now) && record != now) {
    return {HolderState::recycled,
            fmt::format("pid {} now belongs to another process: recorded '{}', now '{}'", pid, record, now)};
  }
  if (now.empty())
    return {HolderState::alive, fmt::format("pid {} is running; its identity cannot be read now", pid)};
  if (!valid_lease_identity(record))
    return {HolderState::alive, fmt::format("pid {} is running; its recorded identity is not well formed", pid)};
  if (lease_identity_backend(record) != lease_identity_backend(now))
    return {HolderState::alive,
            fmt::format("pid {} is running; its identity was recorded by another backend", pid)};
  return {HolderState::alive, fmt::format("pid {} is running as recorded ('{}')", pid, record)};
}

// --- machine id -------------------------------------------------------------------------

std::vector<NetCard> net_cards() {
  std::vector<NetCard> cards;
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return cards;
  std::unique_ptr<ifaddrs, void (*)(ifaddrs*)> owned(list, ::freeifaddrs);
  auto up_and_running = [](const ifaddrs* e) {
    return (e->ifa_flags & IFF_UP) && (e->ifa_flags & IFF_RUNNING) && e->ifa_addr != nullptr;
  };
  for (ifaddrs* e = list; e != nullptr; e = e->ifa_next) {
    if (!up_and_running(e)) continue;
    int family = e->ifa_addr->sa_family;
    if (family != AF_INET && family != AF_INET6) continue;
    NetCard card;
    card.name = e->ifa_name;
    card.internal = (e->ifa_flags & IFF_LOOPBACK) != 0;
    unsigned char mac[6] = {0, 0, 0, 0, 0, 0};
    // As libuv: the hardware address is that of the packet entry of the same name.
    for (ifaddrs* p = list; p != nullptr; p = p->ifa_next) {
      if (!up_and_running(p) || p->ifa_addr->sa_family != AF_PACKET) continue;
      if (std::strcmp(p->ifa_name, e->ifa_name) != 0) continue;
      const auto* ll = reinterpret_cast<const sockaddr_ll*>(p->ifa_addr);
      std::memcpy(mac, ll->sll_addr, sizeof mac);
    }
    card.mac = fmt::format("{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}", mac[0], mac[1], mac[2], mac[3], mac[4], mac[5]);
    cards.push_back(std::move(card));
  }
  return cards;
}

std::optional<std::string> machine_id_of(std::string_view host, std::string_view pid_namespace,
                                         const std::vector<NetCard>& cards) {
  std::vector<std::string> macs;
  for (const auto& c : cards) {
    if (c.internal || c.mac.empty() || c.mac == "00:00:00:00:00:00") continue;
    macs.push_back(c.mac);
  }
  std::sort(macs.begin(), macs.end());
  macs.erase(std::unique(macs.begin(), macs.end()), macs.end());
  if (macs.empty()) return std::nullopt;
  std::string text = fmt::format("{}\n{}", host, pid_namespace);
  for (const auto& m : macs) fmt::format_to(std::back_inserter(text), "\n{}", m);
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_Digest(text.data(), text.size(), digest, &len, EVP_sha256(), nullptr) != 1) return std::nullopt;
  return hex(digest, len).substr(0, 32);
}

std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "";
  return name;
}

MachineFacts read_machine_facts() {
  MachineFacts facts;
  for (const char* var : {"CLOUD_RUN_EXECUTION", "K_SERVICE"}) {
    const char* v = std::getenv(var);
    if (v != nullptr && *v != '\0') facts.cloud_run = true;
  }
  facts.host = host_name();
  char link[256] = {};
  ssize_t n = ::readlink("/proc/self/ns/pid", link, sizeof link - 1);
  if (n > 0) facts.pid_namespace.assign(link, static_cast<std::size_t>(n));
  facts.cards = net_cards();
  return facts;
}

std::optional<std::string> machine_id_of(const MachineFacts& facts) {
  if (facts.cloud_run) return std::nullopt;
  return machine_id_of(facts.host, facts.pid_namespace, facts.cards);
}

std::optional<std::string> machine_id() {
  return machine_id_of(read_machine_facts());
}

// --- this machine's evidence, kept ----------------------------------------------------

std::chrono::steady_clock::time_point MachineEvidenceCache::coarse_ticks() noexcept {
  timespec ts{};
  if (::clock_gettime(CLOCK_MONOTONIC_COARSE, &ts) != 0) return std::chrono::steady_clock::now();
  return std::chrono::steady_clock::time_point(std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec)));
}

MachineEvidenceCache::MachineEvidenceCache(Source source, Ticks ticks, std::chrono::nanoseconds recheck)
    : source_(std::move(source)), ticks_(std::move(ticks)), recheck_(recheck) {}

std::shared_ptr<const MachineEvidence> MachineEvidenceCache::get() {
  std::lock_guard lock(mu_);
  const auto now = ticks_();
  if (evidence_ && now < next_check_) return evidence_;
  MachineFacts facts = source_();
  ++reads_;
  next_check_ = now + recheck_;
  if (evidence_ && facts == facts_) {
    next_check_ticks_.store(next_check_.time_since_epoch().count(), std::memory_order_release);
    return evidence_;
  }
  auto evidence = std::make_shared<MachineEvidence>();
  evidence->host = facts.host;
  evidence->machine_id = machine_id_of(facts);
  evidence->generation = ++computations_;
  facts_ = std::move(facts);
  evidence_ = std::move(evidence);
  generation_.store(evidence_->generation, std::memory_order_release);
  next_check_ticks_.store(next_check_.time_since_epoch().count(), std::memory_order_release);
  return evidence_;
}

std::uint64_t MachineEvidenceCache::generation() {
  if (ticks_().time_since_epoch().count() < next_check_ticks_.load(std::memory_order_acquire))
    return generation_.load(std::memory_order_acquire);
  return get()->generation;
}

std::uint64_t MachineEvidenceCache::reads() const {
  std::lock_guard lock(mu_);
  return reads_;
}

std::uint64_t MachineEvidenceCache::computations() const {
  std::lock_guard lock(mu_);
  return computations_;
}

MachineEvidenceCache& this_machine_evidence() {
  // Never destroyed: judges may run on threads that outlive static destruction.
  static auto* cache = new MachineEvidenceCache();
  return *cache;
}

}  // namespace leasejudge
