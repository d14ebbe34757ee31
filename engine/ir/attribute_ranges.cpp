#include "ir/attribute_ranges.h"

#include <vector>

#include "ir/graph.h"

namespace kiln {

namespace {
constexpr std::string_view kPositive[] = {"strides", "dilations", "kernel_shape", "blocksize", "group", "block_shape"};
}  // namespace

bool attributeMustBePositive(std::string_view name) {
  for (std::string_view p : kPositive)
    if (p == name) return true;
  return false;
}

std::string nonPositiveAttributeMessage(std::string_view name, int64_t value) {
  return "attribute '" + std::string(name) + "' holds " + std::to_string(value) + "; it must be at least 1";
}

std::string attributeRangeProblem(const Node& n) {
  for (std::string_view name : kPositive) {
    const Attribute* a = n.attr(name);
    if (!a) continue;
    std::vector<int64_t> values;
    if (const auto* i = a->get<int64_t>()) values.push_back(*i);
    else if (const auto* is = a->get<std::vector<int64_t>>()) values = *is;
    for (int64_t v : values)
      if (v < 1) return nonPositiveAttributeMessage(name, v);
  }
  return {};
}

}  // namespace kiln
