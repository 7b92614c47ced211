#include "sluice/delta/actions.h"

#include <gtest/gtest.h>

#include "sluice/core/error_classes.h"
#include "sluice/core/types.h"

namespace sluice::delta {
namespace {

std::vector<Action> ParseOrDie(std::string_view text) {
  std::vector<Action> actions;
  Status status = ParseActions(text, "test.json", &actions);
  EXPECT_TRUE(status.ok()) << status.ToString();
  return actions;
}

TEST(ActionsTest, AddIsWrittenWithTheProtocolFieldNamesInOrder) {
  AddFile add;
  add.path = "date=2017-12-10/part-0.parquet";
  add.partition_values = {{"date", "2017-12-10"}, {"region", std::nullopt}};
  add.size = 841454;
  add.modification_time = 1512909768000;
  add.data_change = true;
  add.stats = R"({"numRecords":1})";
  EXPECT_EQ(SerializeAction(add),
            R"({"add":{"path":"date=2017-12-10/part-0.parquet","partitionValues":{"date":"2017-12-10","region":null},)"
            R"("size":841454,"modificationTime":1512909768000,"dataChange":true,"stats":"{\"numRecords\":1}"}})");
}

TEST(ActionsTest, ProtocolWithFeaturesListsBoth) {
  Protocol protocol{3, 7, std::vector<std::string>{"timestampNtz"}, std::vector<std::string>{"timestampNtz"}};
  EXPECT_EQ(SerializeAction(protocol),
            R"({"protocol":{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":["timestampNtz"],)"
            R"("writerFeatures":["timestampNtz"]}})");
  EXPECT_EQ(SerializeAction(Protocol{}), R"({"protocol":{"minReaderVersion":1,"minWriterVersion":2}})");
}

TEST(ActionsTest, EveryActionRoundTrips) {
  CommitInfo info;
  info.timestamp = 1700000000000;
  info.operation = "WRITE";
  info.operation_parameters = {{"mode", "Append"}, {"partitionBy", "[]"}};
  info.operation_metrics = StringMap{{"numFiles", "1"}};
  info.read_version = 4;
  info.is_blind_append = true;
  info.engine_info = "sluice/0.1.0";
  Metadata metadata;
  metadata.id = "af23c9d7-fff1-4a5a-a2c8-55c59bd782aa";
  metadata.name = "events";
  metadata.schema_string = R"({"type":"struct","fields":[]})";
  metadata.partition_columns = {"date"};
  metadata.configuration = {{"delta.appendOnly", "true"}};
  metadata.created_time = 1700000000000;
  AddFile add;
  add.path = "a%20b.parquet";
  add.size = 10;
  add.modification_time = 5;
  add.tags = StringMap{{"k", "v"}};
  add.deletion_vector = DeletionVectorDescriptor{"u", "ab^-aqEH.-t@S}K{vb[*k^", 4, 40, 6};
  add.base_row_id = 7;
  RemoveFile remove;
  remove.path = "old.parquet";
  remove.deletion_timestamp = 99;
  remove.data_change = false;
  remove.extended_file_metadata = true;
  remove.partition_values = PartitionValues{{"p", "1"}};
  remove.size = 3;
  AddCdcFile cdc{"_change_data/c.parquet", {}, 12, false, std::nullopt};
  SetTransaction txn{"app-1", 42, 1700000000001};
  DomainMetadata domain{"com.example", R"({"k":"v"})", false};
  std::vector<Action> written = {info, Protocol{}, metadata, add, remove, cdc, txn, domain};

  std::vector<Action> read = ParseOrDie(SerializeActions(written));

  EXPECT_EQ(read, written);
}

TEST(ActionsTest, StringsWithQuotesAndControlCharactersRoundTrip) {
  SetTransaction txn{std::string("a\"b\\c\n\x01\xc3\xa9", 9), 1, std::nullopt};
  std::vector<Action> read = ParseOrDie(SerializeAction(txn));
  ASSERT_EQ(read.size(), 1u);
  EXPECT_EQ(std::get<SetTransaction>(read[0]).app_id, txn.app_id);
}

TEST(ActionsTest, UnknownActionsAndFieldsAreIgnored) {
  std::vector<Action> read = ParseOrDie(
      "{\"checkpointMetadata\":{\"version\":1}}\n"
      "\n"
      "{\"txn\":{\"appId\":\"x\",\"version\":3,\"futureField\":[1,2]}}\n");
  ASSERT_EQ(read.size(), 1u);
  EXPECT_EQ(std::get<SetTransaction>(read[0]), (SetTransaction{"x", 3, std::nullopt}));
}

