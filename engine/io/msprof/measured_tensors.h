#pragma once
// The tensors of a measured task as the profiler wrote them: "Input Shapes" "32,1024;1024,1024;1024", "Input Data
// Types" "FLOAT;FLOAT16" (or DT_FLOAT, float16...), "Input Formats" "ND;NC1HWC0". Quoted, "N/A" or partly missing
// lists are read generously; a dimension that is not a plain size (-1, a range) makes the shapes unusable rather
// than guessed.
#include <optional>
#include <string>
#include <vector>

#include "ir/value_type.h"

namespace kiln::msprof {

// Per tensor extents ("" is a scalar); nullopt when nothing usable is recorded.
std::optional<std::vector<std::vector<int64_t>>> parseShapeList(const std::string& text);
// "FLOAT", "DT_FLOAT16", "float16", "INT8" -> the element type.
std::optional<DType> parseDataType(std::string text);
// The tensors of one side of a task; nullopt with `why` set when the shapes or an element type cannot be read (a
// missing type list repeats the first type; a missing format is ND). `side` names it in `why` ("input").
std::optional<std::vector<ValueType>> tensorTypes(const std::string& shapes, const std::string& types,
                                                  const std::string& formats, const char* side, std::string& why);

}  // namespace kiln::msprof
