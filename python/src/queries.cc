// Streaming queries for the Python module: a StreamingQuery run on a thread of its own, the GIL
// released while it runs and taken only to call a Python foreachBatch function.
#include <pybind11/stl.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>

#include "binding.h"
#include "sluice/connectors/register_formats.h"
#include "sluice/core/error_classes.h"
#include "sluice/engine/builtin_sinks.h"
#include "sluice/engine/streaming_query.h"
#include "sluice/pipeline/flow_operators.h"

namespace sluice::python {
namespace {

// A Python object owned by C++ code that may let go of it on any thread: dropped with the GIL.
struct PythonObject {
  py::object object;
  explicit PythonObject(py::object o) : object(std::move(o)) {}
  ~PythonObject() {
    py::gil_scoped_acquire gil;
    object = py::object();
  }
};

// The exception being handled, with its traceback, as Python prints it.
std::string TracebackOf(py::error_already_set& error) {
  try {
    py::object lines = py::module_::import("traceback").attr("format_exception")(error.type(), error.value(),
                                                                                   error.trace());
    return py::str("").attr("join")(lines).cast<std::string>();
  } catch (const py::error_already_set&) {
    return error.what();
  }
}

// Calls `function(frame, batch_id)` with the GIL held; a Python exception fails the batch with
// PYTHON_CALLBACK_FAILED and the traceback.
}  // namespace

engine::ForeachBatchFunction PythonForeachBatch(py::object function) {
  auto callable = std::make_shared<PythonObject>(std::move(function));
  return [callable](const RecordBatch& batch, const engine::BatchContext& context) -> Status {
    // The frame shares the batch's columns (no copy); it stays valid if the function keeps it.
    auto frame = std::make_shared<Frame>();
    frame->schema = batch.schema();
    frame->batches.push_back(std::make_shared<RecordBatch>(batch.schema(), batch.columns(), batch.num_rows()));
    py::gil_scoped_acquire gil;
    try {
      callable->object(frame, context.batch_id);
      return Status::OK();
    } catch (py::error_already_set& error) {
      return Status::Error(errors::kPythonCallbackFailed,
                           "the foreachBatch function failed on batch " + std::to_string(context.batch_id) + ":\n" +
                               TracebackOf(error));
    }
  };
}

namespace {


using Options = std::map<std::string, std::string>;

class Query {
 public:
  struct Spec {
    std::string source_format;
    Options source_options;
    std::string where;
    std::vector<std::string> select;
    std::string sink_format;  // empty with a foreach_batch function
    Options sink_options;
    py::object foreach_batch;  // None unless foreachBatch
    std::string checkpoint;
    std::string trigger;
    std::string trigger_interval;
    std::string output_mode;
    std::string name;
    bool ansi = true;
  };

  static std::shared_ptr<Query> Start(Spec spec) {
    engine::ForeachBatchFunction function;
    if (!spec.foreach_batch.is_none()) function = PythonForeachBatch(std::move(spec.foreach_batch));
    auto query = std::shared_ptr<Query>(new Query);
    {
      py::gil_scoped_release nogil;
      engine::Registry& registry = connectors::AllFormatsRegistry();
      std::unique_ptr<engine::Source> source = Check(registry.MakeSource(spec.source_format, spec.source_options));
      std::unique_ptr<engine::Sink> sink;
      if (function) {
        sink = engine::MakeForeachBatchSink(spec.name, std::move(function));
      } else {
        sink = Check(registry.MakeSink(spec.sink_format, spec.sink_options));
      }
      engine::QueryConfig config;
      config.name = spec.name;
      config.checkpoint_location = spec.checkpoint;
      config.trigger = Check(engine::ParseTrigger(spec.trigger, spec.trigger_interval));
      config.output_mode = Check(engine::ParseOutputMode(spec.output_mode));
      pipeline::FlowSpec flow;
      flow.name = spec.name;
      if (!spec.where.empty()) flow.where = spec.where;
      flow.select = spec.select;
      config.operators =
          Check(pipeline::MakeFlowOperators(flow, expr::SqlOptions{.ansi = spec.ansi}, config.output_mode)).operators;
      Query* raw = query.get();
      config.on_progress = [raw](const engine::QueryProgress& progress) { raw->Record(progress.ToJson()); };
      query->query_ = Check(engine::StreamingQuery::Start(std::move(source), std::move(sink), std::move(config)));
      query->id_ = query->query_->id();
      query->run_id_ = query->query_->run_id();
      query->name_ = query->query_->name();
    }
    query->thread_ = std::thread([raw = query.get()] { raw->RunToEnd(); });
    return query;
  }

