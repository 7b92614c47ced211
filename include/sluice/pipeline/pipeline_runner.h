// Running a pipeline: every selected flow as a StreamingQuery on its own thread, with the flow's
// where/select/expectations applied before its sink, every selected change feed on its own thread
// too, events in the pipeline's event log, and live per-flow figures for the metrics endpoint,
// `sluice status` and the terminal.
//
//   SLUICE_ASSIGN_OR_RETURN(auto run, PipelineRun::Start(spec, options));  // validates, refreshes, opens
//   std::thread stopper([&] { WaitForSignal(); run->Stop(); });
//   Status result = run->Wait();  // until every flow ended; the first failure
//
// A flow that fails stops the others (each finishes its batch in progress) and its error is the
// run's result. Full refresh of a flow deletes its checkpoint and truncates the Delta table its
// sink writes when that table is in the pipeline's warehouse; every other flow writing that
// table is reset with it (the table is rebuilt from all of its flows). Anything else a flow
// writes (PostgreSQL tables, what foreachBatch functions do) is left alone.
//
// Change feeds start before the flows (PgChangeFeed::Start: set-up or resume, the initial copy), so
// the history tables of non-empty source tables exist when the flows open them; a flow reading a
// Delta history table of one of the run's feeds that does not exist yet (its source table is still
// empty) is WAITING until the feed creates it. A feed runs until Stop(); a feed that fails is
// logged, marked FAILED and stops the run as a failing flow does.
//
// Thread safety: Wait() is called once; Stop(), flows(), change_feeds(), ready() and PrometheusText() may be
// called from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "sluice/core/clock.h"
#include "sluice/core/file_system.h"
#include "sluice/core/status.h"
#include "sluice/connectors/register_formats.h"
#include "sluice/engine/registry.h"
#include "sluice/engine/streaming_query.h"
#include "sluice/pipeline/event_log.h"
#include "sluice/pipeline/flow_operators.h"
#include "sluice/pipeline/pipeline_spec.h"
#include "sluice/storage/file_systems.h"

namespace sluice::pipeline {

struct RunOptions {
  std::vector<std::string> flows;         // the flows, streams and change feeds to run; empty: all
  std::vector<std::string> full_refresh;  // flows to reset before running
  bool full_refresh_all = false;
  const engine::Registry* registry = &connectors::AllFormatsRegistry();
  std::shared_ptr<FileSystem> file_system = storage::DefaultFileSystem();
  std::shared_ptr<Clock> clock = SystemClock();
  // This process's group.instance.id in the workers groups of its streams (scale: {group: true}):
  // a member restarted with the same id within the session timeout keeps its partitions. Empty:
  // a dynamic member.
  std::string instance_id;
};

// What a flow has done in this run.
struct FlowFigures {
  std::string name;
  std::string sink;
  std::string state;  // STARTING, WAITING (for its source table), RUNNING, COMPLETED, STOPPED, FAILED
  int64_t batches = 0;
  int64_t input_rows = 0;
  int64_t output_rows = 0;
  int64_t last_batch_id = -1;
  int64_t last_batch_duration_ms = 0;
  double input_rows_per_second = 0;
  int64_t last_batch_micros = 0;  // when the last batch ended (the run's clock); 0 before the first
  // Now minus the newest source `timestamp` written (see EventTimeOperator), when the source has one.
  std::optional<double> event_time_lag_seconds;
  // A Kafka source's records between the last batch's end and the latest offsets it saw.
  std::optional<int64_t> records_behind;
  int64_t errors = 0;
  std::string error;  // the failure, when FAILED
};

// A change feed in this run.
struct ChangeFeedFigures {
  std::string name;
  std::string target;  // catalog.schema of its history tables
  std::string state;   // RUNNING, STOPPED, FAILED
  std::string error;   // the failure, when FAILED
  int64_t history_rows = 0;     // rows in its history tables (snapshots and changes captured)
  int64_t slot_lag_bytes = -1;  // WAL its slot retains beyond what is in Delta; -1 unknown
};

class PipelineRun {
 public:
  // Validates the pipeline (INVALID_PIPELINE listing every problem ValidatePipeline finds, or
  // naming an unknown flow in the options), performs the full refreshes, starts every flow
  // (the errors of StreamingQuery::Start) and returns with the flows running.
  static Result<std::unique_ptr<PipelineRun>> Start(PipelineSpec spec, RunOptions options);
  ~PipelineRun();

