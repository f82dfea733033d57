// pipesim._pipesim: the C++ half of the Python package (python/pipesim/__init__.py is the other half). Each
// function forwards plain arguments to python/pipesim_facade.h with the GIL released and returns the text the
// CLI writes; library exceptions become pipesim.Error (pipesim.InputError for bad input) with the CLI's
// message.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "base/error_message.h"
#include "base/errors.h"
#include "python/pipesim_facade.h"

namespace py = pybind11;
namespace facade = pipesim::facade;

namespace {

// Calls f without the GIL: a run is pure C++ on strings, so Python threads may run meanwhile.
template <typename F>
auto without_gil(F&& f) {
  py::gil_scoped_release release;
  return f();
}

}  // namespace

PYBIND11_MODULE(_pipesim, m) {
  m.doc() = "pipesim's C++ library behind the pipesim package; use the functions of pipesim, not these.";
  m.attr("__version__") = PIPESIM_VERSION;

  // Owned by the module for the interpreter's life (pybind11's pattern for custom exception types).
  static py::handle error_type = PyErr_NewExceptionWithDoc(
      "pipesim.Error", "A pipesim failure; str(e) is the message the pipesim command prints.",
      PyExc_Exception, nullptr);
  static py::handle input_error_type =
      PyErr_NewExceptionWithDoc("pipesim.InputError",
                                "Bad input (a scenario key or value, a schedule parameter, a CSV cell): the "
                                "message names where and what "
                                "is allowed.",
                                error_type.ptr(), nullptr);
  m.attr("Error") = error_type;
  m.attr("InputError") = input_error_type;
  py::register_exception_translator([](std::exception_ptr thrown) {
    try {
      if (thrown) std::rethrow_exception(thrown);
    } catch (const py::error_already_set&) {
      throw;  // already a Python exception
    } catch (const py::builtin_exception&) {
      throw;  // pybind11's own (argument conversion and the like)
    } catch (const pipesim::InputError& e) {
      // The command's message, bounded in length as the command bounds it (base/error_message.h).
      PyErr_SetString(input_error_type.ptr(), pipesim::error_message(e).c_str());
    } catch (const std::exception& e) {
      // Everything else the pipesim command reports as "pipesim: error: ..." (deadlocks, schedule errors).
      PyErr_SetString(error_type.ptr(), pipesim::error_message(e).c_str());
    }
  });

  m.def(
      "run_json",
      [](const std::string& path, const std::string& text, const std::string& source,
         const std::string& schedules, const std::vector<std::string>& overrides, bool memory_timeline,
         bool allow_unmodelled) {
        return without_gil([&] {
          return facade::run_json({path, text, source},
                                  {schedules, overrides, memory_timeline, allow_unmodelled});
        });
      },
      py::arg("path"), py::arg("text"), py::arg("source"), py::arg("schedules"), py::arg("overrides"),
      py::arg("memory_timeline"), py::arg("allow_unmodelled"));
  m.def(
      "sweep_csv",
      [](const std::string& path, const std::string& stages, const std::string& microbatches,
         const std::string& schedules, const std::vector<std::pair<std::string, std::string>>& params,
         const std::vector<std::string>& overrides, int jobs, bool allow_unmodelled) {
        return without_gil([&] {
          return facade::sweep_csv(
              path, {stages, microbatches, schedules, params, overrides, jobs, allow_unmodelled});
        });
      },
      py::arg("path"), py::arg("stages"), py::arg("microbatches"), py::arg("schedules"), py::arg("params"),
      py::arg("overrides"), py::arg("jobs"), py::arg("allow_unmodelled"));
  m.def("schedules_json", [] { return without_gil([] { return facade::schedules_json(); }); });
  m.def(
      "export_csv",
      [](const std::string& schedule, int stages, int microbatches, int chunks, const std::string& costs,
         const std::string& comm_ms) {
        return without_gil([&] {
          return facade::export_csv({schedule, stages, microbatches, chunks, costs, comm_ms});
        });
      },
      py::arg("schedule"), py::arg("stages"), py::arg("microbatches"), py::arg("chunks"), py::arg("costs"),
      py::arg("comm_ms"));
  m.def("set_max_memory_gb", &facade::set_max_memory_gb, py::arg("gb"));
  m.def("max_memory_gb", &facade::max_memory_gb);
}
