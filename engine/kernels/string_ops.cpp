// The string ops of opset 20: StringConcat (element-wise X + Y, numpy broadcasting), StringSplit (X split by
// `delimiter`, or by runs of whitespace when it is empty, at most `maxsplit` times; Y pads each row's substrings with
// "" to the longest row, Z counts them; an empty string has none) and RegexFullMatch (whether the whole string matches `pattern`; ONNX names
// RE2's syntax, read here by std::regex's ECMAScript grammar, which agrees on the common subset).
#include <regex>

#include "ir/graph.h"
#include "kernels/kernel_util.h"

namespace kiln::kernels {
namespace {

std::vector<Tensor> stringConcat(const KernelContext& ctx) {
  const Tensor& a = ctx.required(0);
  const Tensor& b = ctx.required(1);
  if (a.dtype() != DType::String || b.dtype() != DType::String) return {};
  const std::vector<int64_t> dims = broadcastShapes(ctx, {&a.dims(), &b.dims()});
  const int64_t n = *checkedProduct(dims);
  checkScratch(ctx, n, sizeof(std::string));
  std::vector<std::string> out(static_cast<size_t>(n));
  BroadcastWalker w(dims, {&a.dims(), &b.dims()});
  for (int64_t i = 0; i < n; ++i, w.next())
    out[static_cast<size_t>(i)] = a.strings()[static_cast<size_t>(w.offset(0))] + b.strings()[static_cast<size_t>(w.offset(1))];
  return {Tensor(dims, std::move(out))};
}

std::vector<std::string> splitOne(const std::string& s, const std::string& delimiter, int64_t maxsplit) {
  std::vector<std::string> parts;
  if (s.empty()) return parts;  // no substrings at all, as ONNX Runtime counts an empty string
  if (delimiter.empty()) {  // runs of whitespace, none at the ends
    size_t i = 0;
    while (i < s.size()) {
      while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
      if (i >= s.size()) break;
      if (maxsplit >= 0 && static_cast<int64_t>(parts.size()) == maxsplit) {
        size_t end = s.size();
        while (end > i && std::isspace(static_cast<unsigned char>(s[end - 1]))) --end;
        parts.push_back(s.substr(i, end - i));
        break;
      }
      size_t j = i;
      while (j < s.size() && !std::isspace(static_cast<unsigned char>(s[j]))) ++j;
      parts.push_back(s.substr(i, j - i));
      i = j;
    }
    return parts;
  }
  size_t start = 0;
  while (true) {
    const size_t at = s.find(delimiter, start);
    if (at == std::string::npos || (maxsplit >= 0 && static_cast<int64_t>(parts.size()) == maxsplit)) {
      parts.push_back(s.substr(start));
      break;
    }
    parts.push_back(s.substr(start, at - start));
    start = at + delimiter.size();
  }
  return parts;
}

std::vector<Tensor> stringSplit(const KernelContext& ctx) {
  const Tensor& x = ctx.required(0);
  if (x.dtype() != DType::String) return {};
  const std::string delimiter = ctx.node().attrString("delimiter", "");
  const int64_t maxsplit = ctx.node().attrInt("maxsplit", -1);
  std::vector<std::vector<std::string>> rows;
  int64_t widest = 0;
  for (const std::string& s : x.strings()) {
    rows.push_back(splitOne(s, delimiter, maxsplit));
    widest = std::max<int64_t>(widest, static_cast<int64_t>(rows.back().size()));
  }
  checkScratch(ctx, x.numel() * widest, sizeof(std::string));
  std::vector<std::string> y(static_cast<size_t>(x.numel() * widest));
  std::vector<int64_t> counts;
  for (size_t r = 0; r < rows.size(); ++r) {
    counts.push_back(static_cast<int64_t>(rows[r].size()));
    for (size_t k = 0; k < rows[r].size(); ++k) y[r * static_cast<size_t>(widest) + k] = rows[r][k];
  }
  std::vector<int64_t> dims = x.dims();
  dims.push_back(widest);
  return {Tensor(dims, std::move(y)), Tensor::fromVector(DType::Int64, x.dims(), counts)};
}

std::vector<Tensor> regexFullMatch(const KernelContext& ctx) {
  const Tensor& x = ctx.required(0);
  if (x.dtype() != DType::String) return {};
  std::regex re;
  try {
    re = std::regex(ctx.node().attrString("pattern", ""), std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    ctx.fail(std::string("pattern is not a regular expression: ") + e.what());
  }
  std::vector<uint8_t> out;
  for (const std::string& s : x.strings()) out.push_back(std::regex_match(s, re) ? 1 : 0);
  return {Tensor::fromVector(DType::Bool, x.dims(), out)};
}

}  // namespace

void registerStringKernels(KernelRegistry& r) {
  r.addStringAware("StringConcat", stringConcat);
  r.addStringAware("StringSplit", stringSplit);
  r.addStringAware("RegexFullMatch", regexFullMatch);
}

}  // namespace kiln::kernels
