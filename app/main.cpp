// The `kiln` executable. Subcommands are headless: they never create a QApplication and run without a display.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "cli/args.h"
#include "cli/commands.h"
#include "workbench_loader.h"
#include "util/load_error.h"
#include "util/weight_allocator.h"
#include "io/model_path.h"
#include "ir/opdefs/op_registry.h"

namespace {

void printUsage(std::ostream& os) {
  os << "Kiln — see what a graph compiler does to a model.\n\n"
        "usage: kiln [FILE]          the workbench (an ONNX model or a history database)\n"
        "       kiln COMMAND [ARGS]  headless\n\n"
        "commands:\n"
        "  inspect FILE [--json] [--structure]   what is in a model: ops, shapes, parameters, unsupported ops;\n"
        "                                        --structure: the groups found (scopes, repeated layers)\n"
        "  sample NAME -o FILE [--layers N] [--no-weights] [--names none|numbered]\n"
        "         [--quantize dynamic|qdq]\n"
        "                                        write a generated sample model (resnet50, bert-base, llama,\n"
        "                                        mobilenetv2; `kiln sample --list`)\n"
        "  compile MODEL [--options F] [--set k=v] [--history DB] [--until PASS|STAGE]\n"
        "                [--dump-dir D [--dump-format onnx|ge_proto]] [-o OUT.om] [--json]\n"
        "                [--sweep SYMBOL|ROLE=V1,V2,... [--chart F.svg]]\n"
        "                                        run the compiler; a table of passes (ms, nodes, counters);\n"
        "                                        --history records every pass in an SQLite database;\n"
        "                                        -o writes an Ascend offline model (.om); gears with\n"
        "                                        --set dynamic_batch_size=1,2,4 (dynamic_image_size,\n"
        "                                        dynamic_dims); --sweep: arena and latency per extent\n"
        "  history list DB | show DB RUN [--pass N] [--diff] | diff DB RUN A B   [--json]\n"
        "                                        read a history: runs, passes, the graph after a pass, diffs\n"
        "  history import DB GE_DUMP_DIR [--json]\n"
        "                                        a folder of GE graph dumps (ge_proto_*.txt) as one run\n"
        "  history import DB PROFILE [--run N] [--json]\n"
        "                                        an msprof profile (folder or op_summary CSV) beside run N,\n"
        "                                        tasks matched to its nodes, or as a run of its own\n"
        "  history merge OUT.db IN.db... [--json]\n"
        "                                        copy every run of the inputs into OUT (new run ids)\n"
        "  history upgrade DB [--json]           bring a history written by an older Kiln to this schema\n"
        "  plan TRACE.csv [--planner P] [--alignment N] [--budget-ms MS] [--json]\n"
        "                                        plan a memory trace (id,lower,upper,size rows): arena, lower\n"
        "                                        bound, ratio; planners none, greedy_size, best_of, exact\n"
        "                                        (default: best_of, then exact on small traces)\n"
        "  run MODEL [--options F] [--set k=v] [--inputs DIR | --random SEED] [--dim SYMBOL=N]\n"
        "            [--expected OUT.pb]... [--soc NAME|FILE] [--trace OUT.json] [--history DB]\n"
        "            [--repeat N] [--json]\n"
        "                                        emulate: reference vs compiled (in the planned arena),\n"
        "                                        per-output pass/fail against the precision gate; expected\n"
        "                                        outputs checked; --repeat: time the fastest of N runs\n"
        "  verify MODEL [--options F] [--set k=v] [--inputs DIR | --random SEED] [--dim SYMBOL=N]\n"
        "               [--rtol X] [--history DB] [--json]\n"
        "                                        the error after every pass against the original; names\n"
        "                                        the first pass over tolerance\n"
        "  conformance DIR... [--filter TEXT] [--verbose] [--json]\n"
        "                                        run ONNX backend test folders (model.onnx + test_data_set_*)\n"
        "                                        on the emulator; pass/fail per test with the reason\n"
        "  batch --models DIR|FILE... --options A.json [--options B.json]... --out DIR [--history DB]\n"
        "        [--jobs N] [--baseline OLD/summary.json] [--fail-on EXPR]... [--shard I/N] [--timing-only]\n"
        "        [--quiet] [--sweep SYMBOL|ROLE=V1,...] [--overlay METRIC]\n"
        "                                        every model x option set: compile, simulate, emulate; reports\n"
        "                                        (summary.json/.md, junit.xml, index.html, traces); gates\n"
        "        --merge-reports DIR... --out DIR   join the reports of shards\n"
        "  calibrate PROFILE... --soc NAME|FILE [-o MY_SOC.json] [--name NAME] [--json]\n"
        "                                        fit a SoC profile's per-op costs to msprof-measured tasks;\n"
        "                                        per op type: measured, simulated before and after\n"
        "  help                                  this text (--version: the version)\n\n"
        "exit codes: 0 ok, 1 a check failed, 2 bad input or arguments\n";
}

// Ends the process once a headless command is done: its files are closed and its output written. Leaves without
// running the destructors of static objects: libonnx frees its thousands of schemas one by one, a few ms of every
// command. Sanitizer builds exit normally, for the leak check.
[[noreturn]] void leave(int rc) {
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
#if defined(__SANITIZE_ADDRESS__)
  std::exit(rc);
#else
  std::_Exit(rc);
#endif
}

// One headless command: its exit code, every error reported on stderr (kiln COMMAND: ...).
int runCommand(const std::string& command, const std::vector<std::string>& rest) {
  try {
    if (command == "inspect") return kiln::cli::runInspect(rest);
    if (command == "sample") return kiln::cli::runSample(rest);
    if (command == "compile") return kiln::cli::runCompile(rest);
    if (command == "history") return kiln::cli::runHistory(rest);
    if (command == "plan") return kiln::cli::runPlan(rest);
    if (command == "conformance") return kiln::cli::runConformance(rest);
    if (command == "run") return kiln::cli::runRun(rest);
    if (command == "verify") return kiln::cli::runVerify(rest);
    if (command == "batch") return kiln::cli::runBatch(rest);
    if (command == "calibrate") return kiln::cli::runCalibrate(rest);
    std::cerr << "kiln: unknown command '" << command << "'\n\n";
    printUsage(std::cerr);
    return 2;
  } catch (const kiln::LoadError& e) {
    std::cerr << "kiln: " << e.describe() << "\n";
    return 2;
  } catch (const kiln::cli::UsageError& e) {
    std::cerr << "kiln " << command << ": " << e.what() << "\n";
    return 2;
  } catch (const std::bad_alloc&) {
    // The file being worked on is the command's first argument (inspect, compile, run, verify, plan: the model or
    // trace), the database for history.
    const size_t at = command == "history" ? 1 : 0;  // history SUBCOMMAND DB
    const std::string subject = rest.size() <= at || rest[at].starts_with("-") ? std::string() : rest[at] + ": ";
    std::cerr << "kiln " << command << ": " << subject << "out of memory (lower the limits: README \"Hardening\")\n";
    // Leave at once, even in a sanitizer build: OpenBLAS's shutdown joins worker threads that retry their buffer
    // allocation forever when memory is exhausted (seen under ulimit -v). Everything of ours is unwound already.
    std::cout.flush();
    std::cerr.flush();
    std::_Exit(2);
  } catch (const std::exception& e) {
    std::cerr << "kiln " << command << ": " << e.what() << "\n";
    return 2;
  }
}

}  // namespace

