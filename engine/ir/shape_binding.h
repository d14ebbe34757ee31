#pragma once
// One shape binding for everything: the extent every symbolic dimension of a model's inputs is compiled, planned,
// timed, emulated and written (.om) at. GE compiles static shapes, so a symbol left open hides the memory plan and
// keeps shape arithmetic that static shapes fold away. Symbols are bound, first match wins:
//   1. input_shape (ATC's --input_shape, by input; a -1 leaves the position to the rules below),
//   2. dim_values (by symbol name; `kiln run`/`batch` add the extents of given input data here),
//   3. the dim policy: each symbol gets a role from its name (batch_size → batch, seq_len → sequence,
//      past_sequence_length → past_sequence, total_sequence_length → total_sequence = past + sequence,
//      height/width → image, samples/audio/waveform → audio; a "sequence" of a float [batch, N] input is audio
//      too) or, for unnamed exports (unk__12, None, p2o.DynamicDimension.0), from where it first
//      appears (axis 0 → batch, spatial axes of an image → image, axis 1 of a float [batch, N] input (raw audio, as
//      wav2vec2's input_values) → audio, axis 1 of another rank-2/3 input → sequence; a
//      sequence-like symbol of a KV-cache input, past_0 or past_key_values.0.key, → past_sequence), and the
//      policy's value for that role; anything else is `other`. A model with a KV cache is bound as one decode step
//      (GE compiles an LLM's prefill and decode graphs apart): its sequence symbols get decode_sequence (1), so the
//      masks exporters build for "prefill, or one new token" hold, except encoder sequences.
// `keep` (dim_values=keep) leaves every symbol rules 1–2 do not bind symbolic, as before the policy existed.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ir/shape.h"
#include "util/json.h"

namespace kiln {

class Graph;

enum class DimRole { Batch, Sequence, PastSequence, TotalSequence, Image, Audio, Other };
// "batch", "sequence", "past_sequence", "total_sequence", "image", "audio", "other"
const char* dimRoleName(DimRole role);
std::optional<DimRole> dimRoleFromName(const std::string& name);

// The default extent of each role: the dim_policy option,
// "batch:1;sequence:128;past_sequence:128;decode_sequence:1;image:224;audio:16000;other:1" (audio: one second at
// 16 kHz, what an STFT front end or a wav2vec2 conv stack needs at least). total_sequence is not a field: it is
// always past_sequence + sequence as bound. decode_sequence is the sequence of a model with a KV cache.
struct DimPolicy {
  int64_t batch = 1, sequence = 128, pastSequence = 128, decodeSequence = 1, image = 224, audio = 16000, other = 1;

  // Throws std::invalid_argument ("dim_policy: ...") for an unknown role or a value outside 1 .. 2^40.
  static DimPolicy parse(const std::string& text);
  std::string text() const;
  int64_t valueFor(DimRole role) const;  // total_sequence: pastSequence + sequence
  void set(DimRole role, int64_t value);  // total_sequence cannot be set: throws std::invalid_argument
};

// Where a symbol is first seen among the graph's inputs, and the role that gives it.
struct SymbolSite {
  std::string symbol;
  std::string input;  // the first input that has it
  size_t axis = 0;
  DimRole role = DimRole::Other;
  bool roleFromName = false;  // false: from its position
};
// Every symbol of the graph's (non-constant) inputs in order of first appearance, with its role.
std::vector<SymbolSite> inputSymbols(const Graph& g);
DimRole classifySymbol(const std::string& symbol, const Shape& firstShape, size_t axis, bool floatInput,
                       bool* fromName = nullptr);

struct BoundSymbol {
  std::string symbol;
  int64_t value = 0;
  std::string source;  // "input_shape", "dim_values", "dim_policy: batch", "dim_policy: total_sequence = past + seq"
};

struct ShapeBinding {
  std::vector<BoundSymbol> bound;  // in order of first appearance
  std::vector<std::string> kept;   // left symbolic (keep)
  std::vector<std::string> ignored;  // dim_values names that are neither a symbol nor a role of this model
  // input_shape's extents per input, static positions only (the pass fixes those positions on the inputs).
  std::map<std::string, std::vector<Dim>> inputShapes;

  bool empty() const { return bound.empty() && kept.empty(); }
  std::map<std::string, int64_t> values() const;
  std::optional<int64_t> valueOf(const std::string& symbol) const;
  const BoundSymbol* find(const std::string& symbol) const;
  // "batch_size=1 (dim_policy: batch), seq_len=128 (dim_policy: sequence)"; "" when there is nothing to bind.
  std::string text() const;
  // "batch_size=1, seq_len=128"
  std::string shortText() const;
  // What to tell a user whose model fails at these extents: "symbols bound as seq_len=128 (dim_policy: sequence);
  // other extents: --set dim_values=seq_len:N (kiln run: --dim seq_len=N)"; "" when nothing was bound.
  std::string hint() const;
  // {"symbols": [{"symbol", "value", "source"}...], "kept": [...]}
  Json toJson() const;
  static ShapeBinding fromJson(const Json& j);  // tolerant: skips malformed entries (history rows are untrusted)
};

struct BindingRequest {
  std::map<std::string, std::vector<Dim>> inputShapes;  // input_shape: -1 (unknown Dim) = leave to the rules below
  std::map<std::string, int64_t> dimValues;             // dim_values
  std::map<std::string, std::string> dimValueSources;   // how an entry got there ("input data", "--dim")
  DimPolicy policy;
  bool keep = false;  // dim_values=keep
};

// Throws std::invalid_argument naming the option for a binding the model contradicts: input_shape naming a
// non-input, giving another rank, changing a static dimension, or binding one symbol to two extents.
ShapeBinding resolveShapeBinding(const Graph& g, const BindingRequest& request);

// Gives the graph's values the binding's extents: input_shape's static positions on the inputs it names, and every
// symbolic dimension anywhere (inputs, declared value_info, outputs, bodies) whose symbol — or sum of symbols —
// the binding sizes. Counts what it changed.
struct BindingApplied {
  int64_t inputs = 0;  // inputs whose type input_shape changed
  int64_t dims = 0;    // values with a symbolic dimension bound
};
BindingApplied applyShapeBinding(Graph& g, const ShapeBinding& binding);

// The extent of a dimension symbol under `values`: a bound symbol, or a sum/difference of bound symbols and
// integers as exporters write them ("past_sequence_length + 1", "seq_len+1"); nullopt when any part is unbound.
std::optional<int64_t> evaluateSymbol(const std::string& symbol, const std::map<std::string, int64_t>& values);

}  // namespace kiln
