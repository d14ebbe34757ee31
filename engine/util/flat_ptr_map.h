#pragma once
// A hash map keyed by pointers, stored flat: one array of (key, value) slots, open addressing with linear probing,
// instead of a heap node per entry. The schedule and memory passes index nodes and values this way on every pass;
// on a 100k-node graph std::unordered_map's entries lay scattered over the heap and a lookup cost two cache misses
// (bucket, then node), a large share of those passes. Here a lookup touches one slot, usually.
//
// Differences from std::unordered_map, which it otherwise follows for the calls the passes make:
// - keys must not be null (null marks an empty slot);
// - inserting may move every entry: references, pointers and iterators are valid only until the next insertion
//   (erasing moves entries too);
// - value types must be default-constructible (empty slots hold one).
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <vector>

namespace kiln {

template <typename K, typename V>
class FlatPtrMap {
  static_assert(std::is_pointer_v<K>, "FlatPtrMap keys are pointers");

 public:
  using key_type = K;
  using mapped_type = V;
  using value_type = std::pair<K, V>;

  template <bool Const>
  class Iter {
   public:
    using Slot = std::conditional_t<Const, const value_type, value_type>;
    Iter(Slot* at, Slot* end) : at_(at), end_(end) { skip(); }
    Slot& operator*() const { return *at_; }
    Slot* operator->() const { return at_; }
    Iter& operator++() {
      ++at_;
      skip();
      return *this;
    }
    bool operator==(const Iter& o) const { return at_ == o.at_; }
    bool operator!=(const Iter& o) const { return at_ != o.at_; }
    operator Iter<true>() const { return Iter<true>(at_, end_); }

   private:
    void skip() {
      while (at_ != end_ && !at_->first) ++at_;
    }
    Slot* at_;
    Slot* end_;
  };
  using iterator = Iter<false>;
  using const_iterator = Iter<true>;

  FlatPtrMap() = default;
  FlatPtrMap(std::initializer_list<value_type> entries) {
    reserve(entries.size());
    for (const value_type& e : entries) insert(e);
  }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  void clear() {
    slots_.clear();
    size_ = 0;
  }
  // Room for n entries without growing.
  void reserve(size_t n) {
    if (n * 2 > slots_.size()) rehash(capacityFor(n));
  }

  iterator begin() { return iterator(slots_.data(), slots_.data() + slots_.size()); }
  iterator end() { return iterator(slots_.data() + slots_.size(), slots_.data() + slots_.size()); }
  const_iterator begin() const { return const_iterator(slots_.data(), slots_.data() + slots_.size()); }
  const_iterator end() const {
    return const_iterator(slots_.data() + slots_.size(), slots_.data() + slots_.size());
  }

  iterator find(K key) {
    const size_t i = slotOf(key);
    return i == kNone ? end() : iterator(slots_.data() + i, slots_.data() + slots_.size());
  }
  const_iterator find(K key) const {
    const size_t i = slotOf(key);
    return i == kNone ? end() : const_iterator(slots_.data() + i, slots_.data() + slots_.size());
  }
  size_t count(K key) const { return slotOf(key) == kNone ? 0 : 1; }
  bool contains(K key) const { return slotOf(key) != kNone; }

  V& at(K key) {
    const size_t i = slotOf(key);
    if (i == kNone) throw std::out_of_range("FlatPtrMap::at: no such key");
    return slots_[i].second;
  }
  const V& at(K key) const {
    const size_t i = slotOf(key);
    if (i == kNone) throw std::out_of_range("FlatPtrMap::at: no such key");
    return slots_[i].second;
  }
  V& operator[](K key) { return try_emplace(key).first->second; }

  // Inserts (key, V(args...)) unless key is present; the entry and whether it was inserted.
  template <typename... Args>
  std::pair<iterator, bool> try_emplace(K key, Args&&... args) {
    if (!key) throw std::invalid_argument("FlatPtrMap: a null key");
    if ((size_ + 1) * 2 > slots_.size()) rehash(capacityFor(size_ + 1));
    const size_t mask = slots_.size() - 1;
    for (size_t i = hash(key) & mask;; i = (i + 1) & mask) {
      value_type& s = slots_[i];
      if (s.first == key) return {iterator(&s, slots_.data() + slots_.size()), false};
      if (!s.first) {
        s.first = key;
        s.second = V(std::forward<Args>(args)...);
        ++size_;
        return {iterator(&s, slots_.data() + slots_.size()), true};
      }
    }
  }
  template <typename... Args>
  std::pair<iterator, bool> emplace(K key, Args&&... args) {
    return try_emplace(key, std::forward<Args>(args)...);
  }
  std::pair<iterator, bool> insert(const value_type& kv) { return try_emplace(kv.first, kv.second); }

  // Removes key (0 when absent). The entries after it in its probe run move back (no tombstones).
  size_t erase(K key) {
    size_t i = slotOf(key);
    if (i == kNone) return 0;
    const size_t mask = slots_.size() - 1;
    for (size_t j = (i + 1) & mask; slots_[j].first; j = (j + 1) & mask) {
      const size_t home = hash(slots_[j].first) & mask;
      // Move j back into the hole at i unless its home lies cyclically within (i, j].
      if (((j - home) & mask) >= ((j - i) & mask)) {
        slots_[i] = std::move(slots_[j]);
        i = j;
      }
    }
    slots_[i] = value_type{};
    --size_;
    return 1;
  }

 private:
  static constexpr size_t kNone = SIZE_MAX;

  // Fibonacci hashing: pointers differ in their middle bits; the multiply spreads them over the high bits.
  static size_t hash(K key) {
    const auto x = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(key));
    return static_cast<size_t>((x * 0x9E3779B97F4A7C15ull) >> 20);
  }
  static size_t capacityFor(size_t n) {
    size_t c = 16;
    while (c < n * 2) c *= 2;
    return c;
  }
  size_t slotOf(K key) const {
    if (!key || slots_.empty()) return kNone;
    const size_t mask = slots_.size() - 1;
    for (size_t i = hash(key) & mask;; i = (i + 1) & mask) {
      if (slots_[i].first == key) return i;
      if (!slots_[i].first) return kNone;
    }
  }
  void rehash(size_t capacity) {
    std::vector<value_type> old(capacity);
    old.swap(slots_);
    const size_t mask = capacity - 1;
    for (value_type& s : old) {
      if (!s.first) continue;
      size_t i = hash(s.first) & mask;
      while (slots_[i].first) i = (i + 1) & mask;
      slots_[i] = std::move(s);
    }
  }

  std::vector<value_type> slots_;  // a power of two long, at most half full
  size_t size_ = 0;
};

}  // namespace kiln
