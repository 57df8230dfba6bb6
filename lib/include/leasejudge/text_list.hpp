// A list of byte strings held one after another in blocks of memory: appending one
// copies its bytes into the block being filled, never allocating a string of its own.
// A sweep's report keeps its ended ids and written keys so, one per write.
//
// A block, once had, never moves and is never grown: appending copies no element
// again, and a list of many elements touches each page of its memory once. Blocks are
// small enough to come from the heap (below malloc's threshold for a mapping of their
// own), whose pages a process that sweeps again reuses; a buffer grown by doubling
// would be mapped afresh, its bytes copied, at every growth.
//
// Elements are read as views (std::string_view) into the list; a view lives until the
// list is cleared, assigned to or destroyed (appending to it, or moving it, leaves every
// view valid). Any byte may be in an element, NUL included. A NUL follows each element's
// bytes, so that a view's data() may be handed to C as a string of its size(), as
// std::string's c_str() is.
#pragma once

#include <compare>
#include <cstddef>
#include <iterator>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace leasejudge {

// A random-access iterator over a container read by index whose elements are values
// made as they are read (views, small records): element i is (*owner)[i].
template <class Owner, class Value>
class IndexIterator {
 public:
  using iterator_category = std::random_access_iterator_tag;
  using value_type = Value;
  using difference_type = std::ptrdiff_t;
  using pointer = void;
  using reference = Value;

  IndexIterator() = default;
  IndexIterator(const Owner* owner, std::size_t i) : owner_(owner), i_(i) {}
  Value operator*() const { return (*owner_)[i_]; }
  Value operator[](difference_type n) const { return (*owner_)[i_ + n]; }
  IndexIterator& operator++() {
    ++i_;
    return *this;
  }
  IndexIterator operator++(int) {
    IndexIterator was = *this;
    ++i_;
    return was;
  }
  IndexIterator& operator--() {
    --i_;
    return *this;
  }
  IndexIterator operator--(int) {
    IndexIterator was = *this;
    --i_;
    return was;
  }
  IndexIterator& operator+=(difference_type n) {
    i_ += n;
    return *this;
  }
  IndexIterator& operator-=(difference_type n) {
    i_ -= n;
    return *this;
  }
  friend IndexIterator operator+(IndexIterator it, difference_type n) { return it += n; }
  friend IndexIterator operator+(difference_type n, IndexIterator it) { return it += n; }
  friend IndexIterator operator-(IndexIterator it, difference_type n) { return it -= n; }
  friend difference_type operator-(const IndexIterator& a, const IndexIterator& b) {
    return static_cast<difference_type>(a.i_) - static_cast<difference_type>(b.i_);
  }
  friend bool operator==(const IndexIterator& a, const IndexIterator& b) { return a.i_ == b.i_; }
  friend auto operator<=>(const IndexIterator& a, const IndexIterator& b) { return a.i_ <=> b.i_; }

 private:
  const Owner* owner_ = nullptr;
  std::size_t i_ = 0;
};

class TextList {
 public:
  using const_iterator = IndexIterator<TextList, std::string_view>;
  using iterator = const_iterator;
  using value_type = std::string_view;
  using size_type = std::size_t;

  TextList() = default;
  TextList(const TextList& other);
  TextList& operator=(const TextList& other);
  // Moved from, a list is empty.
  TextList(TextList&& other) noexcept;
  TextList& operator=(TextList&& other) noexcept;
  ~TextList() = default;

  void push_back(std::string_view text);
  // No element; the blocks had are kept for the next.
  void clear() noexcept;
  // Room for elements strings of bytes bytes in all (their NULs not counted).
  void reserve(std::size_t elements, std::size_t bytes);

  std::size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  // Element i; i < size().
  std::string_view operator[](std::size_t i) const noexcept { return pages_[i / page_views][i % page_views]; }
  std::string_view back() const noexcept { return (*this)[size() - 1]; }

  const_iterator begin() const noexcept { return const_iterator(this, 0); }
  const_iterator end() const noexcept { return const_iterator(this, size()); }

  // The elements as strings of their own.
  std::vector<std::string> strings() const;

  // The same elements in the same order.
  friend bool operator==(const TextList& a, const TextList& b) noexcept;
  friend bool operator==(const TextList& a, std::span<const std::string> b) noexcept;

 private:
  static constexpr std::size_t block_bytes = std::size_t{64} << 10;
  static constexpr std::size_t page_views = 4096;  // 64 KiB of views a page
  // An element longer than this has a block of its own: a short one never leaves more
  // than this much of a block unused.
  static constexpr std::size_t longest_in_block = block_bytes / 4;

  char* room(std::size_t n);  // n bytes for the next element (not yet counted)

  std::vector<std::unique_ptr<char[]>> blocks_;  // each block_bytes long
  std::size_t block_ = 0, used_ = 0;             // the block being filled, and how much of it
  std::vector<std::unique_ptr<char[]>> long_;    // the elements of a block of their own
  // Element i is pages_[i / page_views][i % page_views]: the views too are never moved.
  std::vector<std::unique_ptr<std::string_view[]>> pages_;
  std::size_t size_ = 0;
};

}  // namespace leasejudge
