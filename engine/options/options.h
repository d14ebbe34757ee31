#pragma once
// Option sets: the knobs of a compile, named after ATC's options so that Ascend users recognise them
// (precision_mode, oo_level, fusion_switch, disable_reuse_memory, enable_single_stream, topo_sorting_mode,
// input_shape, soc_version, ...). One schema in code validates JSON files, `--set key=value` on the command line and
// the GUI's form alike; unknown keys and bad values are clear errors. Later stages add their keys to the schema.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ir/shape.h"
#include "ir/shape_binding.h"
#include "util/json.h"

namespace kiln {

// Resource limits (README "Hardening"): what an untrusted model may cost before Kiln refuses it with a message.
// constant_folding_max_bytes (passes/prepare/constant_folding.h) is the fifth.
inline constexpr const char* kMaxModelBytesKey = "max_model_bytes";             // model file size
inline constexpr const char* kPassTimeBudgetKey = "pass_time_budget_ms";        // per pass; 0 = no budget
inline constexpr const char* kEmulatorArenaKey = "emulator.max_arena_bytes";    // the compiled run's arena
inline constexpr const char* kEmulatorTensorKey = "emulator.max_tensor_bytes";  // one kernel output / scratch
inline constexpr const char* kEmulatorInputKey = "emulator.max_input_bytes";    // all of a run's random inputs

struct OptionSpec {
  enum class Type { Bool, Int, Enum, String, FusionSwitch, Number };
  std::string key;
  Type type = Type::String;
  Json defaultValue;
  std::vector<std::string> choices;  // Enum
  int64_t min = INT64_MIN, max = INT64_MAX;  // Int
  std::string help;
  double numberMin = 0, numberMax = 0;  // Number
};

// A bad option: names the key (and the file, when there is one) and says what is allowed.
class OptionError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Options {
 public:
  // Every key with its default (the ATC defaults: force_fp16, O3, folding and DCE on, reuse on, multi-stream).
  Options();

  static const std::vector<OptionSpec>& schema();
  static const OptionSpec* spec(const std::string& key);

  // Reads a JSON option file (an object; nested objects are flattened with dots: {"memory": {"planner": ...}}).
  // Throws LoadError for an unreadable or malformed file, OptionError (mentioning the file) for bad keys/values.
  static Options fromFile(const std::string& path);
  // Applies the keys of `obj` over the current values; `source` names where they came from in messages.
  void merge(const Json& obj, const std::string& source);
  // Applies "key=value" (the CLI's --set); the value is parsed by the key's type. Throws OptionError.
  void set(const std::string& assignment);
  void setValue(const std::string& key, const Json& value, const std::string& source = "");

  bool getBool(const std::string& key) const;
  int64_t getInt(const std::string& key) const;
  double getNumber(const std::string& key) const;
  const std::string& getString(const std::string& key) const;
  const Json& get(const std::string& key) const;

  // Fusion rule switch: fusion_switch entries, then "ALL", then on (and everything off at oo_level O1).
  bool fusionEnabled(const std::string& rule) const;
  // input_shape parsed: "x:1,3,224,224;mask:1,-1" -> {x: [1,3,224,224], mask: [1,?]}. Throws OptionError.
  std::map<std::string, std::vector<Dim>> inputShapes() const;
  // dim_values: symbol -> extent. parseDimValues throws OptionError for a malformed list.
  std::map<std::string, int64_t> dimValues() const;
  static std::map<std::string, int64_t> parseDimValues(const std::string& text);
  // dim_values holds the item "keep": symbols it and input_shape do not bind stay symbolic (no dim_policy).
  bool keepSymbolicDims() const;
  // dim_policy parsed (ir/shape_binding.h). Throws OptionError.
  DimPolicy dimPolicy() const;
  // A gear list (dynamic_batch_size, dynamic_image_size, dynamic_dims) parsed; empty when not set.
  std::vector<std::vector<int64_t>> gears(const std::string& key) const;
  // input_shape, dim_values, dim_policy and keep: what resolveShapeBinding needs. Throws OptionError.
  BindingRequest bindingRequest() const;

  // Where a dim_values entry came from when Kiln wrote it ("--dim", "input data"), for the binding's report;
  // setting dim_values by any other way forgets them.
  void setDimValueSource(const std::string& symbol, const std::string& source) { dimSources_[symbol] = source; }
  const std::map<std::string, std::string>& dimValueSources() const { return dimSources_; }

  // Every key, with defaults filled in: what gets stored with a run.
  Json toJson() const;
  // Where the values came from, e.g. "default.json + --set precision_mode=force_fp32" (for display).
  const std::string& origin() const { return origin_; }
  void setOrigin(std::string o) { origin_ = std::move(o); }

 private:
  std::map<std::string, Json> values_;
  std::map<std::string, std::string> dimSources_;
  std::string origin_ = "defaults";
};

}  // namespace kiln
