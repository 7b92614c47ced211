// The Python module sluice._sluice: the engine's side of the `sluice` package (python/sluice/),
// which gives it PySpark's shape. Nothing here is meant to be called by users directly.
#include "binding.h"

using sluice::python::StatusError;
namespace py = pybind11;

PYBIND11_MODULE(_sluice, m) {
  m.doc() = "The native core of the sluice package.";
  m.attr("__version__") = SLUICE_VERSION;
  py::register_exception_translator([](std::exception_ptr pointer) {
    try {
      if (pointer) std::rethrow_exception(pointer);
    } catch (const StatusError& error) {
      py::object type = py::module_::import("sluice.errors").attr("SluiceError");
      PyErr_SetObject(type.ptr(), py::make_tuple(error.error_class, error.message).ptr());
    }
  });
  sluice::python::DefineFrames(m);
  sluice::python::DefineQueries(m);
  sluice::python::DefinePipelines(m);
}
