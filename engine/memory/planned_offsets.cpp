#include "memory/planned_offsets.h"

#include <algorithm>
#include <charconv>

#include "ir/graph.h"

namespace kiln::memory {

std::optional<int64_t> offsetInAnnotation(const std::string& text, size_t slot) {
  size_t start = 0;
  for (size_t i = 0; i < slot; ++i) {
    start = text.find(',', start);
    if (start == std::string::npos) return std::nullopt;
    ++start;
  }
  const size_t stop = std::min(text.find(',', start), text.size());
  int64_t value = 0;
  const char* first = text.data() + start;
  const char* last = text.data() + stop;
  if (first == last || *first < '0' || *first > '9') return std::nullopt;  // "output", "-", a sign
  const auto [ptr, ec] = std::from_chars(first, last, value);
  if (ec != std::errc() || ptr != last) return std::nullopt;
  return value;
}

std::vector<std::optional<int64_t>> plannedBlockOffsets(const Lifetimes& life) {
  std::vector<std::optional<int64_t>> offsets(life.blocks.size());
  for (const TensorLifetime& t : life.tensors) {
    if (t.kind != TensorKind::Arena || t.block < 0 || offsets[size_t(t.block)]) continue;
    if (const Node* producer = t.value->producer())
      offsets[size_t(t.block)] = offsetInAnnotation(producer->annotation("mem.out"), t.value->producerIndex());
  }
  return offsets;
}

}  // namespace kiln::memory
