#include "leasejudge/text_list.hpp"

#include <algorithm>
#include <cstring>
#include <utility>

namespace leasejudge {

TextList::TextList(const TextList& other) {
  std::size_t bytes = 0;
  for (std::string_view e : other) bytes += e.size();
  reserve(other.size(), bytes);
  for (std::string_view e : other) push_back(e);
}

TextList& TextList::operator=(const TextList& other) {
  if (this != &other) {
    TextList copy(other);
    *this = std::move(copy);
  }
  return *this;
}

TextList::TextList(TextList&& other) noexcept {
  *this = std::move(other);
}

TextList& TextList::operator=(TextList&& other) noexcept {
  if (this != &other) {
    blocks_ = std::move(other.blocks_);
    block_ = std::exchange(other.block_, 0);
    used_ = std::exchange(other.used_, 0);
    long_ = std::move(other.long_);
    pages_ = std::move(other.pages_);
    size_ = std::exchange(other.size_, 0);
    other.blocks_.clear();
    other.long_.clear();
    other.pages_.clear();
  }
  return *this;
}

// Nothing is changed until every allocation has been made: a push_back that throws
// leaves the list as it was.
char* TextList::room(std::size_t n) {
  if (n > longest_in_block) {
    auto own = std::make_unique_for_overwrite<char[]>(n);
    long_.push_back(std::move(own));
    return long_.back().get();
  }
  if (blocks_.empty() || block_bytes - used_ < n) {
    const std::size_t next = blocks_.empty() ? 0 : block_ + 1;
    if (next == blocks_.size()) blocks_.push_back(std::make_unique_for_overwrite<char[]>(block_bytes));
    block_ = next;
    used_ = 0;
  }
  char* at = blocks_[block_].get() + used_;
  used_ += n;
  return at;
}

void TextList::push_back(std::string_view text) {
  if (size_ / page_views == pages_.size()) pages_.push_back(std::make_unique<std::string_view[]>(page_views));
  char* at = room(text.size() + 1);
  if (!text.empty()) std::memcpy(at, text.data(), text.size());  // an empty view may be null
  at[text.size()] = '\0';
  pages_[size_ / page_views][size_ % page_views] = std::string_view(at, text.size());
  ++size_;
}

void TextList::clear() noexcept {
  size_ = 0;
  block_ = 0;
  used_ = 0;
  long_.clear();
}

void TextList::reserve(std::size_t elements, std::size_t bytes) {
  while (pages_.size() * page_views < elements) pages_.push_back(std::make_unique<std::string_view[]>(page_views));
  // The room left: the rest of the block being filled and the blocks after it.
  std::size_t left = blocks_.empty() ? 0 : block_bytes - used_ + (blocks_.size() - block_ - 1) * block_bytes;
  for (const std::size_t want = bytes + elements; left < want; left += block_bytes)
    blocks_.push_back(std::make_unique_for_overwrite<char[]>(block_bytes));
}

std::vector<std::string> TextList::strings() const {
  return std::vector<std::string>(begin(), end());
}

bool operator==(const TextList& a, const TextList& b) noexcept {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin());
}

bool operator==(const TextList& a, std::span<const std::string> b) noexcept {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin());
}

}  // namespace leasejudge
