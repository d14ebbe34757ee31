#include "variants/shape_variants.h"

#include <algorithm>
#include <charconv>
#include <sstream>

#include "ir/graph.h"
#include "ir/shape_binding.h"

namespace kiln {
namespace {

constexpr const char* kGearKeys[] = {"dynamic_batch_size", "dynamic_image_size", "dynamic_dims"};

struct InputDims {
  std::string name;
  std::vector<int64_t> dims;  // -1 = dynamic (a gear fills it) or left to the binding
};

std::string joined(const std::vector<int64_t>& v, const char* sep) {
  std::string s;
  for (int64_t x : v) s += (s.empty() ? "" : sep) + std::to_string(x);
  return s;
}

// input_shape's items in the order written (ATC maps gear values onto them in this order).
std::vector<InputDims> orderedInputShape(const Options& options) {
  options.inputShapes();  // validates; throws OptionError
  std::vector<InputDims> out;
  std::stringstream ss(options.getString("input_shape"));
  std::string item;
  while (std::getline(ss, item, ';')) {
    if (item.empty()) continue;
    const size_t colon = item.rfind(':');
    InputDims d{item.substr(0, colon), {}};
    std::stringstream ds(item.substr(colon + 1));
    std::string x;
    while (std::getline(ds, x, ',')) d.dims.push_back(std::stoll(x));
    out.push_back(std::move(d));
  }
  return out;
}

// Without input_shape: the model's inputs, -1 where `dynamic(input, axis)` says a gear goes and at every other
// symbolic position (left to the binding), static extents as they are.
std::vector<InputDims> synthesizedInputShape(const Graph& g, std::vector<std::pair<std::string, size_t>>& dynamic,
                                             const std::string& key) {
  std::vector<InputDims> out;
  const std::vector<SymbolSite> sites = inputSymbols(g);
  const auto roleOf = [&](const std::string& symbol) {
    for (const SymbolSite& s : sites)
      if (s.symbol == symbol) return s.role;
    return DimRole::Other;
  };
  for (const Value* v : g.inputs()) {
    if (v->constant() || !v->type().isTensor() || !v->type().shape.rankKnown()) continue;
    const Shape& s = v->type().shape;
    InputDims d{v->name(), {}};
    int imageAxes = 0;
    for (size_t a = 0; a < s.rank(); ++a) {
      d.dims.push_back(s[a].isStatic() ? s[a].value : -1);
      if (s[a].isStatic()) continue;
      const DimRole role = s[a].isSymbolic() ? roleOf(s[a].symbol) : (a == 0 ? DimRole::Batch : DimRole::Other);
      const bool takes = key == "dynamic_dims" ||
                         (key == "dynamic_batch_size" && a == 0) ||
                         (key == "dynamic_image_size" && role == DimRole::Image && imageAxes < 2);
      if (key == "dynamic_image_size" && takes) ++imageAxes;
      if (takes) dynamic.emplace_back(v->name(), a);
    }
    out.push_back(std::move(d));
  }
  return out;
}

std::string inputShapeText(const std::vector<InputDims>& shapes) {
  std::string t;
  for (const InputDims& d : shapes) t += (t.empty() ? "" : ";") + d.name + ":" + joined(d.dims, ",");
  return t;
}

// H and W of a rank-4 shape in `format`, or nothing.
std::optional<std::pair<size_t, size_t>> imageAxes(const std::string& format, size_t rank) {
  if (rank != 4) return std::nullopt;
  if (format == "NCHW") return std::make_pair(size_t{2}, size_t{3});
  if (format == "NHWC") return std::make_pair(size_t{1}, size_t{2});
  return std::nullopt;
}

Options withoutGears(Options o) {
  for (const char* k : kGearKeys) o.setValue(k, Json(std::string()));
  return o;
}

void setDimValue(Options& o, const std::string& symbol, int64_t v) {
  std::map<std::string, int64_t> dims = o.dimValues();
  dims[symbol] = v;
  std::string text = o.keepSymbolicDims() ? "keep" : "";
  for (const auto& [name, x] : dims) text += (text.empty() ? "" : ";") + name + ":" + std::to_string(x);
  o.setValue("dim_values", Json(text), "--sweep");
}

}  // namespace

std::string gearOption(const Options& options) {
  std::string found;
  for (const char* k : kGearKeys) {
    if (options.getString(k).empty()) continue;
    if (!found.empty())
      throw OptionError(found + " and " + k + " are both set; ATC takes one kind of gear at a time");
    found = k;
  }
  return found;
}

std::vector<ShapeVariant> gearVariants(const Graph& g, const Options& options) {
  const std::string key = gearOption(options);
  if (key.empty()) return {};
  const std::vector<std::vector<int64_t>> gears = options.gears(key);
  const std::string format = options.getString("input_format");
  if (key == "dynamic_image_size" && format != "NCHW" && format != "NHWC")
    throw OptionError("dynamic_image_size needs input_format NCHW or NHWC (H and W are found from it), not " + format);
  if (key == "dynamic_dims" && format != "ND")
    throw OptionError("dynamic_dims needs input_format=ND, as ATC requires (the -1s may sit at any axis)");

  // The dynamic positions: the -1s of input_shape, or positions Kiln finds in the model.
  std::vector<std::pair<std::string, size_t>> dynamic;
  std::vector<InputDims> shapes = orderedInputShape(options);
  const bool given = !shapes.empty();
  if (given) {
    for (const InputDims& d : shapes)
      for (size_t a = 0; a < d.dims.size(); ++a) {
        if (d.dims[a] != -1) continue;
        if (key == "dynamic_batch_size" && a != 0)
          throw OptionError("dynamic_batch_size: input_shape '" + d.name + "' has -1 at axis " + std::to_string(a) +
                            "; only the batch axis (0) may be dynamic");
        // A gear changes an extent the model must leave open: a dimension it fixes is compiled for that size only.
        for (const Value* in : g.inputs())
          if (in->name() == d.name && in->type().shape.rankKnown() && a < in->type().shape.rank() &&
              in->type().shape[a].isStatic())
            throw OptionError(key + ": input '" + d.name + "' dimension " + std::to_string(a) +
                              " is static in the model (" + in->type().shape.toString() +
                              "); gears need a dimension the model leaves open (exported as a dynamic axis)");
        dynamic.emplace_back(d.name, a);
      }
  } else {
    shapes = synthesizedInputShape(g, dynamic, key);
  }
  if (dynamic.empty())
    throw OptionError(key + ": no dynamic dimension to fill: " +
                      (given ? std::string("input_shape has no -1") : std::string("the model's inputs are static")) +
                      " (give input_shape with -1 where the gears go)");
  if (key == "dynamic_image_size")
    for (const InputDims& d : shapes) {
      int count = 0;
      for (const auto& [name, axis] : dynamic) count += name == d.name;
      if (!count) continue;
      const auto hw = imageAxes(format, d.dims.size());
      const bool atHW = hw && count == 2 &&
                        std::count(dynamic.begin(), dynamic.end(), std::make_pair(d.name, hw->first)) == 1 &&
                        std::count(dynamic.begin(), dynamic.end(), std::make_pair(d.name, hw->second)) == 1;
      if (!atHW)
        throw OptionError("dynamic_image_size: input '" + d.name + "' must be 4-D with exactly H and W dynamic (" +
                          format + ")");
    }

  std::vector<ShapeVariant> out;
  for (const std::vector<int64_t>& gear : gears) {
    std::vector<InputDims> filled = shapes;
    if (key == "dynamic_batch_size") {
      for (const auto& [name, axis] : dynamic)
        for (InputDims& d : filled)
          if (d.name == name) d.dims[axis] = gear[0];
    } else if (key == "dynamic_image_size") {
      for (InputDims& d : filled)
        if (auto hw = imageAxes(format, d.dims.size());
            hw && std::count(dynamic.begin(), dynamic.end(), std::make_pair(d.name, hw->first))) {
          d.dims[hw->first] = gear[0];
          d.dims[hw->second] = gear[1];
        }
    } else {  // dynamic_dims: input by input; an input with as many -1s as the gear has values takes all of them
      const bool sequential = dynamic.size() == gear.size();
      size_t next = 0;
      for (InputDims& d : filled) {
        std::vector<size_t> axes;
        for (const auto& [name, axis] : dynamic)
          if (name == d.name) axes.push_back(axis);
        if (axes.empty()) continue;
        if (!sequential && axes.size() != gear.size())
          throw OptionError("dynamic_dims: gear '" + joined(gear, ",") + "' has " + std::to_string(gear.size()) +
                            " values for " + std::to_string(dynamic.size()) + " dynamic dimensions");
        for (size_t i = 0; i < axes.size(); ++i) d.dims[axes[i]] = sequential ? gear[next++] : gear[i];
      }
    }
    ShapeVariant v;
    v.values = gear;
    v.label = key == "dynamic_batch_size"   ? "batch " + std::to_string(gear[0])
              : key == "dynamic_image_size" ? std::to_string(gear[0]) + "x" + std::to_string(gear[1])
                                            : joined(gear, ",");
    v.options = withoutGears(options);
    v.options.setValue("input_shape", Json(inputShapeText(filled)), key);
    out.push_back(std::move(v));
  }
  return out;
}

SweepSpec parseSweep(const std::string& text) {
  const size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 >= text.size())
    throw OptionError("--sweep takes SYMBOL=V1,V2,... (a symbol or a dim_policy role), not '" + text + "'");
  SweepSpec s;
  s.symbol = text.substr(0, eq);
  std::stringstream ss(text.substr(eq + 1));
  std::string v;
  while (std::getline(ss, v, ',')) {
    int64_t x = 0;
    const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
    if (v.empty() || ec != std::errc() || end != v.data() + v.size() || x < 1 || x > (int64_t{1} << 31))
      throw OptionError("--sweep " + s.symbol + ": '" + v + "' is not a positive whole number");
    if (std::find(s.values.begin(), s.values.end(), x) != s.values.end())
      throw OptionError("--sweep " + s.symbol + ": " + v + " is given twice");
    s.values.push_back(x);
  }
  if (s.values.size() > 64) throw OptionError("--sweep " + s.symbol + ": at most 64 values");
  return s;
}