int main(int argc, char** argv) {
  kiln::tuneAllocatorForWeights();  // weight buffers reuse heap memory instead of faulting fresh pages
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.size() == 1 && (args[0] == "help" || args[0] == "--help" || args[0] == "-h")) {
    printUsage(std::cout);
    return 0;
  }
  if (args.size() == 1 && args[0] == "--version") {
    std::cout << "kiln " << KILN_VERSION << "\n";
    return 0;
  }
  // No command, or a file that exists: the workbench (which refuses cleanly without a display).
  const bool isCommand = !args.empty() && (args[0] == "inspect" || args[0] == "sample" || args[0] == "compile" ||
                                         args[0] == "history" || args[0] == "plan" ||
                                         args[0] == "conformance" || args[0] == "run" ||
                                         args[0] == "verify" || args[0] == "batch" ||
                                         args[0] == "calibrate");
  if (args.empty() || (!isCommand && args.size() == 1 && kiln::modelPathExists(args[0]))) {
    if (args.empty() && !kiln::app::displayAvailable()) {
      printUsage(std::cerr);
      return 2;
    }
    return kiln::app::runWorkbench(argc, argv, args.empty() ? std::string() : args[0]);
  }
  const std::string command = args[0];
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  // "kiln compile --help": the usage, which lists every command's options.
  if (isCommand && std::any_of(rest.begin(), rest.end(), [](const std::string& a) { return a == "--help" || a == "-h"; })) {
    printUsage(std::cout);
    return 0;
  }
  // Commands that read models: libonnx's schemas register on the other core while the model is read and parsed.
  std::optional<kiln::RegistryWarmup> warmup;
  if (command == "inspect" || command == "compile" || command == "run" || command == "verify" ||
      command == "conformance" || command == "batch" || command == "calibrate")
    warmup.emplace();
  const int rc = runCommand(command, rest);
  warmup.reset();
  leave(rc);
}
