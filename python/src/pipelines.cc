// Pipelines for the Python module: a pipeline file loaded, the tables, flows and sinks its Python
// libraries declare added to it, then validated or run by the same runner as `sluice run`.
#include <pybind11/stl.h>

#include <chrono>
#include <condition_variable>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include "binding.h"
#include "sluice/connectors/register_formats.h"
#include "sluice/core/error_classes.h"
#include "sluice/engine/plugin.h"
#include "sluice/pipeline/event_log.h"
#include "sluice/pipeline/pipeline_runner.h"
#include "sluice/pipeline/pipeline_spec.h"
#include "sluice/storage/file_systems.h"

namespace sluice::python {
namespace {

using Options = std::map<std::string, std::string>;

class Pipeline {
 public:
  static std::shared_ptr<Pipeline> Load(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) Throw(Status::Error(errors::kFileNotFound, "cannot read the pipeline file " + path));
    std::stringstream text;
    text << in.rdbuf();
    auto pipeline = std::shared_ptr<Pipeline>(new Pipeline);
    Result<pipeline::PipelineSpec> spec = pipeline::ParsePipelineSpec(text.str());
    if (!spec.ok()) Throw(spec.status().WithContext(path));
    pipeline->spec_ = *std::move(spec);
    Check(pipeline::ConfigureObjectStores(pipeline->spec_));
    Check(connectors::RegisterAllFormats(&pipeline->registry_));
    return pipeline;
  }

  const pipeline::PipelineSpec& spec() const { return spec_; }

  void SetPaths(const std::string& storage, const std::string& warehouse) {
    spec_.storage = storage::AbsolutePath(storage);
    spec_.warehouse = storage::AbsolutePath(warehouse);
  }

  void AddSink(const std::string& name, const std::string& format, const Options& options,
               const std::optional<std::string>& table) {
    if (spec_.sinks.count(name) > 0) {
      Throw(Status::Error(errors::kInvalidPipeline, "a sink named '" + name + "' is declared twice"));
    }
    spec_.sinks[name] = pipeline::Endpoint{format, options, table};
  }

  void AddFlow(const std::string& name, const std::string& source_format, const Options& source_options,
               const std::string& where, const std::vector<std::string>& select, const std::string& sink,
               const std::string& trigger, const std::string& output_mode,
               const std::vector<std::tuple<std::string, std::string, std::string>>& expectations) {
    pipeline::FlowSpec flow;
    flow.name = name;
    flow.source = pipeline::Endpoint{source_format, source_options, std::nullopt};
    if (!where.empty()) flow.where = where;
    flow.select = select;
    flow.sink = sink;
    flow.trigger = trigger;
    flow.output_mode = output_mode;
    for (const auto& [expectation, condition, action] : expectations) {
      pipeline::ExpectationAction kind = action == "drop"   ? pipeline::ExpectationAction::kDrop
                                         : action == "fail" ? pipeline::ExpectationAction::kFail
                                                            : pipeline::ExpectationAction::kWarn;
      flow.expectations.push_back(pipeline::Expectation{expectation, condition, kind});
    }
    spec_.flows.push_back(std::move(flow));
  }

  // A WARN event of type `warning` about sink `sink` in the pipeline's event log, before the run.
  void LogWarning(const std::string& sink, const std::string& message) {
    std::unique_ptr<pipeline::EventLog> log = Check(pipeline::EventLog::Open(pipeline::EventLog::PathFor(spec_.storage)));
    pipeline::Event event;
    event.level = "WARN";
    event.origin = pipeline::EventOrigin{spec_.name, "", sink};
    event.event_type = "warning";
    event.message = message;
    Check(log->Append(event));
  }

  void RegisterFunction(const std::string& name, py::object function) {
    Check(registry_.RegisterForeachBatch(name, PythonForeachBatch(std::move(function))));
  }

  // Every problem `sluice validate` would list, as text; empty when there is none.
  std::vector<std::string> Validate() {
    LoadPlugins();
    std::vector<std::string> problems;
    py::gil_scoped_release nogil;
    for (const Status& problem : pipeline::ValidatePipeline(spec_, registry_)) problems.push_back(problem.ToString());
    return problems;
  }