TEST(ActionsTest, SparkStyleCommitInfoKeepsNonStringParametersAsJson) {
  std::vector<Action> read = ParseOrDie(
      R"({"commitInfo":{"timestamp":1,"operation":"MERGE","operationParameters":{"predicate":["a = b"],"n":3},)"
      R"("notebook":{"notebookId":"1"}}})");
  const auto& info = std::get<CommitInfo>(read.at(0));
  EXPECT_EQ(info.operation, "MERGE");
  EXPECT_EQ(info.operation_parameters.at("predicate"), R"(["a = b"])");
  EXPECT_EQ(info.operation_parameters.at("n"), "3");
}

TEST(ActionsTest, MalformedLinesAreCorruptWithTheirLineNumber) {
  std::vector<Action> actions;
  Status status = ParseActions("{\"txn\":{\"appId\":\"x\",\"version\":1}}\n{\"add\":{\"path\":", "v.json", &actions);
  EXPECT_EQ(status.error_class(), errors::kDeltaLogCorrupt);
  EXPECT_NE(status.message().find("v.json line 2"), std::string_view::npos) << status.ToString();
}

TEST(ActionsTest, MissingOrMistypedRequiredFieldsAreNamed) {
  struct Case {
    std::string_view line;
    std::string_view expected;
  };
  for (const Case& c : {
           Case{R"({"add":{"path":"a","partitionValues":{},"modificationTime":1,"dataChange":true}})", "add.size is missing"},
           Case{R"({"add":{"path":"a","partitionValues":{},"size":"1","modificationTime":1,"dataChange":true}})",
                "add.size must be an integer"},
           Case{R"({"add":{"path":"a","partitionValues":{"p":1},"size":1,"modificationTime":1,"dataChange":true}})",
                "add.partitionValues must map to strings or null"},
           Case{R"({"protocol":{"minReaderVersion":1,"minWriterVersion":99999999999}})",
                "protocol.minWriterVersion is out of the range"},
           Case{R"({"txn":{"version":1}})", "txn.appId is missing"},
           Case{R"({"metaData":{"id":"x","schemaString":"{}"}})", "metaData.format is missing"},
           Case{R"({"remove":[]})", "action 'remove' must be a JSON object"},
           Case{R"([1])", "must be a JSON object"},
       }) {
    std::vector<Action> actions;
    Status status = ParseActions(c.line, "v.json", &actions);
    EXPECT_EQ(status.error_class(), errors::kDeltaLogCorrupt) << c.line;
    EXPECT_NE(status.message().find(c.expected), std::string_view::npos) << status.ToString();
  }
}

// Databricks' declarative pipelines create a table with a metaData that has no schema yet: it
// reads as a table without columns until a later commit gives it one.
TEST(ActionsTest, AMetaDataWithoutASchemaHasNoColumns) {
  std::vector<Action> actions;
  ASSERT_TRUE(ParseActions(R"({"metaData":{"id":"x","format":{"provider":"parquet","options":{}},)"
                           R"("partitionColumns":[],"configuration":{},"createdTime":1}})",
                           "0.json", &actions)
                  .ok());
  ASSERT_EQ(actions.size(), 1u);
  EXPECT_EQ(std::get<Metadata>(actions[0]).schema_string, kEmptySchemaString);
  EXPECT_EQ(ParseTypeJson(kEmptySchemaString).value()->num_fields(), 0);
}

TEST(ActionsTest, DeletionVectorUniqueIdFollowsTheProtocol) {
  DeletionVectorDescriptor dv{"u", "ab^-aqEH.-t@S}K{vb[*k^", 4, 40, 6};
  EXPECT_EQ(dv.UniqueId(), "uab^-aqEH.-t@S}K{vb[*k^@4");
  dv.offset.reset();
  EXPECT_EQ(dv.UniqueId(), "uab^-aqEH.-t@S}K{vb[*k^");
}

TEST(ActionsTest, LastCheckpointRoundTripsAndRejectsGarbage) {
  LastCheckpoint checkpoint{20, 143, std::nullopt, 5234, 120};
  EXPECT_EQ(SerializeLastCheckpoint(checkpoint), R"({"version":20,"size":143,"sizeInBytes":5234,"numOfAddFiles":120})");
  auto parsed = ParseLastCheckpoint(SerializeLastCheckpoint(checkpoint));
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(*parsed, checkpoint);
  EXPECT_EQ(ParseLastCheckpoint("{\"version\":-1}").status().error_class(), errors::kDeltaLogCorrupt);
  EXPECT_EQ(ParseLastCheckpoint("nope").status().error_class(), errors::kDeltaLogCorrupt);
}

TEST(ActionsTest, CommitFileNamesAreTwentyDigits) {
  EXPECT_EQ(CommitFileName(12), "00000000000000000012.json");
  EXPECT_EQ(ParseCommitFileName("00000000000000000012.json"), 12);
  EXPECT_EQ(ParseCommitFileName("00000000000000000012.checkpoint.parquet"), -1);
  EXPECT_EQ(ParseCommitFileName("0000000000000000001x.json"), -1);
  EXPECT_EQ(ParseCommitFileName("99999999999999999999.json"), -1);
}

}  // namespace
}  // namespace sluice::delta
