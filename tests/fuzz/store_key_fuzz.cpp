// Keys on any bytes: the file store's file names, the NATS key and bucket rules,
// step keys. Properties: a key's file name reads back as the key and holds only
// the name alphabet; a name read as a key names it again; the NATS rules agree with
// an independent reading of them; a step key is made exactly when its parts are
// good and splits back into them; an ask key is a step key whose id is a
// canonical UUID, and an ask step one whose tool also ends in " ask".
#include <optional>

#include "fuzz.hpp"
#include "leasejudge/store/file.hpp"
#if defined(LEASEJUDGE_HAVE_NATS)
#include "leasejudge/store/nats.hpp"
#endif

namespace {

bool alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

void fuzz_file_names(std::string_view key) {
  auto name = leasejudge::FileStore::file_name_of(key);
  if (!name) {
    FUZZ_CHECK(name.code() == leasejudge::Errc::invalid_argument);
    FUZZ_CHECK(key.empty() || key.size() > 255 / 3);
  } else {
    FUZZ_CHECK(!name->empty() && name->size() <= 255 && name->front() != '.');
    for (char c : *name) FUZZ_CHECK(alnum(c) || c == '.' || c == '_' || c == '-' || c == '%');
    FUZZ_CHECK(leasejudge::FileStore::key_of(*name) == std::optional<std::string>(std::string(key)));
  }
  // Any name: when it names a key, that key's name names it too.
  auto back = leasejudge::FileStore::key_of(key);
  if (back) {
    auto again = leasejudge::FileStore::file_name_of(*back);
    FUZZ_CHECK(again.ok());
    FUZZ_CHECK(leasejudge::FileStore::key_of(*again) == back);
  }
}

#if defined(LEASEJUDGE_HAVE_NATS)
bool nats_key_reference(std::string_view key) {
  if (key.empty() || key.front() == '.' || key.back() == '.') return false;
  if (key.find("..") != std::string_view::npos) return false;
  for (char c : key)
    if (!(alnum(c) || c == '-' || c == '/' || c == '_' || c == '=' || c == '.')) return false;
  return true;
}
bool nats_bucket_reference(std::string_view bucket) {
  if (bucket.empty()) return false;
  for (char c : bucket)
    if (!(alnum(c) || c == '_' || c == '-')) return false;
  return true;
}
#endif

bool canonical_uuid(std::string_view id) {
  if (id.size() != 36) return false;
  for (std::size_t i = 0; i < 36; ++i) {
    const char c = id[i];
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      if (c != '-') return false;
    } else if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))) {
      return false;
    }
  }
  return true;
}

void fuzz_step_keys(std::string_view node, std::string_view id, std::string_view tool) {
  char* key = nullptr;
  size_t len = 0;
  lj_error_t* err = nullptr;
  int rc = lj_step_key(&key, &len, node.data(), node.size(), id.data(), id.size(), &err);
  fuzz::check_error(err, rc);
  const bool good = !node.empty() && node.find('.') == std::string_view::npos &&
                    node.find('\0') == std::string_view::npos && !id.empty() && id.find('\0') == std::string_view::npos;
  FUZZ_CHECK((rc == LJ_OK) == good);
  if (!good) {
    FUZZ_CHECK(rc == LJ_EINVAL && key == nullptr);
    return;
  }
  FUZZ_CHECK(key != nullptr && key[len] == '\0' && std::strlen(key) == len);
  const std::string want = std::string(node) + "." + std::string(id);
  FUZZ_CHECK(std::string_view(key, len) == want);
  size_t node_len = 0;
  FUZZ_CHECK(lj_step_key_parse(&node_len, key, len, nullptr) == LJ_OK && node_len == node.size());
  err = nullptr;
  rc = lj_step_ask_key_parse(&node_len, key, len, &err);
  fuzz::check_error(err, rc);
  FUZZ_CHECK((rc == LJ_OK) == canonical_uuid(id));
  if (rc == LJ_OK) FUZZ_CHECK(node_len == node.size());
  int ask = -1;
  FUZZ_CHECK(lj_step_is_ask(&ask, key, len, tool.data(), tool.size(), nullptr) == LJ_OK);
  const bool ask_tool = tool.size() >= 4 && tool.substr(tool.size() - 4) == " ask";
  FUZZ_CHECK(ask == (canonical_uuid(id) && ask_tool ? 1 : 0));
  lj_free(key);
}

// Any key split as a step key: at its first '.', both sides non-empty.
void fuzz_key_parse(std::string_view key) {
  size_t node_len = 12345;
  lj_error_t* err = nullptr;
  int rc = lj_step_key_parse(&node_len, key.data(), key.size(), &err);
  fuzz::check_error(err, rc);
  const std::size_t dot = key.find('.');
  const bool good = dot != std::string_view::npos && dot > 0 && dot + 1 < key.size();
  FUZZ_CHECK((rc == LJ_OK) == good);
  if (good) FUZZ_CHECK(node_len == dot);
  if (!good) FUZZ_CHECK(rc == LJ_EPARSE);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::Input in(data, size);
  const std::uint8_t mode = in.byte();
  std::string_view node = in.small(), id = in.small(), tool = in.small();
  fuzz_step_keys(node, id, tool);
  std::string_view rest = in.rest();
  fuzz_key_parse(rest);
  fuzz_file_names(rest);
#if defined(LEASEJUDGE_HAVE_NATS)
  FUZZ_CHECK(leasejudge::NatsStore::valid_key(rest) == nats_key_reference(rest));
  FUZZ_CHECK(leasejudge::NatsStore::valid_bucket(rest) == nats_bucket_reference(rest));
#endif
  (void)mode;
  return 0;
}