std::vector<ShapeVariant> sweepVariants(const Graph& g, const Options& options, const SweepSpec& sweep) {
  const std::vector<SymbolSite> sites = inputSymbols(g);
  std::vector<std::string> symbols;
  for (const SymbolSite& s : sites)
    if (s.symbol == sweep.symbol) symbols.push_back(s.symbol);
  if (symbols.empty()) {
    const auto role = dimRoleFromName(sweep.symbol);
    if (role == DimRole::TotalSequence)
      throw OptionError("--sweep total_sequence: it follows past_sequence + sequence; sweep one of those");
    for (const SymbolSite& s : sites)
      if (role && s.role == *role) symbols.push_back(s.symbol);
  }
  if (symbols.empty()) {
    std::string have;
    for (const SymbolSite& s : sites)
      have += (have.empty() ? "" : ", ") + s.symbol + " (" + dimRoleName(s.role) + ")";
    throw OptionError("--sweep: the model has no symbol or role '" + sweep.symbol + "'" +
                      (have.empty() ? std::string("; its inputs are static") : "; its symbols: " + have));
  }
  std::vector<ShapeVariant> out;
  for (int64_t value : sweep.values) {
    ShapeVariant v;
    v.values = {value};
    v.label = sweep.symbol + "=" + std::to_string(value);
    v.options = options;
    for (const std::string& s : symbols) setDimValue(v.options, s, value);
    out.push_back(std::move(v));
  }
  return out;
}

}  // namespace kiln
