#pragma once
// The ONNX backend test format as a check of the emulator: a folder with model.onnx and test_data_set_*/ holding
// input_<i>.pb and output_<i>.pb (serialized TensorProtos). Each data set runs through the reference executor and
// every output is compared with the suite's own tolerance (fp16/bf16: a few units in the last place).
#include <string>
#include <vector>

namespace kiln {

enum class ConformanceStatus { Passed, Failed, Skipped };
const char* conformanceStatusName(ConformanceStatus s);  // "passed", "failed", "skipped"

struct ConformanceResult {
  std::string name;   // the test folder's name, e.g. test_conv_with_strides_padding
  std::string suite;  // the folder holding it, e.g. node
  std::string dir;
  ConformanceStatus status = ConformanceStatus::Failed;
  // Why it failed or was skipped: "output 0: element 3: got 1, expected 2", "not emulatable: op X",
  // "sequence input (not emulated)", "no test_data_set_* folder".
  std::string reason;
  int dataSets = 0;  // data sets run
  double ms = 0;
};

// Test folders (those holding a model.onnx) at or under `root`, up to three levels deep, sorted by path. Throws
// std::runtime_error when root does not exist.
std::vector<std::string> findConformanceTests(const std::string& root);

// Never throws: every problem becomes a failed (or, for what the emulator does not model, skipped) result.
ConformanceResult runConformanceTest(const std::string& dir);

}  // namespace kiln
