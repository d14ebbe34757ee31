#include "emulator/conformance.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <functional>
#include <stdexcept>

#include "emulator/model_inputs.h"
#include "emulator/reference_executor.h"
#include "emulator/tensor_compare.h"
#include "util/load_error.h"
#include "emulator/function_expander.h"
#include "io/onnx/onnx_reader.h"
#include "io/tensor_file.h"

namespace fs = std::filesystem;

namespace kiln {

namespace {

// The suite stores bfloat16 tensors as uint16 bit patterns; the graph's declared type says what they are.
Tensor retagged(Tensor t, const ValueType& declared) {
  if (declared.isTensor() && declared.dtype == DType::BFloat16 && t.dtype() == DType::UInt16)
    return Tensor::fromBytes(DType::BFloat16, t.dims(),
                             std::string(reinterpret_cast<const char*>(t.data()), t.byteSize()));
  return t;
}

std::vector<fs::path> dataSets(const fs::path& dir) {
  std::vector<fs::path> sets;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.is_directory(ec) && e.path().filename().string().rfind("test_data_set_", 0) == 0) sets.push_back(e.path());
  std::sort(sets.begin(), sets.end());
  return sets;
}

// Runs one data set; returns the reason of the first mismatch, empty when every output matches.
std::string runDataSet(const ReferenceExecutor& executor, const Graph& g, const fs::path& set) {
  const std::vector<const Value*> fed = fedInputs(g);
  std::vector<Tensor> inputs(g.inputs().size());
  size_t given = 0;
  for (size_t i = 0; fs::exists(set / ("input_" + std::to_string(i) + ".pb")); ++i) {
    if (i >= fed.size()) return "more input files than graph inputs";
    NamedTensor t = readTensorFile((set / ("input_" + std::to_string(i) + ".pb")).string());
    const size_t slot = static_cast<size_t>(std::find(g.inputs().begin(), g.inputs().end(), fed[i]) - g.inputs().begin());
    inputs[slot] = retagged(std::move(t.tensor), fed[i]->type());
    ++given;
  }
  if (given < fed.size()) {
    // Trailing optional inputs may be left out; a required one without data is the test's fault.
    for (size_t i = given; i < fed.size(); ++i)
      if (!fed[i]->uses().empty()) return "no input_" + std::to_string(i) + ".pb for input '" + fed[i]->name() + "'";
  }
  const std::vector<Tensor> outputs = executor.run(g, inputs);
  for (size_t i = 0; i < g.outputs().size(); ++i) {
    const fs::path pb = set / ("output_" + std::to_string(i) + ".pb");
    if (!fs::exists(pb)) continue;
    const Tensor want = retagged(readTensorFile(pb.string()).tensor, g.outputs()[i]->type());
    const TensorDifference d = compareTensors(outputs[i], want, toleranceFor(want.dtype()));
    if (!d.within())
      return set.filename().string() + " output " + std::to_string(i) + ": " + d.firstMismatch +
             (d.mismatches > 1 ? " (" + std::to_string(d.mismatches) + " elements differ)" : "");
  }
  return {};
}

// Sequences, optionals and maps at the graph boundary: the emulator computes tensors only.
std::string nonTensorBoundary(const Graph& g) {
  for (const Value* v : g.inputs())
    if (v->type().known() && !v->type().isTensor()) return "non-tensor input '" + v->name() + "' (" + v->type().toString() + ")";
  for (const Value* v : g.outputs())
    if (v->type().known() && !v->type().isTensor()) return "non-tensor output '" + v->name() + "' (" + v->type().toString() + ")";
  return {};
}

}  // namespace

const char* conformanceStatusName(ConformanceStatus s) {
  switch (s) {
    case ConformanceStatus::Passed:
      return "passed";
    case ConformanceStatus::Failed:
      return "failed";
    case ConformanceStatus::Skipped:
      return "skipped";
  }
  return "failed";
}

std::vector<std::string> findConformanceTests(const std::string& root) {
  std::error_code ec;
  if (!fs::is_directory(root, ec)) throw std::runtime_error(root + ": not a directory");
  std::vector<std::string> found;
  std::function<void(const fs::path&, int)> walk = [&](const fs::path& dir, int depth) {
    if (fs::exists(dir / "model.onnx", ec)) {
      found.push_back(dir.string());
      return;
    }
    if (depth == 3) return;
    for (const auto& e : fs::directory_iterator(dir, ec))
      if (e.is_directory(ec) && !e.is_symlink(ec)) walk(e.path(), depth + 1);
  };
  walk(root, 0);
  std::sort(found.begin(), found.end());
  return found;
}

ConformanceResult runConformanceTest(const std::string& dir) {
  ConformanceResult r;
  const fs::path path(dir);
  r.dir = dir;
  r.name = path.filename().string();
  r.suite = path.parent_path().filename().string();
  const auto start = std::chrono::steady_clock::now();
  try {
    const OnnxImport imported = readOnnxFile((path / "model.onnx").string(), {.runChecker = false});
    const Model& model = *imported.model;
    if (std::string why = nonTensorBoundary(*model.graph); !why.empty()) {
      r.status = ConformanceStatus::Skipped;
      r.reason = why + " (not emulated)";
    } else {
      const std::vector<fs::path> sets = dataSets(path);
      if (sets.empty()) throw std::runtime_error("no test_data_set_* folder");
      ExecutionOptions options;
      options.opset = model.opsetFor("");
      options.checkInputTypes = false;  // a few suite models declare shapes their data does not have
      options.functions = makeFunctionExpander(model);
      const ReferenceExecutor executor(options);
      r.status = ConformanceStatus::Passed;
      for (const fs::path& set : sets) {
        ++r.dataSets;
        if (std::string mismatch = runDataSet(executor, *model.graph, set); !mismatch.empty()) {
          r.status = ConformanceStatus::Failed;
          r.reason = mismatch;
          break;
        }
      }
    }
  } catch (const NotEmulatable& e) {
    r.status = ConformanceStatus::Failed;
    r.reason = e.what();
  } catch (const LoadError& e) {
    r.status = ConformanceStatus::Failed;
    r.reason = e.describe();
  } catch (const std::exception& e) {
    r.status = ConformanceStatus::Failed;
    r.reason = e.what();
  }
  r.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return r;
}

}  // namespace kiln
