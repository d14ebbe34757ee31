#include "cli/args.h"

#include <cerrno>
#include <cstdlib>

namespace kiln::cli {

std::optional<std::string> Args::value(const std::string& key) const {
  auto it = values.find(key);
  if (it == values.end() || it->second.empty()) return std::nullopt;
  return it->second.back();
}

std::optional<long long> Args::intValue(const std::string& key, long long lo, long long hi) const {
  auto v = value(key);
  if (!v) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const long long x = std::strtoll(v->c_str(), &end, 10);
  if (errno != 0 || !end || *end != '\0' || v->empty() || x < lo || x > hi)
    throw UsageError(key + " expects an integer from " + std::to_string(lo) + " to " + std::to_string(hi) + ", got '" +
                     *v + "'");
  return x;
}

Args parseArgs(const std::vector<std::string>& argv, const ArgSpec& spec) {
  Args a;
  bool onlyPositional = false;
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& s = argv[i];
    if (onlyPositional || s.empty() || s[0] != '-' || s == "-") {
      a.positional.push_back(s);
      continue;
    }
    if (s == "--") {
      onlyPositional = true;
      continue;
    }
    const auto eq = s.find('=');
    const std::string key = eq == std::string::npos ? s : s.substr(0, eq);
    if (spec.flags.count(key) && eq == std::string::npos) {
      a.flags.insert(key);
    } else if (spec.valued.count(key)) {
      if (eq != std::string::npos) {
        a.values[key].push_back(s.substr(eq + 1));
      } else {
        if (i + 1 >= argv.size()) throw UsageError(key + " needs a value");
        a.values[key].push_back(argv[++i]);
      }
    } else {
      throw UsageError("unknown option " + key);
    }
  }
  return a;
}

}  // namespace kiln::cli
