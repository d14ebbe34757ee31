#pragma once
// The case list of a batch: every model × every option set, in one sorted order that does not depend on the
// machine, the file system's listing order or timing — so `--shard I/N` on N CI machines takes disjoint slices that
// together are the whole list, and a case keeps its id (and its report file names) across runs.
#include <string>
#include <vector>

#include "options/options.h"

namespace kiln {

struct OptionSet {
  std::string name;  // the file's stem: "default", "o1"
  std::string path;
  Options options;
};

struct BatchCase {
  std::string model;  // path as given (a file named on the command line, or found under a directory)
  const OptionSet* options = nullptr;
  std::string id;     // file-name-safe and unique: "<model stem>.<option set>-<6 hex of a hash of both>"
};

// Model files under each argument: a file as it is, a directory searched recursively for .onnx and .om files.
// Throws LoadError for an argument that does not exist or a directory without models.
std::vector<std::string> findModels(const std::vector<std::string>& paths);

// Option set files, each read and validated (LoadError / OptionError naming the file); two files with the same stem
// are refused (the name is what reports and baselines match on).
std::vector<OptionSet> loadOptionSets(const std::vector<std::string>& files);

// models × option sets, sorted by (model, option set name), with their ids.
std::vector<BatchCase> batchCases(const std::vector<std::string>& models, const std::vector<OptionSet>& sets);

// Shard `index` (1-based) of `count`: the cases at positions index-1, index-1+count, ... of the sorted list (round
// robin, so shards differ by at most one case and neighbours — a model's option sets — spread over machines).
std::vector<BatchCase> shardCases(const std::vector<BatchCase>& cases, int index, int count);
// "I/N" with 1 <= I <= N <= 10000; throws std::invalid_argument otherwise.
std::pair<int, int> parseShard(const std::string& text);

// A file-name-safe id for a model × option set ("resnet50.default-3fa2c1").
std::string caseId(const std::string& model, const std::string& optionSet);

}  // namespace kiln
