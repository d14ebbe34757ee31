#pragma once
// Minimal command-line parsing for the headless subcommands: positional arguments, flags and valued options
// (repeatable). Unknown options are usage errors (exit code 2).
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace kiln::cli {

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct ArgSpec {
  std::set<std::string> flags;   // e.g. "--json"
  std::set<std::string> valued;  // e.g. "-o", "--layers"; "--key=value" is accepted too
};

struct Args {
  std::vector<std::string> positional;
  std::set<std::string> flags;
  std::map<std::string, std::vector<std::string>> values;

  bool has(const std::string& flag) const { return flags.count(flag) > 0; }
  std::optional<std::string> value(const std::string& key) const;
  // Integer option in [lo, hi]; throws UsageError otherwise.
  std::optional<long long> intValue(const std::string& key, long long lo, long long hi) const;
};

Args parseArgs(const std::vector<std::string>& argv, const ArgSpec& spec);

}  // namespace kiln::cli
