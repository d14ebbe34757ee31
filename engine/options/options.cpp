#include "options/options.h"

#include "options/error_stat.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "util/load_error.h"
#include "options/stream_max_parallel_num.h"

namespace kiln {
namespace {

using T = OptionSpec::Type;

OptionSpec boolean(std::string key, bool def, std::string help) {
  return {std::move(key), T::Bool, Json(def), {}, INT64_MIN, INT64_MAX, std::move(help)};
}
OptionSpec integer(std::string key, int64_t def, int64_t lo, int64_t hi, std::string help) {
  return {std::move(key), T::Int, Json(def), {}, lo, hi, std::move(help)};
}
OptionSpec choice(std::string key, std::string def, std::vector<std::string> choices, std::string help) {
  return {std::move(key), T::Enum, Json(std::move(def)), std::move(choices), INT64_MIN, INT64_MAX, std::move(help)};
}
OptionSpec text(std::string key, std::string def, std::string help) {
  return {std::move(key), T::String, Json(std::move(def)), {}, INT64_MIN, INT64_MAX, std::move(help)};
}

OptionSpec number(std::string key, double def, double lo, double hi, std::string help) {
  OptionSpec s{std::move(key), T::Number, Json(def), {}, INT64_MIN, INT64_MAX, std::move(help)};
  s.numberMin = lo;
  s.numberMax = hi;
  return s;
}

std::string formatOptionNumber(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", x);
  return buf;
}

// ATC's gear lists: dynamic_batch_size "1,2,4,8" (one value a gear), dynamic_image_size "h,w;h,w" (two),
// dynamic_dims "a,b;c,d" (as many as every gear has). Every value a positive integer, 2 to 100 gears (ATC's
// limits), no gear twice. Throws std::invalid_argument naming the option.
std::vector<std::vector<int64_t>> parseGearList(const std::string& key, const std::string& text) {
  std::vector<std::vector<int64_t>> gears;
  if (text.empty()) return gears;
  const bool batch = key == "dynamic_batch_size";
  const char gearSep = batch ? ',' : ';';
  std::stringstream ss(text);
  std::string gearText;
  while (std::getline(ss, gearText, gearSep)) {
    std::vector<int64_t> gear;
    std::stringstream vs(gearText);
    std::string v;
    while (std::getline(vs, v, ',')) {
      v.erase(0, v.find_first_not_of(' '));
      v.erase(v.find_last_not_of(' ') + 1);
      int64_t x = 0;
      const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
      if (v.empty() || ec != std::errc() || end != v.data() + v.size())
        throw std::invalid_argument(key + ": '" + v + "' is not a whole number (in \"" + text + "\")");
      if (x < 1 || x > (int64_t{1} << 31))
        throw std::invalid_argument(key + ": " + v + " is not a positive extent (in \"" + text + "\")");
      gear.push_back(x);
    }
    if (key == "dynamic_image_size" && gear.size() != 2)
      throw std::invalid_argument(key + ": gear '" + gearText + "' must be height,width");
    if (gear.empty()) throw std::invalid_argument(key + ": empty gear in \"" + text + "\"");
    if (!gears.empty() && gear.size() != gears.front().size())
      throw std::invalid_argument(key + ": gear '" + gearText + "' has " + std::to_string(gear.size()) +
                                  " values, the first has " + std::to_string(gears.front().size()));
    for (const auto& g : gears)
      if (g == gear) throw std::invalid_argument(key + ": gear '" + gearText + "' is given twice");
    gears.push_back(std::move(gear));
  }
  if (gears.size() < 2 || gears.size() > 100)
    throw std::invalid_argument(key + ": " + std::to_string(gears.size()) + " gears; ATC takes 2 to 100");
  return gears;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// Flattens {"memory": {"planner": "x"}} to {"memory.planner": "x"}; fusion_switch keeps its object value.
void flatten(const Json& obj, const std::string& prefix, std::vector<std::pair<std::string, Json>>& out) {
  for (const auto& [k, v] : obj.asObject()) {
    const std::string key = prefix.empty() ? k : prefix + "." + k;
    if (v.isObject() && key != "fusion_switch") flatten(v, key, out);
    else out.emplace_back(key, v);
  }
}

// fusion_switch in any of ATC's spellings, normalised to {"Rule": bool, ..., "ALL": bool}:
//   "ConvBatchNormFusion:off;MatMulBiasAddFusion:on" (lines of a --fusion_switch_file, also newline-separated),
//   {"ConvBatchNormFusion": "off"}, or {"Switch": {"GraphFusion": {"ALL": "off", "X": "on"}, "UBFusion": {...}}}.
Json normaliseFusionSwitch(const Json& v, const std::string& where) {
  Json out = Json::object();
  auto onOff = [&](const std::string& rule, const Json& state) {
    bool on;
    if (state.isBool()) on = state.asBool();
    else if (state.isString() && (lower(state.asString()) == "on" || lower(state.asString()) == "off"))
      on = lower(state.asString()) == "on";
    else
      throw OptionError(where + "fusion_switch: rule '" + rule + "' must be \"on\" or \"off\"");
    out.set(rule, Json(on));
  };
  if (v.isString()) {
    std::string s = v.asString();
    std::replace(s.begin(), s.end(), '\n', ';');
    std::stringstream ss(s);
    std::string item;
    while (std::getline(ss, item, ';')) {
      item.erase(0, item.find_first_not_of(" \t\r"));
      item.erase(item.find_last_not_of(" \t\r") + 1);
      if (item.empty() || item[0] == '#') continue;
      const auto colon = item.find(':');
      if (colon == std::string::npos)
        throw OptionError(where + "fusion_switch: expected Name:on|off, got '" + item + "'");
      onOff(item.substr(0, colon), Json(item.substr(colon + 1)));
    }
    return out;
  }
  if (!v.isObject()) throw OptionError(where + "fusion_switch must be a string or an object");
  if (const Json* sw = v.find("Switch")) {
    if (!sw->isObject()) throw OptionError(where + "fusion_switch.Switch must be an object");
    for (const auto& [kind, rules] : sw->asObject()) {
      if (!rules.isObject()) throw OptionError(where + "fusion_switch.Switch." + kind + " must be an object");
      for (const auto& [rule, state] : rules.asObject()) onOff(rule, state);
    }
    return out;
  }
  for (const auto& [rule, state] : v.asObject()) onOff(rule, state);
  return out;
}

}  // namespace

const std::vector<OptionSpec>& Options::schema() {
  static const std::vector<OptionSpec> specs = {
      choice("precision_mode", "force_fp16",
             {"force_fp16", "force_fp32", "allow_mix_precision", "must_keep_origin_dtype", "allow_fp32_to_fp16"},
             "precision the NPU computes in (ATC --precision_mode)"),
      choice("oo_level", "O3", {"O1", "O3"}, "O1: no graph or UB fusion; O3: everything (ATC --oo_level)"),
      boolean("oo_constant_folding", true, "fold ops whose inputs are all constant"),
      boolean("oo_dead_code_elimination", true, "remove nodes whose results nobody uses"),
      {"fusion_switch", T::FusionSwitch, Json::object(), {}, INT64_MIN, INT64_MAX,
       "fusion rules on/off: \"Rule:off;...\" lines or ATC's {\"Switch\":{\"GraphFusion\":{...}}}"},
      boolean("disable_reuse_memory", false, "every tensor gets its own memory (no reuse)"),
      choice("memory.planner", "auto", {"auto", "none", "greedy_size", "best_of", "exact"},
             "how the arena is packed: auto (best_of, then exact when small), none (no reuse), greedy_size, "
             "best_of (several orderings, the smallest), exact (complete search under a time budget)"),
      choice("memory.reuse_across_streams", "auto", {"auto", "events", "ordered"},
             "a block freed on one stream, reused on another: events (plan each tensor to its last reader, add the "
             "events those reuses need: the smallest arena), ordered (only where the streams' events already order "
             "them: no stream waits for memory), auto (events only when they make the arena at least 5% smaller)"),
      boolean("model_sink", true,
              "the device runs the whole task list (ATC offline models); off: the host launches every task"),
      boolean("enable_single_stream", false, "run everything on one stream"),
      text("multi_stream_parallel_mode", "", "\"\" (by dependency), \"cv\" (cube/vector split) or \"LoadBalance:N\""),
      text("stream_max_parallel_num", "",
           "most streams per engine, e.g. \"AIcoreEngine:8,DNN_VM_AICPU:1\" (the default; ATC "
           "--stream_max_parallel_num)"),
      integer("topo_sorting_mode", 1, 0, 3, "0 BFS, 1 DFS (default), 2 RDFS, 3 StableRDFS"),
      text("input_shape", "", "bind input shapes: \"name:1,3,224,224;mask:1,128\""),
      text("dim_values", "",
           "bind symbolic dimensions by name, wherever they appear: \"batch:1;sequence:128\" (ONNX Runtime's free "
           "dimension overrides); a role name (sequence, batch, ...) binds every symbol of that role; names a model does "
           "not use are ignored with a warning; the item \"keep\" leaves every other "
           "symbol symbolic instead of binding it by dim_policy"),
      text("dim_policy", DimPolicy{}.text(),
           "extents for symbols neither input_shape nor dim_values bind, by role: batch (batch_size, N, axis 0), "
           "sequence (seq_len, sequence_length, ...), past_sequence (past_*), image (height/width, spatial axes), "
           "other; total_sequence symbols get past_sequence + sequence"),
      choice("input_format", "NCHW", {"NCHW", "NHWC", "ND", "NCDHW", "NDHWC"},
             "layout of the inputs, for dynamic_image_size (ATC --input_format)"),
      text("dynamic_batch_size", "",
           "ATC's batch gears, e.g. \"1,2,4,8\": one compile per batch size at the -1 (or batch) axes"),
      text("dynamic_image_size", "",
           "ATC's image gears, e.g. \"224,224;448,448\": one compile per height,width at the -1 (or image) "
           "axes of input_format"),
      text("dynamic_dims", "",
           "ATC's dims gears, e.g. \"1,128;4,512\": one compile per gear, its values for the -1 dims of "
           "input_shape in order (or the inputs' symbols in order of appearance)"),
      number("verify.min_cosine", 0.99, 0, 1,
             "an emulated output passes only with at least this cosine similarity to the reference (Ascend's "
             "accuracy comparison uses 0.99)"),
      number("verify.rtol_fp32", 1e-4, 0, 1,
             "fp32 compiles: largest error relative to each value and the output's scale"),
      number("verify.rtol_fp16", 2e-2, 0, 1,
             "compiles that compute in fp16: largest error relative to each value and the output's scale"),
      number("verify.rtol_bf16", 5e-2, 0, 1,
             "compiles that compute in bf16: largest error relative to each value and the output's scale"),
      text("verify.error_stat", "max",
           "which statistic of the elements' errors must be within rtol: max (every element), mean, median, or "
           "quantile:Q (e.g. quantile:0.99); the cosine bound applies whatever it is (Polygraphy's "
           "--check-error-stat)"),
      choice("soc_version", "Ascend910A", {"Ascend910A", "Ascend910B1", "Ascend310P3", "Ascend310"},
             "the NPU profile to compile and emulate for"),
      text("soc_profile", "",
           "time the run on this SoC profile instead of soc_version's: a name or a .json file (one kiln calibrate "
           "wrote, say); the compile itself still follows soc_version"),
      integer("constant_folding_max_bytes", 64ll << 20, 0, 1ll << 40,
              "largest output constant folding may create (bytes)"),
      boolean("verify_each_pass", true, "run the IR verifier after every pass (a broken graph fails the run)"),
      integer(kMaxModelBytesKey, 4ll << 30, 1, 1ll << 40,
              "largest model file Kiln opens (bytes); a larger one is refused before it is read"),
      integer(kPassTimeBudgetKey, 600000, 0, 86400000,
              "longest a single pass may run (ms; 0: no budget); node passes stop when it runs out, and a pass "
              "that finishes late fails the run"),
      integer(kEmulatorArenaKey, 4ll << 30, 0, 1ll << 40,
              "largest arena the emulator's compiled run allocates (bytes)"),
      integer(kEmulatorTensorKey, 4ll << 30, 0, 1ll << 40,
              "largest tensor (or scratch buffer) one emulated kernel may create (bytes)"),
      integer(kEmulatorInputKey, 4ll << 30, 0, 1ll << 40,
              "most random input data an emulated run generates, all inputs together (bytes); weights exported "
              "as graph inputs count too"),
  };
  return specs;
}

const OptionSpec* Options::spec(const std::string& key) {
  for (const auto& s : schema())
    if (s.key == key) return &s;
  return nullptr;
}

Options::Options() {
  for (const auto& s : schema()) values_[s.key] = s.defaultValue;
}

Options Options::fromFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw LoadError(path, "cannot open option file");
  std::string text;
  char buf[4096];
  while (f.read(buf, sizeof buf) || f.gcount() > 0) {
    text.append(buf, static_cast<size_t>(f.gcount()));
    if (text.size() > (1u << 20)) throw LoadError(path, "option file is larger than 1 MiB");
  }
  Json j;
  try {
    j = Json::parse(text, 32);
  } catch (const JsonError& e) {
    throw LoadError(path, std::string("not valid JSON: ") + e.what());
  }
  if (!j.isObject()) throw LoadError(path, "an option file must hold a JSON object");
  Options o;
  try {
    o.merge(j, "");  // the LoadError names the file
  } catch (const OptionError& e) {
    throw LoadError(path, e.what());
  }
  const auto slash = path.find_last_of('/');
  o.origin_ = slash == std::string::npos ? path : path.substr(slash + 1);
  return o;
}

void Options::merge(const Json& obj, const std::string& source) {
  std::vector<std::pair<std::string, Json>> flat;
  flatten(obj, "", flat);
  for (const auto& [k, v] : flat) setValue(k, v, source);
}

void Options::setValue(const std::string& key, const Json& value, const std::string& source) {
  const std::string where = source.empty() ? "" : source + ": ";
  const OptionSpec* s = spec(key);
  if (key == "_comment" || key == "description") return;  // free text allowed in files
  if (!s) {
    std::string known;
    for (const auto& sp : schema()) known += (known.empty() ? "" : ", ") + sp.key;
    throw OptionError(where + "unknown option '" + key + "' (known: " + known + ")");
  }
  switch (s->type) {
    case T::Bool:
      if (!value.isBool()) throw OptionError(where + key + " must be true or false, not " + value.typeName());
      break;
    case T::Int:
      if (!value.isInt()) throw OptionError(where + key + " must be an integer, not " + value.dump());
      if (value.asInt() < s->min || value.asInt() > s->max)
        throw OptionError(where + key + " must be between " + std::to_string(s->min) + " and " +
                          std::to_string(s->max) + ", not " + value.dump());
      break;
    case T::Enum:
      if (!value.isString() || std::find(s->choices.begin(), s->choices.end(), value.asString()) == s->choices.end()) {
        std::string allowed;
        for (const auto& c : s->choices) allowed += (allowed.empty() ? "" : ", ") + c;
        throw OptionError(where + key + " must be one of " + allowed + ", not " + value.dump());
      }
      break;
    case T::String:
      if (!value.isString()) throw OptionError(where + key + " must be a string, not " + value.dump());
      break;
    case T::Number:
      if (!value.isNumber() || value.asDouble() < s->numberMin || value.asDouble() > s->numberMax)
        throw OptionError(where + key + " must be a number from " + formatOptionNumber(s->numberMin) + " to " +
                          formatOptionNumber(s->numberMax) + ", not " + value.dump());
      break;
    case T::FusionSwitch:
      values_[key] = normaliseFusionSwitch(value, where);
      return;
  }
  if (key == "multi_stream_parallel_mode") {
    const std::string& m = value.asString();
    const bool ok = m.empty() || m == "cv" ||
                    (m.rfind("LoadBalance:", 0) == 0 && m.size() > 12 && m.size() <= 16 &&
                     m.find_first_not_of("0123456789", 12) == std::string::npos && std::stoi(m.substr(12)) >= 1);
    if (!ok)
      throw OptionError(where + key + " must be \"\", \"cv\" or \"LoadBalance:N\" (N from 1 to 9999), not \"" + m +
                        "\"");
  }
  if (key == "stream_max_parallel_num") {
    try {
      parseStreamMaxParallelNum(value.asString());
    } catch (const std::invalid_argument& e) {
      throw OptionError(where + key + ": " + e.what());
    }
  }
  if (key == "dim_values") {
    parseDimValues(value.asString());  // refused before it is stored
    dimSources_.clear();
  }
  if (key == "verify.error_stat") {
    try {
      parseErrorStat(value.asString());
    } catch (const std::invalid_argument& e) {
      throw OptionError(where + e.what());
    }
  }
  if (key == "dim_policy") {
    try {
      DimPolicy::parse(value.asString());
    } catch (const std::invalid_argument& e) {
      throw OptionError(where + e.what());
    }
  }
  if (key == "dynamic_batch_size" || key == "dynamic_image_size" || key == "dynamic_dims") {
    try {
      parseGearList(key, value.asString());
    } catch (const std::invalid_argument& e) {
      throw OptionError(where + e.what());
    }
  }
  values_[key] = value;
  if (key == "input_shape") inputShapes();  // validate now, not at compile time
}

void Options::set(const std::string& assignment) {
  const auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0) throw OptionError("--set expects key=value, got '" + assignment + "'");
  const std::string key = assignment.substr(0, eq);
  const std::string raw = assignment.substr(eq + 1);
  const OptionSpec* s = spec(key);
  if (!s) {
    setValue(key, Json(raw), "--set");  // produces the "unknown option" message
    return;
  }
  Json v;
  switch (s->type) {
    case T::Bool: {
      const std::string l = lower(raw);
      if (l == "true" || l == "1" || l == "on" || l == "yes") v = Json(true);
      else if (l == "false" || l == "0" || l == "off" || l == "no") v = Json(false);
      else throw OptionError("--set " + key + ": expected true or false, got '" + raw + "'");
      break;
    }
    case T::Int: {
      try {
        size_t used = 0;
        const long long x = std::stoll(raw, &used);
        if (used != raw.size()) throw std::invalid_argument(raw);
        v = Json(static_cast<int64_t>(x));
      } catch (const std::exception&) {
        throw OptionError("--set " + key + ": expected an integer, got '" + raw + "'");
      }
      break;
    }
    case T::FusionSwitch:
      v = raw.size() && raw[0] == '{' ? Json::parse(raw, 8) : Json(raw);
      break;
    case T::Number: {
      char* end = nullptr;
      const double x = std::strtod(raw.c_str(), &end);
      if (raw.empty() || end != raw.c_str() + raw.size() || !std::isfinite(x))
        throw OptionError("--set " + key + ": expected a number, got '" + raw + "'");
      v = Json(x);
      break;
    }
    default:
      v = Json(raw);
  }
  setValue(key, v, "--set");
  origin_ += " + " + key + "=" + raw;
}

