// The `_kiln` extension: registers the bindings and turns the engine's exceptions into kiln.Error, with the
// message the CLI prints (a bad file is named with its problem). Python-level conveniences are in kiln/__init__.py.
#include "history/sqlite_handle.h"
#include "py_support.h"
#include "util/load_error.h"
#include "util/weight_allocator.h"

PYBIND11_MODULE(_kiln, m) {
  namespace pb = pybind11;
  m.doc() = "Kiln's engine: load, compile, emulate, read histories.";
  // As the executable does: a compile in this process reuses freed weight buffers (docs/python.md says so).
  kiln::tuneAllocatorForWeights();
  static pb::exception<std::runtime_error> error(m, "Error", PyExc_RuntimeError);
  pb::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const kiln::LoadError& e) {
      PyErr_SetString(error.ptr(), e.describe().c_str());
    } catch (const pb::builtin_exception&) {
      throw;  // pybind11's own (TypeError, ...) keep their type
    } catch (const pb::error_already_set&) {
      throw;
    } catch (const std::exception& e) {
      // Option errors, history errors, a binding the model contradicts, a failed pass: the engine's messages.
      PyErr_SetString(error.ptr(), e.what());
    }
  });
  kiln::py::bindGraph(m);
  kiln::py::bindCompile(m);
  kiln::py::bindHistory(m);
  kiln::py::bindTools(m);
}
