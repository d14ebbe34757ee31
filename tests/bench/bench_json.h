#pragma once
// How every benchmark ends: its rows as indented JSON at the path given on the command line.
#include <cstdio>
#include <string>

#include "util/json.h"

// 0 when written, 1 (with a message on stderr) when the file cannot be written: the benchmark's exit code.
inline int writeBenchJson(const kiln::Json& rows, const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f) {
    std::fprintf(stderr, "cannot write %s\n", path.c_str());
    return 1;
  }
  const std::string text = rows.dump(2);
  std::fwrite(text.data(), 1, text.size(), f);
  std::fclose(f);
  std::printf("JSON written to %s\n", path.c_str());
  return 0;
}
