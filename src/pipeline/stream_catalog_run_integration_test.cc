// A catalog stream changed while it runs, as `sluice stream run NAME` follows it: an update
// restarts ingestion with the new definition (rows written before keep their shape, none lost or
// twice), a deletion stops it before its table goes.
#include <gtest/gtest.h>

#include <filesystem>
#include <future>
#include <map>
#include <set>
#include <thread>

#include "sluice/connectors/register_formats.h"
#include "sluice/connectors/testing/kafka_fixture.h"
#include "sluice/core/compute.h"
#include "sluice/core/error_classes.h"
#include "sluice/delta/scan.h"
#include "sluice/delta/snapshot.h"
#include "sluice/pipeline/pipeline_runner.h"
#include "sluice/pipeline/stream_catalog.h"
#include "pipeline/stream_testing.h"
#include "testing/temp_dir.h"

namespace sluice::pipeline {
namespace {

using std::chrono::milliseconds;

constexpr const char* kName = "main.raw.events";

// The value's `amount` and `note` of every ingested record, by (partition, offset); "-" for null,
// "absent" when the table has no `note` column.
using Ingested = std::map<std::pair<int32_t, int64_t>, std::string>;

Ingested ReadTable(const std::string& table) {
  Ingested rows;
  if (!std::filesystem::exists(table + "/_delta_log/00000000000000000000.json")) return rows;
  testing::ForEachBatch(table, [&](const RecordBatch& b) {
    ColumnPtr amount = b.ColumnAt("value.amount").value();
    Result<ColumnPtr> note = b.ColumnAt("value.note");
    for (int64_t row = 0; row < b.num_rows(); ++row) {
      std::string text = std::to_string(amount->Value<int64_t>(row)) + " ";
      if (!note.ok()) {
        text += "absent";
      } else {
        text += (*note)->IsValid(row) ? std::string((*note)->View(row)) : "-";
      }
      auto place = std::make_pair(b.ColumnAt("kafka_partition").value()->Value<int32_t>(row),
                                  b.ColumnAt("kafka_offset").value()->Value<int64_t>(row));
      EXPECT_TRUE(rows.emplace(place, text).second) << "offset " << place.second << " of partition " << place.first
                                                    << " ingested twice";
    }
  });
  return rows;
}

// Records i in [begin, end) to partition i % 3, with a note from `with_note` on.
std::vector<connectors::KafkaTestMessage> Records(int begin, int end, bool with_note) {
  std::vector<connectors::KafkaTestMessage> records;
  for (int i = begin; i < end; ++i) {
    connectors::KafkaTestMessage m;
    m.value = "{\"amount\":" + std::to_string(i) + (with_note ? ",\"note\":\"n" + std::to_string(i) + "\"" : "") + "}";
    m.partition = i % 3;
    records.push_back(std::move(m));
  }
  return records;
}

class StreamCatalogRunTest : public testing::KafkaTopicTest {
 protected:
  std::string Definition(bool with_note) const {
    const std::string properties = std::string(R"("amount":{"type":"integer"})") +
                                   (with_note ? R"(,"note":{"type":["string","null"]})" : "");
    return std::string("name: ") + kName + "\nsource: {format: kafka, options: {bootstrap_servers: \"" + bootstrap_ +
           "\", subscribe: " + topic_ + ", starting_offsets: earliest}}\nschema_config:\n  value: {format: json, "
           "schema: '{\"type\":\"object\",\"properties\":{" + properties + "}}'}\n"
           "ingestion_config: {table: main.raw.events}\n"
           "trigger: {kind: processing_time, interval: 100 milliseconds}\n";
  }

  // Starts the stream's run as it is in the catalog now.
  std::unique_ptr<PipelineRun> StartRun() {
    Result<StoredStream> stream = catalog_.Get(kName);
    EXPECT_TRUE(stream.ok()) << stream.status().ToString();
    if (!stream.ok()) return nullptr;
    definition_ = stream->definition;
    RunOptions options;
    options.registry = &connectors::AllFormatsRegistry();
    auto run = PipelineRun::Start(catalog_.PipelineOf(stream->spec), options);
    EXPECT_TRUE(run.ok()) << run.status().ToString();
    return run.ok() ? std::move(run).value() : nullptr;
  }

  // What `sluice stream run` looks for every half second: the change since the run started.
  StreamCatalog::Change WaitForChange() {
    for (int i = 0; i < 100; ++i) {
      Result<StreamCatalog::Change> change = catalog_.ChangeSince(kName, definition_);
      EXPECT_TRUE(change.ok()) << change.status().ToString();
      if (!change.ok() || *change != StreamCatalog::Change::kNone) return change.ok() ? *change : StreamCatalog::Change::kNone;
      std::this_thread::sleep_for(milliseconds(50));
    }
    return StreamCatalog::Change::kNone;
  }

