// Streams in a pipeline: Kafka topics (librdkafka's mock cluster) decoded into a Delta ingestion
// table, filtered and trimmed, exactly once across restarts and even without a checkpoint.
#include <gtest/gtest.h>

#include <thread>
#include <simdjson.h>

#include <filesystem>
#include <map>
#include <set>

#include "sluice/connectors/register_formats.h"
#include "sluice/core/builder.h"
#include "sluice/core/compute.h"
#include "sluice/delta/writer.h"
#include "sluice/connectors/testing/kafka_fixture.h"
#include "sluice/delta/scan.h"
#include "sluice/delta/snapshot.h"
#include "sluice/pipeline/event_log.h"
#include "sluice/pipeline/ingestion_sink.h"
#include "sluice/pipeline/pipeline_runner.h"
#include "delta/spark_testing.h"
#include "pipeline/stream_testing.h"
#include "testing/temp_dir.h"

namespace sluice::pipeline {
namespace {

constexpr const char* kValueSchema =
    R"({"type":"object","properties":{"kind":{"type":"string"},"amount":{"type":"integer"},)"
    R"("card":{"type":"object","properties":{"number":{"type":"string"},"brand":{"type":"string"}}}}})";

// Message i: an order (amount i) when i % 3 != 2, else a ping; every tenth is not JSON at all.
std::vector<connectors::KafkaTestMessage> Messages(int begin, int end) {
  std::vector<connectors::KafkaTestMessage> messages;
  for (int i = begin; i < end; ++i) {
    connectors::KafkaTestMessage m;
    m.key = "k" + std::to_string(i);
    if (i % 10 == 9) {
      m.value = "not json " + std::to_string(i);
    } else {
      m.value = std::string(R"({"kind":")") + (i % 3 == 2 ? "ping" : "order") + R"(","amount":)" + std::to_string(i) +
                R"(,"card":{"number":"4111-)" + std::to_string(i) + R"(","brand":"visa"}})";
    }
    m.partition = i % 3;
    messages.push_back(std::move(m));
  }
  return messages;
}

struct IngestedRow {
  std::optional<int64_t> amount;
  std::string source;
  int32_t partition;
  int64_t offset;
};

// The ingestion table's rows by (partition, offset), with the schema of the value struct.
std::map<std::pair<int32_t, int64_t>, IngestedRow> ReadTable(const std::string& table, TypePtr* value_type) {
  std::map<std::pair<int32_t, int64_t>, IngestedRow> rows;
  testing::ForEachBatch(table, [&](const RecordBatch& b) {
    *value_type = b.schema()->field(1).type;
    ColumnPtr amount = b.ColumnAt("value.amount").value();
    for (int64_t row = 0; row < b.num_rows(); ++row) {
      IngestedRow r;
      if (amount->IsValid(row)) r.amount = amount->Value<int64_t>(row);
      r.source = std::string(b.ColumnAt("record_source").value()->View(row));
      r.partition = b.ColumnAt("kafka_partition").value()->Value<int32_t>(row);
      r.offset = b.ColumnAt("kafka_offset").value()->Value<int64_t>(row);
      EXPECT_TRUE(rows.emplace(std::make_pair(r.partition, r.offset), r).second)
          << "offset " << r.offset << " of partition " << r.partition << " ingested twice";
    }
  });
  return rows;
}

class StreamTest : public testing::KafkaTopicTest {
 protected:
  PipelineSpec Spec(const std::string& extra, const std::string& ingestion = "") {
    std::string yaml = "name: ingest\nstorage: " + dir_.path() + "/storage\nwarehouse: " + dir_.path() +
                       "/warehouse\nstreams:\n  - name: main.raw.events\n    source: {format: kafka, options: "
                       "{bootstrap_servers: \"" + bootstrap_ + "\", subscribe: " + topic_ +
                       ", starting_offsets: earliest}}\n    schema_config:\n      value: {format: json, schema: '" +
                       kValueSchema + "'}\n    ingestion_config: {table: main.raw.events" + ingestion + "}\n    trigger: available_now\n" +
                       extra;
    Result<PipelineSpec> spec = ParsePipelineSpec(yaml);
    EXPECT_TRUE(spec.ok()) << spec.status().ToString();
    return *spec;
  }

  Status Run(const PipelineSpec& spec) {
    RunOptions options;
    options.registry = &connectors::AllFormatsRegistry();
    SLUICE_ASSIGN_OR_RETURN(auto run, PipelineRun::Start(spec, options));
    return run->Wait();
  }

  std::string Table() const { return dir_.path() + "/warehouse/main/raw/events"; }

  // main.history.events: every record the stream ingested as it is, and the first ten again
  // three hours earlier (with keys of their own when `re_keyed`, as a re-export would have them).
  void WriteHistory(bool re_keyed) {
    auto ingested = delta::TableScan::Open(delta::Snapshot::Load(LocalFileSystem(), Table()).value(),
                                           {.columns = {"key", "value", "stream_record_timestamp"}})
                        .value();
    std::vector<BatchPtr> batches;
    while (BatchPtr batch = ingested->Next().value()) batches.push_back(batch);
    ASSERT_FALSE(batches.empty());
    ASSERT_GE(batches[0]->num_rows(), 10);
    BatchPtr older = Take(batches[0], std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
    FixedWidthBuilder<int64_t> shifted(DataType::Timestamp());
    BinaryBuilder keys(older->schema()->field(0).type);
    for (int64_t row = 0; row < 10; ++row) {
      shifted.Append(older->column(2)->Value<int64_t>(row) - 3 * 3600 * 1000000LL);
      keys.Append("re-export-" + std::to_string(row));
    }
    batches.push_back(RecordBatch::Make(older->schema(),
                                        {re_keyed ? keys.Finish() : older->column(0), older->column(1), shifted.Finish()},
                                        10)
                          .value());
    ASSERT_TRUE(delta::WriteTable(LocalFileSystem(), dir_.path() + "/warehouse/main/history/events", batches).ok());
  }

  // The details of every `backfill` event in the pipeline's event log.
  std::vector<std::string> BackfillEvents() const {
    std::vector<std::string> events;
    auto lines = EventLog::ReadLines(EventLog::PathFor(dir_.path() + "/storage"));
    EXPECT_TRUE(lines.ok());
    if (!lines.ok()) return events;
    for (const std::string& line : *lines) {
      if (line.find("\"event_type\":\"backfill\"") == std::string::npos) continue;
      const size_t details = line.find("\"details\":");
      EXPECT_NE(details, std::string::npos) << line;
      if (details != std::string::npos) events.push_back(line.substr(details + 10, line.rfind('}') - details - 10));
    }
    return events;
  }

  sluice::testing::TempDir dir_;
};

TEST_F(StreamTest, IngestsEveryRecordDecodedWithItsKafkaPlace) {
  ASSERT_TRUE(connectors::ProduceMessages(bootstrap_, topic_, Messages(0, 60)).ok());
  ASSERT_TRUE(Run(Spec("")).ok());

  TypePtr value_type;
  auto rows = ReadTable(Table(), &value_type);
  ASSERT_EQ(rows.size(), 60u);
  int malformed = 0;
  for (int32_t partition = 0; partition < 3; ++partition) {
    for (int64_t offset = 0; offset < 20; ++offset) {
      int i = static_cast<int>(offset * 3 + partition);  // partition p holds messages p, p+3, ...
      const IngestedRow& row = rows.at({partition, offset});
      EXPECT_EQ(row.source, "stream");
      if (i % 10 == 9) {
        EXPECT_FALSE(row.amount.has_value()) << i;
        ++malformed;
      } else {
        EXPECT_EQ(row.amount, i);
      }
    }
  }
  EXPECT_EQ(malformed, 6);
  EXPECT_EQ(value_type->ToString(), "struct<kind:string,amount:bigint,card:struct<number:string,brand:string>>");

  auto lines = EventLog::ReadLines(EventLog::PathFor(dir_.path() + "/storage"));
  ASSERT_TRUE(lines.ok());
  std::string warnings;
  for (const std::string& line : *lines) {
    if (line.find("\"event_type\":\"warning\"") != std::string::npos) warnings += line;
  }
  EXPECT_NE(warnings.find("6 undecodable key(s)/value(s) ingested as null"), std::string::npos) << warnings;
  EXPECT_NE(warnings.find("\"malformed_samples\":[\"" + topic_ + "/"), std::string::npos) << warnings;
}

// Records whose fields have another type than the schema's keep their row with those fields null,
// and the fields are counted and warned of (as undecodable records are).
TEST_F(StreamTest, FieldsOfTheWrongTypeAreCountedAndWarnedOf) {
  std::vector<connectors::KafkaTestMessage> messages = Messages(0, 3);
  for (int i = 0; i < 4; ++i) {
    connectors::KafkaTestMessage m;
    // amount a string and card a list: two fields of the wrong type per record (kind, a number
    // for a string field, is kept as its text, as Spark's JSON reader keeps it).
    m.value = R"({"kind":7,"amount":"many","card":[1,2]})";
    m.partition = i % 3;
    messages.push_back(std::move(m));
  }
  ASSERT_TRUE(connectors::ProduceMessages(bootstrap_, topic_, messages).ok());
  ASSERT_TRUE(Run(Spec("")).ok());
  TypePtr value_type;
  auto rows = ReadTable(Table(), &value_type);
  ASSERT_EQ(rows.size(), 7u);
  int nulled = 0;
  for (const auto& [place, row] : rows) nulled += !row.amount.has_value();
  EXPECT_EQ(nulled, 4);

  auto lines = EventLog::ReadLines(EventLog::PathFor(dir_.path() + "/storage"));
  ASSERT_TRUE(lines.ok());
  int64_t mismatched = 0;
  std::string warnings;
  simdjson::dom::parser parser;
  for (const std::string& line : *lines) {
    simdjson::dom::element event;
    ASSERT_EQ(parser.parse(line).get(event), simdjson::SUCCESS);
    int64_t fields = 0;
    if (event["event_type"].get_string().value() == "flow_progress" &&
        event["details"]["flow_progress"]["ingestion"]["mismatched_fields"].get(fields) == simdjson::SUCCESS) {
      mismatched += fields;
    }
    if (event["event_type"].get_string().value() == "warning") warnings += line;
  }
  EXPECT_EQ(mismatched, 8);
  EXPECT_NE(warnings.find("field(s) of another type than the schema's ingested as null"), std::string::npos)
      << warnings;
}

// A stream's figures after its first batch: the records it read, a rate, and how many records the
// topic holds beyond what it read; none behind once it has read everything.
TEST_F(StreamTest, FiguresSayHowManyRecordsTheStreamIsBehind) {
  ASSERT_TRUE(connectors::ProduceMessages(bootstrap_, topic_, Messages(0, 60)).ok());
  PipelineSpec spec = Spec("");
  spec.streams[0].source.options["max_offsets_per_trigger"] = "24";
  spec.streams[0].trigger = "processing_time";
  spec.streams[0].trigger_interval = "1 hour";  // one batch, then a long wait
  RunOptions options;
  options.registry = &connectors::AllFormatsRegistry();
  auto run = PipelineRun::Start(spec, options);
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  FlowFigures figures;
  for (int i = 0; i < 300 && figures.batches == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    figures = (*run)->flows().at(0);
  }
  const std::string metrics = (*run)->PrometheusText();
  (*run)->Stop();
  ASSERT_TRUE((*run)->Wait().ok());
  run->reset();  // lets go of the checkpoint
  EXPECT_NE(metrics.find("sluice_flow_records_behind{pipeline=\"ingest\",flow=\"main.raw.events\"} 36\n"),
            std::string::npos)
      << metrics;
  ASSERT_EQ(figures.batches, 1);
  EXPECT_EQ(figures.input_rows, 24);
  EXPECT_EQ(figures.records_behind, 36);
  EXPECT_GT(figures.input_rows_per_second, 0) << "the first batch has a rate";
  EXPECT_GT(figures.last_batch_micros, 0);

  // The same stream run to the end of the topic: nothing behind.
  spec.streams[0].trigger = "available_now";
  spec.streams[0].trigger_interval = "";
  auto caught_up = PipelineRun::Start(spec, options);
  ASSERT_TRUE(caught_up.ok()) << caught_up.status().ToString();
  Status ended = (*caught_up)->Wait();
  ASSERT_TRUE(ended.ok()) << ended.ToString();
  EXPECT_EQ((*caught_up)->flows().at(0).input_rows, 36);
  EXPECT_EQ((*caught_up)->flows().at(0).records_behind, 0);
}

TEST_F(StreamTest, FiltersRecordTypesAndDropsExcludedColumns) {
  ASSERT_TRUE(connectors::ProduceMessages(bootstrap_, topic_, Messages(0, 30)).ok());
  ASSERT_TRUE(Run(Spec("    record_type_filter: value.kind = 'order'\n    excluded_columns: [value.card.number]\n")).ok());
  TypePtr value_type;
  auto rows = ReadTable(Table(), &value_type);
  std::set<int64_t> amounts;
  for (const auto& [place, row] : rows) amounts.insert(row.amount.value_or(-1));
  std::set<int64_t> expected;
  for (int i = 0; i < 30; ++i) {
    if (i % 3 != 2 && i % 10 != 9) expected.insert(i);
  }
  EXPECT_EQ(amounts, expected);
  EXPECT_EQ(value_type->ToString(), "struct<kind:string,amount:bigint,card:struct<brand:string>>");

  // The figures add up: every record read is in, what the filter dropped is counted, and out is
  // what the table received.
  auto lines = EventLog::ReadLines(EventLog::PathFor(dir_.path() + "/storage"));
  ASSERT_TRUE(lines.ok());
  int64_t in = 0, out = 0, filtered = 0;
  simdjson::dom::parser parser;
  for (const std::string& line : *lines) {
    simdjson::dom::element event;
    ASSERT_EQ(parser.parse(line).get(event), simdjson::SUCCESS);
    simdjson::dom::element progress;
    if (event["details"]["flow_progress"]["metrics"].get(progress) != simdjson::SUCCESS) continue;
    in += progress["num_input_rows"].get_int64().value();
    out += progress["num_output_rows"].get_int64().value();
    filtered += event["details"]["flow_progress"]["ingestion"]["filtered_out"].get_int64().value();
  }
  EXPECT_EQ(in, 30);
  EXPECT_EQ(out, static_cast<int64_t>(rows.size()));
  EXPECT_EQ(in - filtered, out);

  // Every partition's txn is its last offset read, records the filter dropped included: partition
  // 2 holds only pings, none of which reached the table, and is recorded all the same.
  auto snapshot = delta::Snapshot::Load(LocalFileSystem(), Table());
  ASSERT_TRUE(snapshot.ok()) << snapshot.status().ToString();
  for (int32_t partition = 0; partition < 3; ++partition) {
    EXPECT_EQ((*snapshot)->TransactionVersion(connectors::PartitionAppId("main.raw.events", topic_, partition)), 9)
        << partition;
  }
  for (const auto& [place, row] : rows) EXPECT_NE(place.first, 2) << "a ping of partition 2 reached the table";
}

// Spark with Delta Lake reads the ingestion table as sluice does: the same rows, keys, decoded and
// trimmed values, Kafka places and record times, over two runs (two commits).
TEST_F(StreamTest, SparkReadsTheIngestionTableAsSluiceWroteIt) {
  const PipelineSpec spec = Spec("    record_type_filter: value.kind = 'order' OR value IS NULL\n"
                                 "    excluded_columns: [value.card.number]\n");
  ASSERT_TRUE(connectors::ProduceMessages(bootstrap_, topic_, Messages(0, 30)).ok());
  ASSERT_TRUE(Run(spec).ok());
  ASSERT_TRUE(connectors::ProduceMessages(bootstrap_, topic_, Messages(30, 45)).ok());
  ASSERT_TRUE(Run(spec).ok());

  std::vector<std::string> sluice_rows;
  testing::ForEachBatch(Table(), [&](const RecordBatch& b) {
    const char* kColumns[] = {"kafka_partition", "kafka_offset", "key", "value.kind", "value.amount",
                              "value.card.brand", "record_source"};
    for (int64_t row = 0; row < b.num_rows(); ++row) {
      std::string line = "[";
      for (const char* column : kColumns) {
        AppendValueJson(*b.ColumnAt(column).value(), row, &line);
        line += ",";
      }
      line += std::to_string(b.ColumnAt("stream_record_timestamp").value()->Value<int64_t>(row)) + "]";
      sluice_rows.push_back(line);
    }
  });
  std::sort(sluice_rows.begin(), sluice_rows.end());
  // 45 records: the pings (a third) filtered out, the malformed ones (every tenth) kept as nulls.
  size_t kept = 0;
  for (int i = 0; i < 45; ++i) kept += i % 10 == 9 || i % 3 != 2 ? 1 : 0;
  ASSERT_EQ(sluice_rows.size(), kept);
  const std::string query = "sql:SELECT kafka_partition, kafka_offset, key, value.kind, value.amount, value.card.brand, "
                            "record_source, unix_micros(stream_record_timestamp) FROM delta.`" + Table() + "`";
  std::map<std::string, std::vector<std::string>> spark = delta::testing::RunSpark({query});
  EXPECT_EQ(spark[query], sluice_rows);
}

TEST_F(StreamTest, ResumesExactlyOnceFromTheTableEvenWithoutItsCheckpoint) {
  PipelineSpec spec = Spec("");
  ASSERT_TRUE(connectors::ProduceMessages(bootstrap_, topic_, Messages(0, 30)).ok());
  ASSERT_TRUE(Run(spec).ok());
  ASSERT_TRUE(connectors::ProduceMessages(bootstrap_, topic_, Messages(30, 45)).ok());
  ASSERT_TRUE(Run(spec).ok());

  auto resume = connectors::ResumeOffsets(LocalFileSystem(), Table(), "main.raw.events");
  ASSERT_TRUE(resume.ok());
  EXPECT_EQ(resume->value_or(""), "{\"" + topic_ + "\":{\"0\":15,\"1\":15,\"2\":15}}");

  // The checkpoint is lost; the table's txns still say where ingestion stands.
  std::filesystem::remove_all(dir_.path() + "/storage/checkpoints");
  ASSERT_TRUE(connectors::ProduceMessages(bootstrap_, topic_, Messages(45, 60)).ok());
  ASSERT_TRUE(Run(spec).ok());
  TypePtr value_type;
  EXPECT_EQ(ReadTable(Table(), &value_type).size(), 60u);
}

// A key without a schema is a string column; each invalid byte becomes U+FFFD and the
// record counts as malformed. `format: binary` keeps the raw bytes.
TEST_F(StreamTest, AKeyWithoutASchemaIsAStringAndFormatBinaryKeepsTheBytes) {
  std::vector<connectors::KafkaTestMessage> messages = Messages(0, 3);
  messages[1].key = std::string("bad\xff\xfe", 5);
  messages[2].key = std::string("caf\xc3\xa9");  // café, valid
  ASSERT_TRUE(connectors::ProduceMessages(bootstrap_, topic_, messages).ok());
  ASSERT_TRUE(Run(Spec("")).ok());
  std::map<int64_t, std::string> keys;  // by partition: one record each
  testing::ForEachBatch(Table(), [&](const RecordBatch& batch) {
    ColumnPtr key = batch.ColumnAt("key").value();
    EXPECT_EQ(key->type->id(), TypeId::kString);
    ColumnPtr partition = batch.ColumnAt("kafka_partition").value();
    for (int64_t row = 0; row < batch.num_rows(); ++row) {
      keys[partition->Value<int32_t>(row)] = std::string(key->View(row));
    }
  });
  EXPECT_EQ(keys, (std::map<int64_t, std::string>{{0, "k0"}, {1, "bad\xef\xbf\xbd\xef\xbf\xbd"}, {2, "caf\xc3\xa9"}}));
  bool warned = false;
  for (const std::string& line : EventLog::ReadLines(EventLog::PathFor(dir_.path() + "/storage")).value()) {
    warned |= line.find("\"malformed_keys\":1") != std::string::npos;
  }
  EXPECT_TRUE(warned) << "the record with invalid bytes is counted as malformed";

  std::filesystem::remove_all(dir_.path() + "/warehouse");
  std::filesystem::remove_all(dir_.path() + "/storage");
  PipelineSpec binary = Spec("");
  binary.streams[0].key_schema.emplace().format = formats::SchemaFormat::kBinary;
  ASSERT_TRUE(Run(binary).ok());
  keys.clear();
  testing::ForEachBatch(Table(), [&](const RecordBatch& batch) {
    ColumnPtr key = batch.ColumnAt("key").value();
    EXPECT_EQ(key->type->id(), TypeId::kBinary);
    ColumnPtr partition = batch.ColumnAt("kafka_partition").value();
    for (int64_t row = 0; row < batch.num_rows(); ++row) keys[partition->Value<int32_t>(row)] = std::string(key->View(row));
  });
  EXPECT_EQ(keys, (std::map<int64_t, std::string>{{0, "k0"}, {1, std::string("bad\xff\xfe", 5)}, {2, "caf\xc3\xa9"}}));
}

// Rows of the table by record_source, and how many distinct (key, timestamp) pairs they hold.
std::map<std::string, int64_t> CountBySource(const std::string& table, int64_t* distinct) {
  std::map<std::string, int64_t> counts;
  std::set<std::string> seen;
  testing::ForEachBatch(table, [&](const RecordBatch& batch) {
    ColumnPtr key = batch.ColumnAt("key").value();
    ColumnPtr timestamp = batch.ColumnAt("stream_record_timestamp").value();
    ColumnPtr source = batch.ColumnAt("record_source").value();
    for (int64_t row = 0; row < batch.num_rows(); ++row) {
      ++counts[std::string(source->View(row))];
      seen.insert(std::string(key->View(row)) + "@" + std::to_string(timestamp->Value<int64_t>(row)));
    }
  });
  *distinct = static_cast<int64_t>(seen.size());
  return counts;
}

TEST_F(StreamTest, ABackfillOverlappingIngestedRecordsIsMergedOnceWithoutDuplicates) {
  ASSERT_TRUE(connectors::ProduceMessages(bootstrap_, topic_, Messages(0, 30)).ok());
  ASSERT_TRUE(Run(Spec("")).ok());

  // The history holds the 30 records the stream ingested (same key, value and timestamp) and 10
  // older ones, three hours earlier.
  WriteHistory(/*re_keyed=*/false);

  // Not due yet: the history does not reach an hour past the first ingested record, and two
  // days have not passed.
  const std::string backfill = ", backfill_source: main.history.events";
  ASSERT_TRUE(Run(Spec("", backfill)).ok());
  int64_t distinct = 0;
  EXPECT_EQ(CountBySource(Table(), &distinct), (std::map<std::string, int64_t>{{"stream", 30}}));
  EXPECT_EQ(BackfillEvents(), std::vector<std::string>{});

  ASSERT_TRUE(Run(Spec("", backfill + ", backfill_overlap: 0s")).ok());
  EXPECT_EQ(CountBySource(Table(), &distinct), (std::map<std::string, int64_t>{{"backfill", 10}, {"stream", 30}}));
  EXPECT_EQ(distinct, 40) << "no record is in the table twice";
  EXPECT_EQ(BackfillEvents(), std::vector<std::string>{"{\"backfill\":{\"inserted_rows\":10}}"});

  // It ran once: neither a new run nor new records merge it again.
  ASSERT_TRUE(connectors::ProduceMessages(bootstrap_, topic_, Messages(30, 36)).ok());
  ASSERT_TRUE(Run(Spec("", backfill + ", backfill_overlap: 0s")).ok());
  EXPECT_EQ(CountBySource(Table(), &distinct), (std::map<std::string, int64_t>{{"backfill", 10}, {"stream", 36}}));
  EXPECT_EQ(BackfillEvents().size(), 1u);
}

// Deduplication columns are ingestion table columns or dot paths into the decoded key or value
// (`value.amount`, the record id backfill and live data share), checked against the schema; an
// excluded column cannot be one.
TEST_F(StreamTest, DeduplicationColumnsAreTableColumnsOrPathsIntoTheDecodedValue) {
  const std::string backfill = ", backfill_source: main.history.events, deduplication_columns: ";
  for (const std::string columns : {"[value.amount]", "[VALUE.Amount, key]", "[value.card.brand, kafka_offset]"}) {
    SCOPED_TRACE(columns);
    std::vector<Status> problems = ValidatePipeline(Spec("", backfill + columns), connectors::AllFormatsRegistry());
    EXPECT_TRUE(problems.empty()) << problems[0].ToString();
  }
  struct Refused {
    std::string columns, excluded, message;
  };
  for (const Refused& c : std::vector<Refused>{
           {"[value.nope]", "", "not in the stream's decoded schema"},
           {"[value.amount.cents]", "", "not in the stream's decoded schema"},
           {"[key.id]", "", "decoded key or value"},
           {"[kafka_offset.x]", "", "decoded key or value"},
           {"[nope.amount]", "", "not a column of the ingestion table"},
           {"[value.card.number]", "[value.card.number]", "excluded"},
           {"[value.card.brand]", "[value.card]", "excluded"},
       }) {
    SCOPED_TRACE(c.columns);
    std::string extra = c.excluded.empty() ? "" : "    excluded_columns: " + c.excluded + "\n";
    std::vector<Status> problems =
        ValidatePipeline(Spec(extra, backfill + c.columns), connectors::AllFormatsRegistry());
    ASSERT_EQ(problems.size(), 1u);
    EXPECT_EQ(problems[0].error_class(), "UNRESOLVED_COLUMN") << problems[0].ToString();
    EXPECT_NE(problems[0].message().find(c.message), std::string::npos) << problems[0].ToString();
  }
  std::vector<Status> problems = ValidatePipeline(Spec("", ", deduplication_columns: [key]"), connectors::AllFormatsRegistry());
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].message().find("give ingestion_config.backfill_source too"), std::string::npos)
      << problems[0].ToString();
}

// The history holds ten ingested records again three hours earlier (their keys and timestamps
// differ from the live ones as a re-export's would, their ids do not): deduplicated by the value's
// amount, the backfill inserts none of them; by the default columns it would insert all ten.
TEST_F(StreamTest, ABackfillDeduplicatedByAValueFieldSkipsRecordsTheStreamHas) {
  ASSERT_TRUE(connectors::ProduceMessages(bootstrap_, topic_, Messages(0, 30)).ok());
  ASSERT_TRUE(Run(Spec("")).ok());
  WriteHistory(/*re_keyed=*/true);

  ASSERT_TRUE(Run(Spec("", ", backfill_source: main.history.events, backfill_overlap: 0s, "
                           "deduplication_columns: [value.amount]"))
                  .ok());
  int64_t distinct = 0;
  EXPECT_EQ(CountBySource(Table(), &distinct), (std::map<std::string, int64_t>{{"stream", 30}}));
  EXPECT_EQ(BackfillEvents(), std::vector<std::string>{"{\"backfill\":{\"inserted_rows\":0}}"});
}

TEST_F(StreamTest, ValidationNamesBadSchemasFiltersAndExclusions) {
  PipelineSpec spec = Spec("    record_type_filter: value.kind =\n    excluded_columns: [value.nope]\n");
  spec.streams[0].value_schema->schema = R"({"type":"object","properties":{"a":{"allOf":[]}}})";
  std::vector<Status> problems = ValidatePipeline(spec, connectors::AllFormatsRegistry());
  ASSERT_EQ(problems.size(), 1u);  // the schema fails first; filter and exclusions are checked after it
  EXPECT_EQ(problems[0].error_class(), "JSON_SCHEMA_INVALID") << problems[0].ToString();

  spec = Spec("    excluded_columns: [value.nope]\n");
  problems = ValidatePipeline(spec, connectors::AllFormatsRegistry());
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].error_class(), "UNRESOLVED_COLUMN") << problems[0].ToString();

