// What the binding files share: conversions between the engine's types and Python's (JSON values, option sets,
// tensors as NumPy arrays) and the one exception type the module raises (kiln.Error, a RuntimeError whose message is
// the one the CLI prints).
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include "history/history_reader.h"
#include "ir/tensor.h"
#include "options/options.h"
#include "util/json.h"

namespace kiln::py {

namespace pb = pybind11;

// A path given as str or any os.PathLike (pathlib.Path).
std::string pathOf(const pb::handle& path);
pb::object toPython(const Json& j);
// A JSON cell of a row (attributes, annotations, options) as Python values; `ifEmpty` for an empty cell, the text
// itself for an unreadable one (shown as it is, not dropped).
pb::object parsedJson(const std::string& text, pb::object ifEmpty);
// One pass as a dict, whether it comes from a compile or a history: seq, stage, name, ms, changed, counters,
// nodes_before, nodes_after, error; with `rowCounts`, the history's node_rows_started/ended too.
pb::dict passDict(const PassInfo& p, bool rowCounts);
Json fromPython(const pb::handle& o);  // None, bool, int, float, str, list/tuple, dict with str keys; TypeError else
// None: the defaults; str: an option file; dict: key -> value (each checked by the option schema, as --set is).
Options optionsFrom(const pb::object& options, const pb::dict& overrides);
// A copy of the tensor's elements with its dims; fp16/bf16 as float16/float32 (NumPy has no bfloat16).
pb::array toNumpy(const Tensor& t);

void bindGraph(pb::module_& m);    // Model, Graph, Node, Value, Edge, Diff (py_graph.cpp)
void bindCompile(pb::module_& m);  // compile, CompileResult, Pass, Timeline, run (py_compile.cpp)
void bindHistory(pb::module_& m);  // History (py_history.cpp)
void bindTools(pb::module_& m);    // plan_trace, read_batch_summary, options_schema (py_tools.cpp)

}  // namespace kiln::py
