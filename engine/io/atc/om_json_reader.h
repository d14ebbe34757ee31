#pragma once
// `atc --mode=1 --om X.om --json X.json`: an .om's ModelDef as GE writes it in JSON (top level name, version,
// attr — a list of {"key", "value": {"s"|"i"|"b"|"list"|...}} —, graph: a list of {name, input, op}), read
// generously (io/lenient: unknown keys become "raw.<path>" attributes, numbers may be strings, maps objects or
// lists) into the same ModelDef an .om holds, and built by io/om/ge_model_builder.h. The JSON has no weights and no
// task list, but GE's plan is in its ops (output_i offsets, stream_id) and model attributes (memory_size,
// weight_size, stream_num): the model is precompiled, as the .om is, and its plan is what the views draw.
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ir/model.h"

namespace kiln::atc {

inline constexpr uintmax_t kMaxOmJsonBytes = uintmax_t{512} << 20;

std::unique_ptr<Model> readOmJson(std::string_view text, const std::string& displayName,
                                  std::vector<std::string>& warnings);

}  // namespace kiln::atc
