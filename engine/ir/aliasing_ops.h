#pragma once
// Ops that only relabel their input's bytes. Memory planning lets their output share the input's block and the task
// list gives them no device task, so both read this one list.

namespace kiln {

class Node;

// Reshape, Flatten, Squeeze, Unsqueeze, Identity (and GE's ExpandDims, in an .om's ge domain): the output is the
// input's bytes under another shape.
bool aliasesInput(const Node& n);

}  // namespace kiln
