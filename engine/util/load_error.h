#pragma once
// The one error every reader throws for bad input: it names the file and says what is wrong in one line.
// Command-line front ends print it as "kiln: FILE: message" and exit with code 2.
#include <stdexcept>
#include <string>

namespace kiln {

class LoadError : public std::runtime_error {
 public:
  LoadError(std::string file, const std::string& problem)
      : std::runtime_error(problem), file_(std::move(file)) {}
  const std::string& file() const { return file_; }
  std::string describe() const { return file_.empty() ? what() : file_ + ": " + what(); }

 private:
  std::string file_;
};

}  // namespace kiln
