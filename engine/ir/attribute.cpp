#include "ir/attribute.h"

#include <sstream>

namespace kiln {
namespace {
template <typename T>
std::string listToString(const std::vector<T>& v) {
  std::ostringstream os;
  os << "[";
  const size_t shown = std::min<size_t>(v.size(), 8);
  for (size_t i = 0; i < shown; ++i) os << (i ? ", " : "") << v[i];
  if (shown < v.size()) os << ", … (" << v.size() << " items)";
  os << "]";
  return os.str();
}
std::string tensorSummary(const Tensor& t) {
  std::string s = std::string(dtypeName(t.dtype())) + "[";
  for (size_t i = 0; i < t.dims().size(); ++i) s += (i ? "×" : "") + std::to_string(t.dims()[i]);
  s += "]";
  if (t.numel() == 1 && t.dtype() != DType::String) {
    auto v = t.toDouble();
    if (!v.empty()) {
      std::ostringstream os;
      os << " = " << v[0];
      s += os.str();
    }
  }
  return s;
}
}  // namespace

std::string Attribute::toString() const {
  switch (kind()) {
    case Kind::Float: { std::ostringstream os; os << *get<float>(); return os.str(); }
    case Kind::Int: return std::to_string(*get<int64_t>());
    case Kind::String: return "\"" + *get<std::string>() + "\"";
    case Kind::Tensor: return tensorSummary(*get<Tensor>());
    case Kind::Graph: return "<graph>";
    case Kind::Floats: return listToString(*get<std::vector<float>>());
    case Kind::Ints: return listToString(*get<std::vector<int64_t>>());
    case Kind::Strings: return listToString(*get<std::vector<std::string>>());
    case Kind::Tensors: return std::to_string(get<std::vector<Tensor>>()->size()) + " tensors";
    case Kind::Graphs: return std::to_string(get<std::vector<GraphPtr>>()->size()) + " graphs";
    case Kind::Type: return get<ValueType>()->toString();
    case Kind::Types: return std::to_string(get<std::vector<ValueType>>()->size()) + " types";
  }
  return "?";
}

bool Attribute::operator==(const Attribute& o) const { return v_ == o.v_; }

}  // namespace kiln
