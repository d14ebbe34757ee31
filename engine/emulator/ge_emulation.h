#pragma once
// Running a graph GE compiled — an .om with its weights, or any GE file whose constants carry data — on the
// emulator, through its executable twin (kernels/ge/ge_lowering.h). Two questions, two comparisons:
//
//   emulateGeModel: does the file compute what its own graph says, at GE's precision and in GE's memory plan? The
//     reference is the twin with every fp16 tensor computed in fp32; the compiled run is the twin as GE built it
//     (its element types) inside one arena at the offsets GE planned (output_i), so an overlap in GE's plan gives
//     wrong numbers (a graph from before GE's Build stage has no offsets: every tensor then has its own buffer).
//     Judged by the precision gate of what the graph computes in, like any compiled model.
//
//   compareGeWithSource: does the .om compute what the model it came from computes? The source (an ONNX model) runs
//     on the reference kernels, the .om as compiled (arena, GE's types), on the same inputs (matched by name, else
//     by position; converted to each side's element type). Outputs are compared in order. Where GE kept the names
//     of the framework ops an op absorbed (_datadump_original_op_names, or the op's own name), that op's result is
//     compared with the source's result of the last of them — the comparison Ascend users make with msit on
//     hardware — and the first op outside the gate is named.
#include <string>
#include <vector>

#include "emulator/emulation.h"
#include "emulator/precision_gate.h"
#include "kernels/ge/ge_lowering.h"

namespace kiln {

struct GeEmulation {
  bool ran = false;                           // false: `issues` say which ops could not run and why
  bool inArena = false;                       // the compiled run was at GE's offsets (false: the file has none)
  std::vector<geops::LoweringIssue> issues;
  std::vector<std::string> inferred;          // geometry read off shapes or kernel names
  EmulationReport report;                     // reference vs compiled, per output (logical tensors)
  std::string notRunSummary() const;          // "3 ops cannot run: op 'x' (ReadSelect): ...; ..."
};

// `inputs` for the GE graph's inputs, in its own element types.
GeEmulation emulateGeModel(const Model& ge, const std::vector<Tensor>& inputs, const ExecutionOptions& options = {});

struct NodeComparison {
  std::string geOp, geType, sourceNode;  // the GE op, and the source node its result is compared with
  OutputVerdict verdict;
};

struct SourceComparison {
  GeEmulation ge;                          // the .om's run (report.reference holds the SOURCE's outputs)
  std::vector<OutputVerdict> outputs;      // per output, .om against source
  std::vector<NodeComparison> nodes;       // per matched op, in GE's order
  std::string firstDivergence;             // the first matched op outside the gate ("" when none)
  std::string inputMatching;               // "by name" / "by position"
  std::vector<std::string> notes;          // outputs or inputs that could not be paired, and why
};

// `inputs` for the source model's inputs. The source's graph gets the compared nodes' results as extra outputs for
// the run (its outputs are as they were when this returns). Throws std::runtime_error when the source cannot run.
SourceComparison compareGeWithSource(const Model& ge, Model& source, const std::vector<Tensor>& inputs,
                                     const PrecisionGate& gate, const ExecutionOptions& options = {});

}  // namespace kiln
