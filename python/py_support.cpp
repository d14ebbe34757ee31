#include "py_support.h"

#include <cstring>

#include <pybind11/stl.h>

namespace kiln::py {

std::string pathOf(const pb::handle& path) {
  return pb::module_::import("os").attr("fspath")(path).cast<std::string>();
}

pb::object toPython(const Json& j) {
  if (j.isNull()) return pb::none();
  if (j.isBool()) return pb::bool_(j.asBool());
  if (j.isInt()) return pb::int_(j.asInt());
  if (j.isNumber()) return pb::float_(j.asDouble());
  if (j.isString()) return pb::str(j.asString());
  if (j.isArray()) {
    pb::list out;
    for (const Json& x : j.asArray()) out.append(toPython(x));
    return out;
  }
  pb::dict out;
  for (const auto& [k, v] : j.asObject()) out[pb::str(k)] = toPython(v);
  return out;
}

pb::object parsedJson(const std::string& text, pb::object ifEmpty) {
  if (text.empty()) return ifEmpty;
  try {
    return toPython(Json::parse(text));
  } catch (const std::exception&) {
    return pb::str(text);
  }
}

pb::dict passDict(const PassInfo& p, bool rowCounts) {
  pb::dict d;
  d["seq"] = p.seq;
  d["stage"] = p.stage;
  d["name"] = p.name;
  d["ms"] = p.ms;
  d["changed"] = p.changed;
  d["counters"] = p.counters;
  d["nodes_before"] = p.nodesBefore;
  d["nodes_after"] = p.nodesAfter;
  d["error"] = p.error.empty() ? pb::none() : pb::cast(p.error);
  if (rowCounts) {
    d["node_rows_started"] = p.nodeRowsStarted;
    d["node_rows_ended"] = p.nodeRowsEnded;
    d["nodes_annotated"] = p.nodesAnnotated;
  }
  return d;
}

Json fromPython(const pb::handle& o) {
  if (o.is_none()) return Json();
  if (pb::isinstance<pb::bool_>(o)) return Json(o.cast<bool>());
  if (pb::isinstance<pb::int_>(o)) return Json(o.cast<int64_t>());
  if (pb::isinstance<pb::float_>(o)) return Json(o.cast<double>());
  if (pb::isinstance<pb::str>(o)) return Json(o.cast<std::string>());
  if (pb::isinstance<pb::list>(o) || pb::isinstance<pb::tuple>(o)) {
    Json out = Json::array();
    for (const pb::handle& x : o) out.push(fromPython(x));
    return out;
  }
  if (pb::isinstance<pb::dict>(o)) {
    Json out = Json::object();
    for (const auto& [k, v] : o.cast<pb::dict>()) {
      if (!pb::isinstance<pb::str>(k)) throw pb::type_error("option and JSON keys must be strings");
      out.set(k.cast<std::string>(), fromPython(v));
    }
    return out;
  }
  throw pb::type_error("cannot pass a " + std::string(pb::str(o.get_type().attr("__name__"))) +
                       " as an option value (bool, int, float, str, list or dict)");
}

Options optionsFrom(const pb::object& options, const pb::dict& overrides) {
  Options out;
  if (pb::isinstance<pb::str>(options) || pb::hasattr(options, "__fspath__")) out = Options::fromFile(pathOf(options));
  else if (pb::isinstance<pb::dict>(options)) out.merge(fromPython(options), "python options");
  else if (!options.is_none()) throw pb::type_error("options: a dict of option values or the path of an option file");
  if (overrides.size()) out.merge(fromPython(overrides), "keyword options");
  return out;
}

pb::array toNumpy(const Tensor& t) {
  std::vector<pb::ssize_t> shape(t.dims().begin(), t.dims().end());
  auto copy = [&](auto tag) {
    using T = decltype(tag);
    pb::array_t<T> a(shape);
    if (t.numel() > 0) std::memcpy(a.mutable_data(), t.data(), static_cast<size_t>(t.numel()) * sizeof(T));
    return pb::array(std::move(a));
  };
  switch (t.dtype()) {
    case DType::Float: return copy(float{});
    case DType::Double: return copy(double{});
    case DType::Int8: return copy(int8_t{});
    case DType::UInt8: return copy(uint8_t{});
    case DType::Int16: return copy(int16_t{});
    case DType::UInt16: return copy(uint16_t{});
    case DType::Int32: return copy(int32_t{});
    case DType::UInt32: return copy(uint32_t{});
    case DType::Int64: return copy(int64_t{});
    case DType::UInt64: return copy(uint64_t{});
    case DType::Bool: return copy(bool{});
    case DType::Float16: {
      pb::array a(pb::dtype("float16"), shape);
      if (t.numel() > 0) std::memcpy(a.mutable_data(), t.data(), static_cast<size_t>(t.numel()) * 2);
      return a;
    }
    default: {  // bf16 and anything else numeric: as float32 values
      const std::vector<double> v = t.toDouble();
      pb::array_t<float> a(shape);
      for (size_t i = 0; i < v.size(); ++i) a.mutable_data()[i] = static_cast<float>(v[i]);
      return pb::array(std::move(a));
    }
  }
}

}  // namespace kiln::py