const Json& Options::get(const std::string& key) const {
  auto it = values_.find(key);
  if (it == values_.end()) throw OptionError("unknown option '" + key + "'");
  return it->second;
}
bool Options::getBool(const std::string& key) const { return get(key).asBool(); }
int64_t Options::getInt(const std::string& key) const { return get(key).asInt(); }
double Options::getNumber(const std::string& key) const { return get(key).asDouble(); }
const std::string& Options::getString(const std::string& key) const { return get(key).asString(); }

bool Options::fusionEnabled(const std::string& rule) const {
  if (getString("oo_level") == "O1") return false;
  const Json& sw = get("fusion_switch");
  if (const Json* r = sw.find(rule)) return r->asBool();
  if (const Json* all = sw.find("ALL")) return all->asBool();
  return true;
}

namespace {

// "a:1;b:2" -> {(a, 1), (b, 2)}: the ';'-separated items of input_shape and dim_values, each split at its last ':'
// (names may hold colons). Throws OptionError naming the option and the expected `form`.
std::vector<std::pair<std::string, std::string>> namedItems(const std::string& text, const std::string& option,
                                                            const std::string& form) {
  std::vector<std::pair<std::string, std::string>> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ';')) {
    if (item.empty()) continue;
    const auto colon = item.rfind(':');
    if (colon == std::string::npos || colon == 0)
      throw OptionError(option + ": expected " + form + ", got '" + item + "'");
    out.emplace_back(item.substr(0, colon), item.substr(colon + 1));
  }
  return out;
}

}  // namespace