  spec = Spec("    record_type_filter: value.kind =\n");
  problems = ValidatePipeline(spec, connectors::AllFormatsRegistry());
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].error_class(), "PARSE_SYNTAX_ERROR") << problems[0].ToString();
}

// A pipeline-file stream whose inline Avro schema is edited between runs (amount widened from int
// to long, the trailing note dropped): records producers still write with the old schema decode
// as well as new ones, because each start records the schemas the stream had
// (stream_schema_history.h). Without the record, the old records' leftover bytes made them
// malformed (null rows).
TEST_F(StreamTest, AnAvroSchemaEditedInThePipelineFileKeepsDecodingOldRecords) {
  auto spec = [&](const std::string& fields) {
    std::string yaml = "name: ingest\nstorage: " + dir_.path() + "/storage\nwarehouse: " + dir_.path() +
                       "/warehouse\nstreams:\n  - name: main.raw.events\n    source: {format: kafka, options: "
                       "{bootstrap_servers: \"" + bootstrap_ + "\", subscribe: " + topic_ +
                       ", starting_offsets: earliest}}\n    schema_config:\n      value: {format: avro, schema: "
                       "'{\"type\":\"record\",\"name\":\"Event\",\"fields\":[" + fields + "]}'}\n"
                       "    ingestion_config: {table: main.raw.events}\n    trigger: available_now\n";
    Result<PipelineSpec> parsed = ParsePipelineSpec(yaml);
    EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
    return *parsed;
  };
  auto records = [](int begin, int end, bool old_schema) {
    std::vector<connectors::KafkaTestMessage> out;
    for (int i = begin; i < end; ++i) {
      connectors::KafkaTestMessage m;
      m.value = testing::AvroLong(i - 20);
      if (old_schema) *m.value += testing::AvroLong(2) + "n" + std::to_string(i % 10);
      m.partition = i % 3;
      out.push_back(std::move(m));
    }
    return out;
  };
  const PipelineSpec before = spec(R"({"name":"amount","type":"int"},{"name":"note","type":"string"})");
  ASSERT_TRUE(connectors::ProduceMessages(bootstrap_, topic_, records(0, 30, true)).ok());
  ASSERT_TRUE(Run(before).ok());
  const PipelineSpec after = spec(R"({"name":"amount","type":"long"})");
  ASSERT_TRUE(connectors::ProduceMessages(bootstrap_, topic_, records(30, 45, true)).ok());
  ASSERT_TRUE(connectors::ProduceMessages(bootstrap_, topic_, records(45, 60, false)).ok());
  Status ran = Run(after);
  ASSERT_TRUE(ran.ok()) << ran.ToString();

  std::multiset<std::string> amounts;
  testing::ForEachBatch(Table(), [&](const RecordBatch& b) {
    ColumnPtr amount = b.ColumnAt("value.amount").value();
    for (int64_t row = 0; row < b.num_rows(); ++row) {
      amounts.insert(amount->IsValid(row) ? FormatValue(*amount, row) : "null");
    }
  });
  std::multiset<std::string> expected;
  for (int i = 0; i < 60; ++i) expected.insert(std::to_string(i - 20));
  EXPECT_EQ(amounts, expected) << "no record null (malformed), lost or twice";
  // The first start recorded the old schema, the second the new one.
  EXPECT_TRUE(std::filesystem::exists(dir_.path() + "/storage/schemas/streams/main.raw.events/value/00000000.avsc"));
  EXPECT_TRUE(std::filesystem::exists(dir_.path() + "/storage/schemas/streams/main.raw.events/value/00000001.avsc"));

  // A schema the recorded ones cannot be read into stops the start, naming the stream.
  Result<std::unique_ptr<PipelineRun>> refused = [&] {
    RunOptions options;
    options.registry = &connectors::AllFormatsRegistry();
    return PipelineRun::Start(spec(R"({"name":"amount","type":"string"})"), options);
  }();
  EXPECT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("main.raw.events"), std::string_view::npos) << refused.status().ToString();
}

}  // namespace
}  // namespace sluice::pipeline
