// What the Python module's files share: how a failed Status becomes a Python exception, and the
// frame (an immutable table of batches) that sluice.DataFrame wraps.
#pragma once

#include <pybind11/pybind11.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "sluice/core/record_batch.h"
#include "sluice/core/status.h"
#include "sluice/engine/registry.h"

namespace sluice::python {

namespace py = pybind11;

// Thrown for a failed Status; the module turns it into sluice.errors.SluiceError (the error class
// and message kept apart, as PySpark's getCondition() and str() give them).
struct StatusError {
  std::string error_class;
  std::string message;
};

[[noreturn]] inline void Throw(const Status& status) {
  throw StatusError{std::string(status.error_class()), std::string(status.message())};
}
inline void Check(const Status& status) {
  if (!status.ok()) Throw(status);
}
template <typename T>
T Check(Result<T> result) {
  if (!result.ok()) Throw(result.status());
  return *std::move(result);
}

// Batches of one schema: what a DataFrame holds. Immutable; shared by the DataFrames made from it.
struct Frame {
  TypePtr schema;
  std::vector<BatchPtr> batches;

  int64_t num_rows() const {
    int64_t rows = 0;
    for (const BatchPtr& batch : batches) rows += batch->num_rows();
    return rows;
  }
  // The rows as one batch (a write of a whole DataFrame is one commit).
  BatchPtr Whole() const;
};
using FramePtr = std::shared_ptr<Frame>;

// Calls `function(frame, batch_id)` with the GIL held; a Python exception fails the batch with
// PYTHON_CALLBACK_FAILED and the traceback. The function is released with the GIL held, from
// whichever thread drops the last copy.
engine::ForeachBatchFunction PythonForeachBatch(py::object function);

// Defined in the module's files, called once from its init.
void DefineFrames(py::module_& m);
void DefineQueries(py::module_& m);
void DefinePipelines(py::module_& m);

}  // namespace sluice::python