std::map<std::string, int64_t> Options::parseDimValues(const std::string& text) {
  std::map<std::string, int64_t> out;
  std::stringstream items(text);
  std::string item, rest;
  while (std::getline(items, item, ';'))
    if (item != "keep") rest += item + ";";
  for (const auto& [name, digits] : namedItems(rest, "dim_values", "name:value or keep")) {
    int64_t v = -1;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
    if (ec != std::errc() || end != digits.data() + digits.size() || v < 1 || v > (int64_t{1} << 40))
      throw OptionError("dim_values: bad value '" + digits + "' for '" + name + "' (1 .. 2^40)");
    if (auto [it, fresh] = out.emplace(name, v); !fresh && it->second != v)
      throw OptionError("dim_values: '" + name + "' is given twice");
  }
  return out;
}

std::map<std::string, int64_t> Options::dimValues() const { return parseDimValues(getString("dim_values")); }

std::vector<std::vector<int64_t>> Options::gears(const std::string& key) const {
  try {
    return parseGearList(key, getString(key));
  } catch (const std::invalid_argument& e) {
    throw OptionError(e.what());
  }
}

bool Options::keepSymbolicDims() const {
  std::stringstream items(getString("dim_values"));
  std::string item;
  while (std::getline(items, item, ';'))
    if (item == "keep") return true;
  return false;
}

