// The seed's AskWhat: one line saying what an ask is (leasejudge/step_codec.hpp).
#include <string>
#include <vector>

#include "leasejudge/step_codec.hpp"
#include "step_json.hpp"

namespace leasejudge {

namespace {
std::string fetch_string(const std::optional<StepFetch>& fetch, std::string_view key) {
  if (!fetch) return {};
  for (const auto& [k, raw] : *fetch) {
    if (k != key) continue;
    if (raw.size() < 2 || raw.front() != '"') return {};  // m[k].(string) of a non-string
    std::string out;
    step_json::unquote_append(raw.data() + 1, raw.data() + raw.size() - 1, out);
    return out;
  }
  return {};
}
std::string cut12(std::string s) {
  if (s.size() > 12) s.resize(12);
  return s;
}
}  // namespace

std::string ask_what(const StepAsk& ask) {
  std::vector<std::string> parts;
  parts.push_back(ask.kind + " ask");
  if (ask.check) {
    const StepCheck& c = *ask.check;
    parts.push_back(fetch_string(c.fetch, "repository") + "@" + cut12(fetch_string(c.fetch, "commit")));
    std::string levels = "levels ";
    if (c.levels) {
      for (std::size_t i = 0; i < c.levels->size(); ++i) {
        if (i > 0) levels.push_back(',');
        levels.append((*c.levels)[i]);
      }
    }
    parts.push_back(std::move(levels));
    if (!c.run.empty()) parts.push_back("run " + c.run);
  } else if (ask.build) {
    const StepBuild& b = *ask.build;
    parts.push_back("module " + b.module);
    std::string repository = fetch_string(b.fetch, "repository");
    if (!repository.empty()) parts.push_back(repository + "@" + cut12(fetch_string(b.fetch, "commit")));
    if (!b.fp.empty()) parts.push_back("fp " + cut12(b.fp));
  } else if (ask.compose) {
    parts.push_back("compose");
    parts.push_back(fetch_string(ask.compose->fetch, "repository") + "@" +
                    cut12(fetch_string(ask.compose->fetch, "commit")));
  }
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out.append(", ");
    out.append(parts[i]);
  }
  return out;
}

}  // namespace leasejudge
