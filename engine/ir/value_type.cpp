#include "ir/value_type.h"

namespace kiln {

std::optional<int64_t> ValueType::byteSize() const {
  if (!isTensor() || dtypeSize(dtype) == 0) return std::nullopt;
  auto n = shape.numel();
  if (!n) return std::nullopt;
  const int64_t bytes = storageBytes(dtype, *n);  // packed types by bits, not bytes
  if (bytes < 0) return std::nullopt;
  return bytes;
}

ValueType ValueType::storedAs(Format f, Shape physical) const {
  ValueType t = *this;
  t.format = f;
  t.shape = std::move(physical);
  t.originShape = isBlockedFormat(f) ? shape : Shape::unknownRank();
  t.originFormat = isBlockedFormat(f) ? format : Format::ND;
  return t;
}

std::string ValueType::toString() const {
  switch (kind) {
    case Kind::Unknown: return "?";
    case Kind::Tensor:
    case Kind::SparseTensor: {
      std::string s = std::string(dtypeName(dtype)) + "[" + shape.toString() + "]";
      if (kind == Kind::SparseTensor) s = "sparse " + s;
      if (format != Format::ND) s += " " + std::string(formatName(format));
      return s;
    }
    case Kind::Sequence: return "seq<" + (element ? element->toString() : "?") + ">";
    case Kind::Optional: return "optional<" + (element ? element->toString() : "?") + ">";
    case Kind::Map: return "map<" + std::string(dtypeName(dtype)) + "," + (element ? element->toString() : "?") + ">";
  }
  return "?";
}

bool ValueType::operator==(const ValueType& o) const {
  if (kind != o.kind || dtype != o.dtype || !(shape == o.shape) || format != o.format) return false;
  if (!(originShape == o.originShape) || originFormat != o.originFormat) return false;
  if (!element || !o.element) return element == o.element;
  return *element == *o.element;
}

}  // namespace kiln