  // Blocks until every flow and feed has ended: a flow's trigger is done, Stop() was called, or a
  // flow or feed failed.
  // Returns the first failure (with the flow's name as context), OK otherwise.
  Status Wait();
  // Asks every flow to stop after its batch in progress. Does not block.
  void Stop();

  std::vector<FlowFigures> flows() const;
  std::vector<ChangeFeedFigures> change_feeds() const;
  // Every flow started (or waits for its source table) and no flow or feed failed.
  bool ready() const;
  // The figures in Prometheus' text exposition format, with each feed's read from its status.json
  // (change_feed_status.h).
  std::string PrometheusText() const;
  const std::string& event_log_path() const { return event_log_path_; }

 private:
  struct Flow;
  struct Feed;
  PipelineRun() = default;
  Status Prepare(const std::vector<const FlowSpec*>& selected, const std::vector<const FlowSpec*>& refreshed,
                 const std::vector<const ChangeFeedSpec*>& feeds);
  Status StartFlow(const FlowSpec& spec);
  // Makes the flow's source, sink and query; the flow is then RUNNING.
  Status OpenFlow(Flow* flow);
  // OpenFlow for a stream run by a workers group (group_ingestion.h).
  Status OpenGroupStream(Flow* flow, const StreamSpec& stream, std::map<std::string, std::string> source_options);
  // The Delta table `spec` waits for, and why: a running feed's history table or the table of
  // another flow of this run while it does not exist yet, or, when both flows end by themselves
  // (available_now, once), the table of a writer that has not ended.
  std::optional<std::pair<std::string, std::string>> AwaitedTable(const FlowSpec& spec) const;
  void RunFlow(Flow* flow);
  // Whether the flow starts over when its Delta source is rewritten (FlowSpec::on_source_reset).
  bool ResetsOnSourceReset(const FlowSpec& spec) const;
  // After the flow's query failed with `cause` (its source rewritten): a warning event, a full
  // refresh of the flow and of the Delta table it writes, and a new query. Refused when another
  // flow writes that table too (it would lose rows it wrote).
  Status StartOver(Flow* flow, const Status& cause);
  void FailFlow(Flow* flow, const Status& status);
  Status StartFeed(const ChangeFeedSpec& spec);
  void RunFeed(Feed* feed);
  void OnProgress(Flow* flow, const engine::QueryProgress& progress);
  // Logs a `backfill` event when the flow's stream merged its backfill since the last look.
  void LogBackfill(Flow* flow);
  void LogFeed(const std::string& level, const Feed* feed, const std::string& type, const std::string& message,
               const std::string& details);
  void Log(const std::string& level, const Flow* flow, const std::string& type, const std::string& message,
           const std::string& details = "{}");

  PipelineSpec spec_;
  // The pipeline's flows, then one per stream (named as the stream, without a sink).
  std::vector<FlowSpec> all_flows_;
  RunOptions options_;
  std::string event_log_path_;
  std::unique_ptr<EventLog> events_;
  std::vector<std::unique_ptr<Flow>> flows_;
  std::vector<const FlowSpec*> selected_;  // the flows this run runs
  std::vector<std::unique_ptr<Feed>> feeds_;
  std::vector<std::thread> threads_;
  std::atomic<bool> stop_requested_{false};
  mutable std::mutex mutex_;  // guards every Flow's figures and query, every Feed's figures
  std::set<std::string> defined_sinks_;  // sinks whose sink_definition is logged; guarded by mutex_
  Status first_failure_;
};

}  // namespace sluice::pipeline
