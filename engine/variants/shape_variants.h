#pragma once
// One model at several shape bindings: ATC's dynamic gears (dynamic_batch_size, dynamic_image_size, dynamic_dims)
// and sweeps of one symbol ("how much memory at 8k context?"). Each variant is the base option set with the
// dynamic options cleared and the variant's extents fixed (input_shape for gears, as ATC fills its -1s; dim_values
// for a sweep), so it compiles like any static model; variant_compile.h compiles them.
//
// Gears follow ATC's rules (GE's multi-batch options): one of the three options at a time; input_shape names the
// dynamic positions with -1 — dynamic_batch_size only at axis 0, dynamic_image_size at H and W of input_format
// NCHW/NHWC, dynamic_dims at any axis with input_format ND, each gear's values filling the -1s input by input in
// input_shape order (an input with as many -1s as a gear has values takes the whole gear, so inputs can share
// one). Without input_shape Kiln finds the positions itself: the batch symbols, the image symbols, or every input
// symbol in order of appearance.
#include <cstdint>
#include <string>
#include <vector>

#include "options/options.h"

namespace kiln {

class Graph;

struct ShapeVariant {
  std::string label;  // "batch 4", "224x224", "1,128", "sequence=2048"
  std::vector<int64_t> values;  // the gear or the swept value
  Options options;    // the base options with this variant's extents
};

// The gear option set in `options` ("dynamic_batch_size"...), or "" when none is; throws OptionError when several
// are.
std::string gearOption(const Options& options);
// One variant per gear; empty when no gear option is set. Throws OptionError naming the option for gears the model
// or input_shape contradict (no dynamic position, a -1 where the option allows none, a gear of the wrong length).
std::vector<ShapeVariant> gearVariants(const Graph& g, const Options& options);

struct SweepSpec {
  std::string symbol;  // a symbol of the model's inputs, or a dim_policy role (sequence, past_sequence, batch...)
  std::vector<int64_t> values;
};
// "sequence=128,512,2048": throws OptionError ("--sweep: ...") for a malformed spec or a non-positive value.
SweepSpec parseSweep(const std::string& text);
// One variant per value: a symbol of the model is set in dim_values; a role sets every symbol of that role.
// Throws OptionError when the model has neither (listing the symbols and roles it has).
std::vector<ShapeVariant> sweepVariants(const Graph& g, const Options& options, const SweepSpec& sweep);

}  // namespace kiln
