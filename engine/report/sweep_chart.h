#pragma once
// Arena and latency against a symbol's extent: the numbers `kiln compile --sweep`, the batch report's sweep chart
// and the workbench's Shapes tab show. One point per compiled extent; a point whose compile failed keeps its reason
// and no numbers (it is drawn as a gap, never as zero).
#include <cstdint>
#include <string>
#include <vector>

#include "util/json.h"

namespace kiln {

struct SweepPoint {
  int64_t value = 0;       // the symbol's extent
  std::string binding;     // every symbol's extent at this point ("batch=1, sequence=2048")
  bool ok = false;         // compiled and simulated; the numbers below are set
  std::string error;       // why not
  int64_t arenaBytes = 0, lowerBoundBytes = 0, noReuseBytes = 0, weightBytes = 0;
  int64_t ioBytes = 0;  // graph inputs and outputs: what a KV cache exported as inputs/outputs occupies
  int64_t nodes = 0, unsizedTensors = 0;
  double latencyUs = 0;
};

struct SweepChart {
  std::string model, symbol;
  std::vector<SweepPoint> points;
};

Json sweepChartToJson(const SweepChart& c);
// From untrusted JSON (a batch summary): fields checked, throws std::invalid_argument naming the field.
SweepChart sweepChartFromJson(const Json& j);
// "sequence  arena  lower bound  no reuse  latency" table, one row a point.
std::string sweepTable(const SweepChart& c);

}  // namespace kiln
