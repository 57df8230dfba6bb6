// The table of verbs and lj_cli_run: finding a verb, parsing its options, its help.
#include <algorithm>
#include <cstring>

#include "command.hpp"

namespace leasejudge::cli {

namespace {

const Option json_option = {"--json", nullptr, "one JSON object per line instead of text"};
const Option help_option = {"--help", nullptr, "this help"};

const std::vector<Verb>& table() {
  static const std::vector<Verb> all = [] {
    std::vector<Verb> v;
    for (auto part : {step_verbs(), watch_verbs(), lock_verbs(), lock_show_verbs(), lock_run_verbs(), misc_verbs()})
      for (auto& verb : part) v.push_back(std::move(verb));
    return v;
  }();
  return all;
}

// The exit codes each verb can give: the one table its help and the tests read.
struct VerbExits {
  const char* path;
  std::vector<int> codes;
};
const std::vector<VerbExits>& exit_table() {
  static const std::vector<VerbExits> t = {
      {"step plan", {0, 2, 4, 7, 130}},
      {"step sweep", {0, 2, 4, 6, 130}},
      {"step end", {0, 1, 2, 4, 5, 6}},
      {"step export", {0, 2, 4, 7, 130}},
      {"step import", {0, 2, 4, 6, 7, 130}},
      {"step watch", {0, 2, 4, 7}},
      {"lock judge", {0, 1, 2, 3, 4, 7, 130}},
      {"lock acquire", {0, 1, 2, 3, 4, 5, 6, 8, 130}},
      {"lock renew", {0, 1, 2, 4, 5, 6}},
      {"lock release", {0, 1, 2, 4, 5, 6}},
      {"lock show", {0, 1, 2, 4}},
      {"lock list", {0, 2, 4}},
      {"lock hold", {0, 1, 2, 3, 4, 8, 9, 130}},
      {"lock run", {2, 4, 7, 8, 9, 130}},
      {"lease", {0, 1, 2, 3}},
      {"identity", {0, 1, 2}},
      {"owner", {0, 1, 2}},
      {"machine-id", {0, 1, 2}},
      {"version", {0, 2}},
  };
  return t;
}

void write(FILE* to, std::string_view text) {
  std::fwrite(text.data(), 1, text.size(), to);
}

std::string synopsis(const Verb& v) {
  std::string s = fmt::format("leasejudge {}", v.path);
  if (*v.operands != '\0') s += fmt::format(" {}", v.operands);
  if (!v.options.empty()) s += " [options]";
  return s;
}

const Option* find_option(const Verb& v, std::string_view name);

std::string verb_help(const Verb& v) {
  std::string h = fmt::format("usage: {}\n\n{}\n", synopsis(v), v.summary);
  if (*v.details != '\0') h += fmt::format("\n{}\n", v.details);
  std::vector<Option> all = v.options;
  if (!v.raw_args) all.push_back(json_option);
  all.push_back(help_option);
  std::size_t width = 0;
  for (const auto& o : all) width = std::max(width, std::strlen(o.name) + (o.value ? std::strlen(o.value) + 1 : 0));
  h += "\noptions:\n";
  for (const auto& o : all) {
    std::string left = o.value ? fmt::format("{} {}", o.name, o.value) : std::string(o.name);
    h += fmt::format("  {:<{}}  {}\n", left, width, o.help);
  }
  if (find_option(v, "--store") != nullptr) {
    h += "\nenvironment (a flag wins over its variable):\n";
    for (const auto& sv : store_variables) h += fmt::format("  {:<20}  {}\n", sv.variable, sv.option);
    if (std::string_view(v.path) == "lock judge" || std::string_view(v.path) == "step plan")
      h += "  (LEASEJUDGE_STORE is not read here: only --store chooses a store over FILE)\n";
  }
  if (auto codes = exits_of(v.path); !codes.empty()) {
    h += "\nexit codes:\n";
    for (int c : codes) h += fmt::format("  {:>3}  {}\n", c, lj_cli_exit_meaning(c));
    if (std::string_view(v.path) == "lock run") h += "  else CMD's status (128+N for signal N); 126/127 CMD not run\n";
    if (std::string_view(v.path) == "lease") h += "  (the script's own codes)\n";
  }
  return h;
}

// The verbs under prefix ("" for all): their synopses and summaries.
std::string list_help(std::string_view prefix) {
  std::string h = prefix.empty() ? "usage: leasejudge VERB [options]   (leasejudge VERB --help for one)\n\n"
                                 : fmt::format("usage: leasejudge {} VERB [options]\n\n", prefix);
  h += "verbs:\n";
  for (const auto& v : table()) {
    std::string_view path = v.path;
    if (!prefix.empty() &&
        (path.substr(0, prefix.size()) != prefix || path.size() == prefix.size() || path[prefix.size()] != ' '))
      continue;
    h += fmt::format("  {:<18} {}\n", path, v.summary);
  }
  if (prefix.empty()) {
    h += "\nexit codes (each verb's --help lists those it gives):\n";
    for (int c : {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 130}) h += fmt::format("  {:>3}  {}\n", c, lj_cli_exit_meaning(c));
    h += "lock run otherwise exits with its command's status (128+N for signal N). leasejudge(1) says more.\n";
  }
  return h;
}

const Option* find_option(const Verb& v, std::string_view name) {
  for (const auto& o : v.options)
    if (name == o.name) return &o;
  if (name == json_option.name) return &json_option;
  return nullptr;
}

// The verb's arguments: operands and options (--name value, --name=value); -- ends
// the options. A usage error says which argument is wrong.
int parse(Context& cx, const Verb& v, std::span<const char* const> words, Args& out, bool& help) {
  bool options_done = false;
  for (std::size_t i = 0; i < words.size(); ++i) {
    std::string_view w = words[i];
    if (v.raw_args) {  // the verb reads every argument itself, --help included
      out.operands.emplace_back(w);
      continue;
    }
    if (!options_done && w == "-c" && find_option(v, "--command") != nullptr) w = "--command";  // flock(1)'s -c
    if (options_done || w.size() < 2 || w.substr(0, 2) != "--") {
      out.operands.emplace_back(w);
      continue;
    }
    if (w == "--") {
      options_done = true;
      continue;
    }
    if (w == "--help") {
      help = true;
      continue;
    }
    std::string_view name = w, value;
    bool inline_value = false;
    if (auto eq = w.find('='); eq != std::string_view::npos) {
      name = w.substr(0, eq);
      value = w.substr(eq + 1);
      inline_value = true;
    }
    const Option* o = find_option(v, name);
    if (o == nullptr) return cx.usage(fmt::format("unknown option {}", name));
    if (o->value == nullptr) {
      if (inline_value) return cx.usage(fmt::format("{} takes no value", name));
      out.values[std::string(name)] = "";
      continue;
    }
    if (!inline_value) {
      if (i + 1 >= words.size()) return cx.usage(fmt::format("{} needs a value ({})", name, o->value));
      value = words[++i];
    }
    out.values[std::string(name)] = std::string(value);
  }
  return exit_ok;
}

}  // namespace

std::span<const Verb> verbs() {
  return table();
}

std::span<const int> exits_of(std::string_view path) {
  for (const auto& e : exit_table())
    if (path == e.path) return e.codes;
  return {};
}

}  // namespace leasejudge::cli