DimPolicy Options::dimPolicy() const {
  try {
    return DimPolicy::parse(getString("dim_policy"));
  } catch (const std::invalid_argument& e) {
    throw OptionError(e.what());
  }
}

BindingRequest Options::bindingRequest() const {
  BindingRequest r;
  r.inputShapes = inputShapes();
  r.dimValues = dimValues();
  r.policy = dimPolicy();
  r.keep = keepSymbolicDims();
  r.dimValueSources = dimSources_;
  return r;
}

std::map<std::string, std::vector<Dim>> Options::inputShapes() const {
  std::map<std::string, std::vector<Dim>> out;
  for (const auto& [name, extents] : namedItems(getString("input_shape"), "input_shape", "name:d1,d2,...")) {
    std::vector<Dim> dims;
    std::stringstream ds(extents);
    std::string d;
    while (std::getline(ds, d, ',')) {
      try {
        size_t used = 0;
        const long long x = std::stoll(d, &used);
        if (used != d.size() || x < -1 || x > (1ll << 40)) throw std::invalid_argument(d);
        dims.push_back(x < 0 ? Dim::unknown() : Dim::fixed(x));
      } catch (const std::exception&) {
        throw OptionError("input_shape: bad dimension '" + d + "' for '" + name + "'");
      }
    }
    out[name] = std::move(dims);
  }
  return out;
}

Json Options::toJson() const {
  Json j = Json::object();
  for (const auto& s : schema()) j.set(s.key, values_.at(s.key));
  return j;
}

}  // namespace kiln
