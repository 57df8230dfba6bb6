// Test fixture: a generated node state of steps for sweeps, and what the rules must do
// with each key, decided here by construction (not by asking the code under test).
// Private to the tests.
#pragma once

#include <doctest/doctest.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "leasejudge/store.hpp"
#include "leasejudge/sweep.hpp"

namespace leasejudge::test {

// The facts every sweep here is planned at.
inline const std::string node = "n1";
inline const std::string self = "0b5c3e0e-7d7a-4c4b-9d5e-1f2a3b4c5d6e.4242.lvq1g2a8";
inline const std::string other_owner = "9d1f0a3c-0000-4c4b-9d5e-000000000000.77.lvq0";
inline constexpr Instant before{1714561200, 0};  // 2024-05-01T11:00:00Z
inline constexpr Instant now{1714564800, 0};     // 2024-05-01T12:00:00Z
inline const std::string ended_at = "2024-05-01T12:00:00Z";

inline SweepOptions sweep_options() {
  SweepOptions o;
  o.rules.owner = self;
  o.rules.before = before;
  o.clock = fixed_clock(now);
  return o;
}

enum class Expect { leave, end, remove };

// One key of a generated state and what the rules must do with it, decided here by
// construction (not by asking the code under test).
struct Planted {
  std::string key;
  std::string value;
  Expect expect = Expect::leave;
};

inline std::string step_value(const std::string& id, const std::string& tool, const std::string& state,
                              const std::string& owner, const std::string& started, std::size_t pad) {
  std::string v = "{\"id\":\"" + id + "\",\"tool\":\"" + tool + "\",\"state\":\"" + state + "\"";
  if (!owner.empty()) v += ",\"owner\":\"" + owner + "\"";
  v += ",\"started\":\"" + started + "\"";
  if (state != "running") v += ",\"ended\":\"2024-05-01T10:30:00Z\",\"reason\":\"done\"";
  v += ",\"log\":\"" + std::string(pad, 'x') + "\"}";
  return v;
}

inline std::string uuid_of(std::size_t i) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%08zx-0000-4000-8000-%012zx", i, i * 7919);
  return buf;
}

// A node's state: mostly finished steps, running ones of this process, of a gone
// owner (ended; an ask deleted), of nobody (ended when hand-started before the
// process, left when since), young asks of nobody, values that are no step, and
// other nodes' keys. About one key in twenty is ended or deleted.
inline std::vector<Planted> plant(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<Planted> out;
  out.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    Planted p;
    std::size_t pad = 100 + rng() % 400;
    std::string sid = "s" + std::to_string(i);
    int kind = static_cast<int>(rng() % 100);
    p.key = node + "." + sid;
    if (kind < 70) {
      p.value = step_value(sid, "go build", "succeeded", other_owner, "2024-05-01T10:00:00Z", pad);
    } else if (kind < 78) {
      p.value = step_value(sid, "go build", "running", self, "2024-05-01T11:30:00Z", pad);
    } else if (kind < 81) {
      p.value = step_value(sid, "go build", "running", other_owner, "2024-05-01T10:00:00Z", pad);
      p.expect = Expect::end;
    } else if (kind < 83) {
      std::string id = uuid_of(i);
      p.key = node + "." + id;
      p.value = step_value(id, "check ask", "running", other_owner, "2024-05-01T11:50:00Z", pad);
      p.expect = Expect::remove;
    } else if (kind < 84) {
      p.value = step_value(sid, "go test", "running", "", "2024-05-01T10:00:00Z", pad);
      p.expect = Expect::end;
    } else if (kind < 86) {
      p.value = step_value(sid, "go test", "running", "", "2024-05-01T11:30:00Z", pad);
    } else if (kind < 88) {
      std::string id = uuid_of(i);
      p.key = node + "." + id;
      p.value = step_value(id, "check ask", "running", "", "2024-05-01T11:30:00Z", pad);
    } else if (kind < 91) {
      p.value = "{\"id\":\"" + sid + "\",\"state\":\"running\",\"owner\":7}";  // no step: owner a number
    } else {
      p.key = "n2." + sid;
      p.value = step_value(sid, "go build", "running", other_owner, "2024-05-01T10:00:00Z", pad);
    }
    out.push_back(std::move(p));
  }
  return out;
}

// What ending a step writes: state failed, the restart reason and the end added
// before the closing brace; every other byte kept (the values here have no result).
inline std::string ended_value(const std::string& running) {
  std::string v = running;
  auto at = v.find("\"state\":\"running\"");
  v.replace(at, 17, "\"state\":\"failed\"");
  v.insert(v.size() - 1, ",\"reason\":\"" + std::string(restart_reason) + "\",\"ended\":\"" + ended_at + "\"");
  return v;
}

struct Expected {
  std::size_t ends = 0, removes = 0;
};
inline Expected count(const std::vector<Planted>& state) {
  Expected e;
  for (const auto& p : state) {
    if (p.expect == Expect::end) ++e.ends;
    if (p.expect == Expect::remove) ++e.removes;
  }
  return e;
}

// Every key and its entry; the whole read tried again for up to 10 s while the
// cluster settles (a leader elected, a partition healed) (only reads: nothing is written twice).
inline std::map<std::string, StoreEntry> read_every_key(Store& store) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  for (;;) {
    std::string failed;
    std::map<std::string, StoreEntry> out;
    auto keys = store.keys();
    if (!keys.ok()) failed = keys.error().message;
    for (std::size_t i = 0; failed.empty() && i < keys->size(); ++i) {
      auto e = store.get((*keys)[i]);
      if (!e.ok())
        failed = e.error().message;
      else if (e->has_value())
        out[(*keys)[i]] = **e;
    }
    if (failed.empty()) return out;
    REQUIRE_MESSAGE(std::chrono::steady_clock::now() < deadline, failed);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

}  // namespace leasejudge::test
