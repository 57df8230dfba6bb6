// A list of byte strings held one after another in one buffer: appending one copies
// its bytes and grows the buffer now and then, never allocating a string of its own.
// A sweep's report keeps its ended ids and written keys so, one per write.
//
// Elements are read as views (std::string_view) into the list; a view lives until the
// list is next changed, moved from or destroyed (a short list's bytes move with it). Any byte may be in an element, NUL included. A NUL
// follows each element's bytes in the buffer, so that a view's data() may be handed
// to C as a string of its size(), as std::string's c_str() is.
#pragma once

#include <compare>
#include <cstddef>
#include <iterator>
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

  void push_back(std::string_view text);
  void clear() noexcept;
  // Room for elements strings of bytes bytes in all (their NULs not counted).
  void reserve(std::size_t elements, std::size_t bytes);

  std::size_t size() const noexcept { return ends_.size(); }
  bool empty() const noexcept { return ends_.empty(); }
  // Element i; i < size().
  std::string_view operator[](std::size_t i) const noexcept {
    const std::size_t begin = i == 0 ? 0 : ends_[i - 1] + 1;
    return std::string_view(text_.data() + begin, ends_[i] - begin);
  }
  std::string_view back() const noexcept { return (*this)[size() - 1]; }

  const_iterator begin() const noexcept { return const_iterator(this, 0); }
  const_iterator end() const noexcept { return const_iterator(this, size()); }

  // The elements as strings of their own.
  std::vector<std::string> strings() const;

  // The same elements in the same order.
  friend bool operator==(const TextList& a, const TextList& b) noexcept;
  friend bool operator==(const TextList& a, std::span<const std::string> b) noexcept;

 private:
  std::string text_;               // each element's bytes and a NUL, one after another
  std::vector<std::size_t> ends_;  // where each element's bytes end in text_ (at its NUL)
};

}  // namespace leasejudge