  // Runs the pipeline until its flows end (or Ctrl-C, which stops them after their batches in
  // progress); the flows' figures. A failed run raises its first failure.
  py::list Run(const std::vector<std::string>& flows, const std::vector<std::string>& full_refresh,
               bool full_refresh_all) {
    LoadPlugins();
    pipeline::RunOptions options;
    options.flows = flows;
    options.full_refresh = full_refresh;
    options.full_refresh_all = full_refresh_all;
    options.registry = &registry_;
    std::unique_ptr<pipeline::PipelineRun> run;
    {
      py::gil_scoped_release nogil;
      run = Check(pipeline::PipelineRun::Start(spec_, options));
    }
    std::mutex mutex;
    std::condition_variable ended;
    bool done = false;
    Status result;
    std::thread waiter([&] {
      Status status = run->Wait();
      std::lock_guard lock(mutex);
      result = std::move(status);
      done = true;
      ended.notify_all();
    });
    bool interrupted = false;
    while (true) {
      {
        py::gil_scoped_release nogil;
        std::unique_lock lock(mutex);
        if (ended.wait_for(lock, std::chrono::milliseconds(100), [&] { return done; })) break;
      }
      if (!interrupted && PyErr_CheckSignals() != 0) {
        interrupted = true;
        run->Stop();
      }
    }
    {
      py::gil_scoped_release nogil;
      waiter.join();
    }
    if (interrupted) throw py::error_already_set();
    py::list figures;
    for (const pipeline::FlowFigures& flow : run->flows()) {
      py::dict entry;
      entry["name"] = flow.name;
      entry["sink"] = flow.sink;
      entry["state"] = flow.state;
      entry["batches"] = flow.batches;
      entry["input_rows"] = flow.input_rows;
      entry["output_rows"] = flow.output_rows;
      entry["error"] = flow.error;
      figures.append(std::move(entry));
    }
    {
      py::gil_scoped_release nogil;
      run.reset();  // the flows' sinks, Python functions among them, let go here
    }
    if (!result.ok()) Throw(result);
    return figures;
  }

 private:
  Pipeline() = default;

  // A format `plugin:/path/libx.so` is known once its library is loaded (as `sluice run` does).
  void LoadPlugins() {
    for (const pipeline::FlowSpec& flow : spec_.flows) Check(engine::LoadPlugin(&registry_, flow.source.format));
    for (const auto& [name, sink] : spec_.sinks) Check(engine::LoadPlugin(&registry_, sink.format));
  }

  pipeline::PipelineSpec spec_;
  engine::Registry registry_;
};

}  // namespace

void DefinePipelines(py::module_& m) {
  py::class_<Pipeline, std::shared_ptr<Pipeline>>(m, "Pipeline", "A pipeline file and what its libraries add.")
      .def_static("load", &Pipeline::Load, py::arg("path"))
      .def_property_readonly("name", [](const Pipeline& p) { return p.spec().name; })
      .def_property_readonly("storage", [](const Pipeline& p) { return p.spec().storage; })
      .def_property_readonly("warehouse", [](const Pipeline& p) { return p.spec().warehouse; })
      .def_property_readonly("ansi", [](const Pipeline& p) { return p.spec().sql.ansi; })
      .def_property_readonly("libraries", [](const Pipeline& p) { return p.spec().libraries; })
      .def_property_readonly("sinks",
                             [](const Pipeline& p) {
                               std::map<std::string, std::string> sinks;
                               for (const auto& [name, sink] : p.spec().sinks) sinks[name] = sink.format;
                               return sinks;
                             })
      .def_property_readonly("foreach_batch_functions",
                             [](const Pipeline& p) {
                               std::vector<std::string> names;
                               for (const auto& [name, sink] : p.spec().sinks) {
                                 auto function = sink.options.find("function");
                                 if (sink.format == "foreachBatch" && function != sink.options.end()) {
                                   names.push_back(function->second);
                                 }
                               }
                               return names;
                             })
      .def("add_sink", &Pipeline::AddSink, py::arg("name"), py::arg("format"), py::arg("options"), py::arg("table"))
      .def("add_flow", &Pipeline::AddFlow, py::arg("name"), py::arg("source_format"), py::arg("source_options"),
           py::arg("where"), py::arg("select"), py::arg("sink"), py::arg("trigger"), py::arg("output_mode"),
           py::arg("expectations"))
      .def("set_paths", &Pipeline::SetPaths, py::arg("storage"), py::arg("warehouse"))
      .def("log_warning", &Pipeline::LogWarning, py::arg("sink"), py::arg("message"))
      .def("register_function", &Pipeline::RegisterFunction, py::arg("name"), py::arg("function"))
      .def("validate", &Pipeline::Validate)
      .def("run", &Pipeline::Run, py::arg("flows"), py::arg("full_refresh"), py::arg("full_refresh_all"));
}

}  // namespace sluice::python
