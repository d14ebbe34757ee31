#pragma once
// The shared models the benchmarks measure: every .onnx under ../shared/models except ONNX Runtime's fusion suite
// (hundreds of tiny pattern graphs that would drown the table), sorted by path. Empty with a note when absent.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <vector>

inline std::vector<std::filesystem::path> benchCorpusModels(const std::filesystem::path& models) {
  std::vector<std::filesystem::path> files;
  if (!std::filesystem::is_directory(models)) {
    std::fprintf(stderr, "note: %s not found; corpus rows skipped\n", models.c_str());
    return files;
  }
  for (const auto& e : std::filesystem::recursive_directory_iterator(models))
    if (e.path().extension() == ".onnx" && e.path().string().find("ort_fusion_suite") == std::string::npos)
      files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}
