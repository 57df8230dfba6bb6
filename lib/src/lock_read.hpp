// A lock body as the JavaScript code reads it, its strings viewing where they were
// read into: what the body codec (lock_body.cpp) and the judge (lock_verdict.cpp) share.
#pragma once

#include <forward_list>
#include <optional>
#include <string>
#include <string_view>

#include "leasejudge/lock_body.hpp"
#include "lock_js.hpp"

namespace leasejudge::lock_read {

namespace od = simdjson::ondemand;
using js::JsonReader;
using js::Read;

// JS's Date range: a time value beyond +-8.64e15 ms is no Date.
constexpr std::int64_t js_time_limit = 8'640'000'000'000'000;

// One field as the last of its duplicates left it: JSON.parse keeps only the last,
// and only the last is checked by the schema.
template <typename T>
struct Slot {
  bool present = false;
  bool valid = false;
  T value{};

  void set(Read read, T v) {
    present = true;
    valid = read == Read::ok;
    value = valid ? std::move(v) : T{};
  }
};

// Where the strings a body is read into live: the reader's parser, and spill for the
// few that keep a lone surrogate.
using Spill = std::forward_list<std::string>;

struct MachineSlot {
  bool present = false;
  bool valid = false;
  MachineField::Kind kind = MachineField::Kind::absent;
  std::string_view id;
};

struct ExecutionView {
  std::string_view project_id;
  std::string_view region;
  std::string_view name;
};

struct ExecutionSlot {
  bool present = false;
  bool valid = false;  // an object whose three fields are non-empty strings
  ExecutionView value;
};

// A lock body as the schema reads it, its strings viewing where they were read into
// (the reader and the spill it was read with must outlive it). The judge reads
// bodies by the thousand and needs no copy of them; parse_lock_body copies.
struct BodyView {
  std::string_view purpose;
  std::optional<std::string_view> id, host, started_at, lease_until, owner;
  MachineField::Kind machine = MachineField::Kind::absent;
  std::string_view machine_id;
  std::optional<double> pid;
  std::optional<ExecutionView> execution;
  std::optional<std::int64_t> lease_ms;
};

// The execution a view names, copied.
inline ExecutionRef ref_of(const ExecutionView& e) {
  return ExecutionRef{std::string(e.project_id), std::string(e.region), std::string(e.name)};
}

// Read a body as the JavaScript code does (see parse_lock_body) into body, with
// reader and spill holding its strings.
Status read_body(std::string_view bytes, JsonReader& reader, Spill& spill, BodyView& body);

}  // namespace leasejudge::lock_read
