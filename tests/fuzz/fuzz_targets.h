#pragma once
// One fuzz target per reader of untrusted files. Each feeds the bytes to the reader the way `kiln` does and returns
// normally when the reader accepts them or refuses them with a LoadError (or an OptionError): anything else — a
// crash, a sanitizer report, another exception escaping — is a finding. Shared by the libFuzzer executables
// (fuzz_main.cpp, the `fuzz` preset) and test_fuzz_regressions, which replays tests/fuzz/regressions/<target>/*.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace kiln::fuzz {

struct Target {
  const char* name;
  void (*run)(const uint8_t* data, size_t size);
};

// onnx, om, ge_dump, options, trace_csv, tensor_pb, npz, history, ge_onnx, om_json, fusion_result, onnx_text,
// msprof_csv, msprof_trace.
const std::vector<Target>& targets();
const Target* findTarget(const std::string& name);

}  // namespace kiln::fuzz
