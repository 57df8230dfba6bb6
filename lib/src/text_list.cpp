#include "leasejudge/text_list.hpp"

#include <algorithm>

namespace leasejudge {

void TextList::push_back(std::string_view text) {
  const std::size_t was = text_.size();
  try {
    text_.append(text);
    text_.push_back('\0');
    ends_.push_back(was + text.size());
  } catch (...) {
    text_.resize(was);  // out of memory: the list as it was
    throw;
  }
}

void TextList::clear() noexcept {
  text_.clear();
  ends_.clear();
}

void TextList::reserve(std::size_t elements, std::size_t bytes) {
  ends_.reserve(elements);
  text_.reserve(bytes + elements);
}

std::vector<std::string> TextList::strings() const {
  return std::vector<std::string>(begin(), end());
}

bool operator==(const TextList& a, const TextList& b) noexcept {
  return a.ends_ == b.ends_ && a.text_ == b.text_;
}

bool operator==(const TextList& a, std::span<const std::string> b) noexcept {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin());
}

}  // namespace leasejudge