  ~Query() {
    if (thread_.joinable()) {
      py::gil_scoped_release nogil;
      RequestStop();
      thread_.join();
    }
  }

  // Waits until the query ends (or `timeout` seconds pass): whether it ended. A query that
  // failed raises its error.
  bool AwaitTermination(std::optional<double> timeout) {
    bool done;
    {
      py::gil_scoped_release nogil;
      std::unique_lock lock(mutex_);
      if (timeout) {
        done = ended_.wait_for(lock, std::chrono::duration<double>(*timeout), [this] { return done_; });
      } else {
        ended_.wait(lock, [this] { return done_; });
        done = true;
      }
    }
    if (done && !result_.ok()) Throw(result_);
    return done;
  }

  // Asks the query to stop after its batch in progress and waits until it has.
  void Stop() {
    py::gil_scoped_release nogil;
    RequestStop();
    if (thread_.joinable()) thread_.join();
  }

  bool is_active() const {
    std::lock_guard lock(mutex_);
    return !done_;
  }
  // (error class, message) of a failed query; None while it runs or when it ended well.
  std::optional<std::pair<std::string, std::string>> exception() const {
    std::lock_guard lock(mutex_);
    if (!done_ || result_.ok()) return std::nullopt;
    return std::make_pair(std::string(result_.error_class()), std::string(result_.message()));
  }
  std::optional<std::string> last_progress() const {
    std::lock_guard lock(mutex_);
    if (progress_.empty()) return std::nullopt;
    return progress_.back();
  }
  std::vector<std::string> recent_progress() const {
    std::lock_guard lock(mutex_);
    return {progress_.begin(), progress_.end()};
  }
  const std::string& id() const { return id_; }
  const std::string& run_id() const { return run_id_; }
  const std::string& name() const { return name_; }

 private:
  Query() = default;

  void Record(std::string progress) {
    std::lock_guard lock(mutex_);
    progress_.push_back(std::move(progress));
    // As many as Spark keeps (spark.sql.streaming.numRecentProgressUpdates).
    if (progress_.size() > 100) progress_.pop_front();
  }

  void RequestStop() {
    std::lock_guard lock(mutex_);
    if (query_ != nullptr) query_->Stop();
  }

  void RunToEnd() {
    Status result = query_->Run();
    // An ended query lets go of its checkpoint (its lock) and its source and sink at once, as
    // Spark's does: the next query on the checkpoint may start as soon as this one is seen ended.
    std::unique_ptr<engine::StreamingQuery> ended;
    {
      std::lock_guard lock(mutex_);
      ended = std::move(query_);
    }
    ended.reset();
    std::lock_guard lock(mutex_);
    result_ = std::move(result);
    done_ = true;
    ended_.notify_all();
  }

  std::string id_;
  std::string run_id_;
  std::string name_;
  std::unique_ptr<engine::StreamingQuery> query_;
  std::thread thread_;
  mutable std::mutex mutex_;
  std::condition_variable ended_;
  bool done_ = false;
  Status result_;
  std::deque<std::string> progress_;
};

}  // namespace

void DefineQueries(py::module_& m) {
  py::class_<Query, std::shared_ptr<Query>>(m, "Query", "A running streaming query.")
      .def_property_readonly("id", &Query::id)
      .def_property_readonly("run_id", &Query::run_id)
      .def_property_readonly("name", &Query::name)
      .def_property_readonly("is_active", &Query::is_active)
      .def_property_readonly("exception", &Query::exception)
      .def_property_readonly("last_progress", &Query::last_progress)
      .def_property_readonly("recent_progress", &Query::recent_progress)
      .def("await_termination", &Query::AwaitTermination, py::arg("timeout") = py::none())
      .def("stop", &Query::Stop);

  m.def(
      "start_query",
      [](std::string source_format, Options source_options, std::string where, std::vector<std::string> select,
         std::string sink_format, Options sink_options, py::object foreach_batch, std::string checkpoint,
         std::string trigger, std::string trigger_interval, std::string output_mode, std::string name, bool ansi) {
        return Query::Start(Query::Spec{std::move(source_format), std::move(source_options), std::move(where),
                                        std::move(select), std::move(sink_format), std::move(sink_options),
                                        std::move(foreach_batch), std::move(checkpoint), std::move(trigger),
                                        std::move(trigger_interval), std::move(output_mode), std::move(name), ansi});
      },
      py::arg("source_format"), py::arg("source_options"), py::arg("where"), py::arg("select"), py::arg("sink_format"),
      py::arg("sink_options"), py::arg("foreach_batch"), py::arg("checkpoint"), py::arg("trigger"),
      py::arg("trigger_interval"), py::arg("output_mode"), py::arg("name"), py::arg("ansi"));
}

}  // namespace sluice::python