  Ingested WaitForRows(size_t count) {
    Ingested rows;
    for (int i = 0; i < 300 && rows.size() < count; ++i) {
      std::this_thread::sleep_for(milliseconds(50));
      rows = ReadTable(Table());
    }
    return rows;
  }

  std::string Warehouse() const { return dir_.Join("warehouse"); }
  std::string Table() const { return Warehouse() + "/main/raw/events"; }

  sluice::testing::TempDir dir_;
  StreamCatalog catalog_{LocalFileSystem(), dir_.Join("warehouse"), &connectors::AllFormatsRegistry()};
  std::string definition_;
};

TEST_F(StreamCatalogRunTest, AnUpdateWhileItRunsRestartsIngestionWithTheNewDefinition) {
  ASSERT_TRUE(catalog_.Create(Definition(false)).ok());
  auto run = StartRun();
  ASSERT_NE(run, nullptr);
  ASSERT_TRUE(connectors::ProduceMessages(bootstrap_, topic_, Records(0, 30, false)).ok());
  ASSERT_EQ(WaitForRows(30).size(), 30u);
  EXPECT_EQ(catalog_.ChangeSince(kName, definition_).value(), StreamCatalog::Change::kNone);

  // The update is checked against the table the run is writing, and the run sees it.
  Result<StreamSpec> updated = catalog_.Update(Definition(true));
  ASSERT_TRUE(updated.ok()) << updated.status().ToString();
  ASSERT_EQ(WaitForChange(), StreamCatalog::Change::kUpdated);
  run->Stop();
  ASSERT_TRUE(run->Wait().ok());
  run.reset();
  run = StartRun();
  ASSERT_NE(run, nullptr);
  ASSERT_TRUE(connectors::ProduceMessages(bootstrap_, topic_, Records(30, 60, true)).ok());
  Ingested rows = WaitForRows(60);
  run->Stop();
  ASSERT_TRUE(run->Wait().ok());

  Ingested expected;
  for (int i = 0; i < 60; ++i) {
    expected[{i % 3, i / 3}] = std::to_string(i) + " " + (i < 30 ? "-" : "n" + std::to_string(i));
  }
  EXPECT_EQ(rows, expected) << "rows before the update keep their shape (no note), later ones have it";
}

// An inline Avro stream updated to widen `amount` (int -> long) and drop its trailing `note`:
// rows written before read widened, and records producers still write with the old schema decode
// as well as new ones; none is malformed, lost or written twice.
TEST_F(StreamCatalogRunTest, AnAvroUpdateThatWidensAndDropsATrailingFieldKeepsEveryRecord) {
  auto definition = [&](const std::string& fields) {
    return std::string("name: ") + kName + "\nsource: {format: kafka, options: {bootstrap_servers: \"" + bootstrap_ +
           "\", subscribe: " + topic_ + ", starting_offsets: earliest}}\nschema_config:\n  value: {format: avro, "
           "schema: '{\"type\":\"record\",\"name\":\"Event\",\"fields\":[" + fields + "]}'}\n"
           "ingestion_config: {table: main.raw.events}\n"
           "trigger: {kind: processing_time, interval: 100 milliseconds}\n";
  };
  auto records = [](int begin, int end, bool old_schema) {
    std::vector<connectors::KafkaTestMessage> out;
    for (int i = begin; i < end; ++i) {
      connectors::KafkaTestMessage m;
      std::string datum = testing::AvroLong(i - 20);  // some negative
      if (old_schema) datum += testing::AvroLong(2) + "n" + std::to_string(i % 10);
      m.value = std::move(datum);
      m.partition = i % 3;
      out.push_back(std::move(m));
    }
    return out;
  };
  auto amounts = [&] {
    std::multiset<std::string> values;
    if (!std::filesystem::exists(Table() + "/_delta_log/00000000000000000000.json")) return values;
    testing::ForEachBatch(Table(), [&](const RecordBatch& b) {
      ColumnPtr amount = b.ColumnAt("value.amount").value();
      for (int64_t row = 0; row < b.num_rows(); ++row) values.insert(FormatValue(*amount, row));
    });
    return values;
  };
  auto wait_for = [&](size_t count) {
    for (int i = 0; i < 300 && amounts().size() < count; ++i) std::this_thread::sleep_for(milliseconds(50));
    return amounts();
  };
  ASSERT_TRUE(catalog_.Create(definition(R"({"name":"amount","type":"int"},{"name":"note","type":"string"})")).ok());
  auto run = StartRun();
  ASSERT_NE(run, nullptr);
  ASSERT_TRUE(connectors::ProduceMessages(bootstrap_, topic_, records(0, 30, true)).ok());
  ASSERT_EQ(wait_for(30).size(), 30u);
  run->Stop();
  ASSERT_TRUE(run->Wait().ok());
  run.reset();

  Result<StreamSpec> updated = catalog_.Update(definition(R"({"name":"amount","type":"long"})"));
  ASSERT_TRUE(updated.ok()) << updated.status().ToString();
  run = StartRun();
  ASSERT_NE(run, nullptr);
  ASSERT_TRUE(connectors::ProduceMessages(bootstrap_, topic_, records(30, 45, true)).ok());
  ASSERT_TRUE(connectors::ProduceMessages(bootstrap_, topic_, records(45, 60, false)).ok());
  std::multiset<std::string> got = wait_for(60);
  run->Stop();
  ASSERT_TRUE(run->Wait().ok());

  std::multiset<std::string> expected;
  for (int i = 0; i < 60; ++i) expected.insert(std::to_string(i - 20));
  EXPECT_EQ(got, expected) << "no record null (malformed), lost or twice";
  auto snapshot = delta::Snapshot::Load(LocalFileSystem(), Table());
  ASSERT_TRUE(snapshot.ok()) << snapshot.status().ToString();
  EXPECT_EQ((*snapshot)->schema()->ToString().find("amount:bigint") != std::string::npos, true)
      << (*snapshot)->schema()->ToString();
  const auto& features = (*snapshot)->protocol().reader_features;
  ASSERT_TRUE(features.has_value());
  EXPECT_NE(std::find(features->begin(), features->end(), "typeWidening"), features->end());
}

TEST_F(StreamCatalogRunTest, ADeletionStopsTheRunningStreamBeforeItsTableGoes) {
  ASSERT_TRUE(catalog_.Create(Definition(false)).ok());
  auto run = StartRun();
  ASSERT_NE(run, nullptr);
  ASSERT_TRUE(connectors::ProduceMessages(bootstrap_, topic_, Records(0, 30, false)).ok());
  ASSERT_EQ(WaitForRows(30).size(), 30u);

  // Delete waits while the run holds the stream's checkpoint; the run sees its definition gone,
  // stops after its batch in progress, and only then does the table go.
  std::future<Status> deleted = std::async(std::launch::async, [&] { return catalog_.Delete(kName); });
  ASSERT_EQ(WaitForChange(), StreamCatalog::Change::kDeleted);
  EXPECT_EQ(deleted.wait_for(milliseconds(300)), std::future_status::timeout) << "Delete did not wait for the run";
  EXPECT_TRUE(std::filesystem::exists(Table()));
  ASSERT_TRUE(connectors::ProduceMessages(bootstrap_, topic_, Records(30, 40, false)).ok());
  run->Stop();
  ASSERT_TRUE(run->Wait().ok());
  run.reset();
  Status status = deleted.get();
  ASSERT_TRUE(status.ok()) << status.ToString();
  EXPECT_FALSE(std::filesystem::exists(Table()));
  EXPECT_FALSE(std::filesystem::exists(Warehouse() + "/_sluice/streams/" + kName));
  EXPECT_EQ(catalog_.Get(kName).status().error_class(), errors::kStreamNotFound);
  EXPECT_TRUE(catalog_.List()->empty());
  // The name is free again; the new stream starts with a new table and checkpoint.
  ASSERT_TRUE(catalog_.Create(Definition(false)).ok());
  run = StartRun();
  ASSERT_NE(run, nullptr);
  EXPECT_EQ(WaitForRows(40).size(), 40u);
  run->Stop();
  EXPECT_TRUE(run->Wait().ok());
}

TEST_F(StreamCatalogRunTest, ADeletionARunDoesNotLetGoOfIsRefusedThenFinishedByTheNextDelete) {
  ASSERT_TRUE(catalog_.Create(Definition(false)).ok());
  auto run = StartRun();
  ASSERT_NE(run, nullptr);
  ASSERT_TRUE(connectors::ProduceMessages(bootstrap_, topic_, Records(0, 9, false)).ok());
  ASSERT_EQ(WaitForRows(9).size(), 9u);

  // A run that does not follow its definition keeps the checkpoint.
  Status refused = catalog_.Delete(kName, milliseconds(300));
  EXPECT_EQ(refused.error_class(), errors::kConcurrentQuery) << refused.ToString();
  EXPECT_NE(refused.message().find("sluice stream delete"), std::string::npos) << refused.ToString();
  EXPECT_TRUE(std::filesystem::exists(Table())) << "nothing is deleted while the run goes on";
  EXPECT_EQ(catalog_.Get(kName).status().error_class(), errors::kStreamNotFound);
  Result<StreamSpec> again = catalog_.Create(Definition(false));
  EXPECT_EQ(again.status().error_class(), errors::kStreamAlreadyExists) << again.status().ToString();
  EXPECT_NE(again.status().message().find("still being deleted"), std::string::npos) << again.status().ToString();

  run->Stop();
  ASSERT_TRUE(run->Wait().ok());
  run.reset();
  Status finished = catalog_.Delete(kName);
  ASSERT_TRUE(finished.ok()) << finished.ToString();
  EXPECT_FALSE(std::filesystem::exists(Table()));
  EXPECT_TRUE(catalog_.Create(Definition(false)).ok());
}

}  // namespace
}  // namespace sluice::pipeline
