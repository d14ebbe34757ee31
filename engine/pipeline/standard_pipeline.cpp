// The standard pipeline. Stage 1 (prepare) follows GE's order: bind shapes, infer, compute static dimensions and
// fold constants, drop dead branches and no-ops, simplify, merge duplicates, fold BatchNorm into Gemms (Conv+BN is
// a Stage 2 fusion, ConvBatchNormFusion, as in GE), fold again what that exposed, infer again, prune, and finally
// decide which engine runs each op.
// Stage 2 (optimize) starts with graph fusion: the built-in rules, then the plugins' rules; then precision (with
// redundant casts removed) and formats (TransData inserted, then the TransData cleanups), in GE's order, then UB
// fusion and scheduling. Stage 3 (compile) is GE's build: assign memory, add the events its cross-stream reuses need,
// then generate the task list.
#include "pipeline/standard_pipeline.h"

#include "fusion/rules/builtin_rules.h"
#include "passes/compile/compile_passes.h"
#include "fusion/graph_fusion_pass.h"
#include "passes/optimize/schedule_passes.h"
#include "passes/optimize/optimize_passes.h"
#include "passes/pass_manager.h"
#include "passes/prepare/batchnorm_fold.h"
#include "passes/prepare/constant_folding.h"
#include "passes/prepare/dimension_compute.h"
#include "passes/prepare/prepare_passes.h"

namespace kiln {

void addStandardPasses(PassManager& pm, const Options&, const FusionRuleList& extraFusionRules) {
  pm.add(Stage::Prepare, makeInputShapeBindingPass());
  pm.add(Stage::Prepare, makeInferShapePass());
  pm.add(Stage::Prepare, makeDimensionComputePass());
  pm.add(Stage::Prepare, makeConstantFoldingPass());
  pm.add(Stage::Prepare, makeSwitchDeadBranchEliminationPass());
  pm.add(Stage::Prepare, makeNoOpRemovalPass());
  pm.add(Stage::Prepare, makeAlgebraicSimplificationPass());
  pm.add(Stage::Prepare, makeCommonSubexpressionEliminationPass());
  pm.add(Stage::Prepare, makeBatchNormFoldPass());
  pm.add(Stage::Prepare, makeConstantFoldingPass());
  pm.add(Stage::Prepare, makeInferShapePass());
  pm.add(Stage::Prepare, makeDeadCodeEliminationPass());
  pm.add(Stage::Prepare, makeValidityCheckPass());

  FusionRuleList rules = builtinFusionRules();
  rules.insert(rules.end(), extraFusionRules.begin(), extraFusionRules.end());
  pm.add(Stage::Optimize, makeGraphFusionPass(std::move(rules)));
  pm.add(Stage::Optimize, makeRefineRunningPrecisionPass());
  pm.add(Stage::Optimize, makeCastRemovalPass());
  pm.add(Stage::Optimize, makeRefineRunningFormatPass());
  pm.add(Stage::Optimize, makeTransDataSymmetryEliminationPass());
  pm.add(Stage::Optimize, makeSameTransDataBreadthFusionPass());
  pm.add(Stage::Optimize, makeTransDataCastFusionPass());
  // UB fusion: chains of vector ops become one kernel whose intermediates stay in the on-chip Unified Buffer. GE
  // runs it per engine subgraph; our rule only ever takes plain AI Core vector ops, so it can run just before
  // placement and the fused kernels are placed and partitioned like any node. Switch: fusion_switch
  // "ElementwiseChainFusion" (oo_level O1 turns it off with the graph fusions).
  pm.add(Stage::Optimize, makeGraphFusionPass({makeElementwiseChainFusion()}, "UBFusion"));
  // Where and in which order things run: engines, engine subgraphs, execution order, streams and their events.
  pm.add(Stage::Optimize, makeEnginePlacementPass());
  pm.add(Stage::Optimize, makeEnginePartitionPass());
  pm.add(Stage::Optimize, makeTopologicalSortPass());
  pm.add(Stage::Optimize, makeStreamAssignmentPass());
  pm.add(Stage::Optimize, makeEventInsertionPass());
  pm.add(Stage::Optimize, makeRedundantEventRemovalPass());

  pm.add(Stage::Compile, makeMemoryAssignmentPass());
  pm.add(Stage::Compile, makeMemoryReuseEventsPass());
  pm.add(Stage::Compile, makeTaskGenerationPass());
}

}  // namespace kiln
