#pragma once
// Headless commands end the process as soon as they return (main's leave()), so the big structures they built — a
// model's graph and weights, a recorder's open rows — need not be freed one object at a time first (llama-32
// sample: 2.5 ms of its unrecorded compile, 6.5 ms of its recorded one). Only what is purely memory may be
// handed here; files and databases are closed by their owners before. Sanitizer builds free everything, for the
// leak check.
#include <memory>

namespace kiln::cli {

template <typename T>
void freedByExit(std::unique_ptr<T> p) {
#if defined(__SANITIZE_ADDRESS__)
  p.reset();
#else
  static_cast<void>(p.release());
#endif
}

}  // namespace kiln::cli
