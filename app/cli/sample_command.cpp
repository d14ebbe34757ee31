// kiln sample NAME -o FILE [--layers N] [--no-weights] [--seed S] [--quantize dynamic|qdq]
//             [--names scoped|numbered|none]: writes one of Kiln's
// generated sample models, optionally in the int8 form ONNX Runtime's quantization tool writes.
#include <iostream>

#include "cli/args.h"
#include "cli/commands.h"
#include "io/onnx/onnx_writer.h"
#include "samples/sample_models.h"
#include "util/units.h"

namespace kiln::cli {

int runSample(const Argv& argv) {
  const Args args = parseArgs(argv, {{"--no-weights", "--list"}, {"-o", "--output", "--layers", "--seed", "--quantize", "--names"}});
  if (args.has("--list") || args.positional.empty()) {
    std::cout << "usage: kiln sample NAME -o FILE [--layers N] [--no-weights] [--seed S] [--quantize dynamic|qdq] [--names scoped|numbered|none]\n\n"
                 "--names: node names as torch.onnx writes them (scoped, the default), numbered as older exporters\n"
                 "and graph rewriters do (MatMul_123), or none at all\n\nsamples:\n";
    for (const auto& s : sampleCatalog())
      std::cout << "  " << s.name << std::string(s.name.size() < 13 ? 13 - s.name.size() : 1, ' ') << s.description
                << " (default " << s.defaultLayers << " layers)\n";
    return args.has("--list") ? 0 : 2;
  }
  if (args.positional.size() != 1) throw UsageError("usage: kiln sample NAME -o FILE [--layers N] [--no-weights]");
  auto out = args.value("-o");
  if (!out) out = args.value("--output");
  if (!out) throw UsageError("kiln sample needs -o FILE");
  SampleOptions options;
  options.layers = static_cast<int>(args.intValue("--layers", 1, 4096).value_or(0));
  options.weights = !args.has("--no-weights");
  options.seed = static_cast<uint64_t>(args.intValue("--seed", 0, 1LL << 62).value_or(1));
  options.quantize = args.value("--quantize").value_or("");
  options.names = args.value("--names").value_or("scoped");
  std::unique_ptr<Model> model;
  try {
    model = buildSample(args.positional[0], options);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  writeOnnxFile(*model, *out);
  std::cerr << "wrote " << *out << ": " << withThousands(static_cast<int64_t>(model->graph->numNodesRecursive()))
            << " nodes\n";
  return 0;
}

}  // namespace kiln::cli