extern "C" int lj_cli_run(const lj_cli_host_t* host, int argc, const char* const* argv) {
  using namespace leasejudge::cli;
  static const Verb top{"", "", "", {}, nullptr};
  try {
    std::span<const char* const> words(argv, static_cast<std::size_t>(argc < 0 ? 0 : argc));
    Context top_cx(*host, top);
    if (words.empty()) {
      write(host->err, list_help(""));
      return exit_usage;
    }
    std::string_view first = words[0];
    if (first == "--help" || first == "-h" || first == "help") {
      write(host->out, list_help(""));
      return exit_ok;
    }
    if (first == "--version") first = "version";
    // The longest path that the words begin with names the verb.
    const Verb* verb = nullptr;
    std::size_t used = 0;
    for (const auto& v : verbs()) {
      std::string_view path = v.path;
      std::size_t n = 0;
      bool match = true;
      while (!path.empty()) {
        auto space = path.find(' ');
        std::string_view part = path.substr(0, space);
        std::string_view word = n == 0 ? first : (n < words.size() ? std::string_view(words[n]) : std::string_view());
        if (n >= words.size() || word != part) {
          match = false;
          break;
        }
        ++n;
        path = space == std::string_view::npos ? std::string_view() : path.substr(space + 1);
      }
      if (match && n > used) verb = &v, used = n;
    }
    if (verb == nullptr) {
      // A group named without its verb ("step"), or with an unknown one.
      for (const auto& v : verbs()) {
        std::string_view path = v.path;
        if (path.substr(0, first.size()) == first && path.size() > first.size() && path[first.size()] == ' ') {
          if (words.size() > 1 && (std::string_view(words[1]) == "--help" || std::string_view(words[1]) == "-h")) {
            write(host->out, list_help(first));
            return exit_ok;
          }
          std::string what = words.size() > 1 ? fmt::format("unknown verb {} {}", first, words[1])
                                              : fmt::format("{} needs a verb", first);
          top_cx.err_line(fmt::format("leasejudge: {} (see leasejudge {} --help)", what, first));
          return exit_usage;
        }
      }
      top_cx.err_line(fmt::format("leasejudge: unknown verb {} (see leasejudge --help)", first));
      return exit_usage;
    }
    Context cx(*host, *verb);
    Args args;
    bool help = false;
    if (int rc = parse(cx, *verb, words.subspan(used), args, help); rc != exit_ok) return rc;
    if (help) {
      write(host->out, verb_help(*verb));
      return exit_ok;
    }
    cx.json = args.has("--json");
    int rc = verb->run(cx, args);
    cx.progress_done();
    if (std::fflush(host->out) != 0 || std::ferror(host->out)) {
      // A write an interrupt broke off (EINTR) is the interrupt's, not a failure.
      if (cx.interrupted()) return exit_interrupted;
      cx.note("writing the output failed");
      return exit_failed;
    }
    return rc;
  } catch (const std::bad_alloc&) {
    std::fputs("leasejudge: out of memory\n", host->err);
    return exit_failed;
  } catch (const std::exception& e) {
    std::fprintf(host->err, "leasejudge: %s\n", e.what());
    return exit_failed;
  }
}
