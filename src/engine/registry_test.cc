#include "sluice/engine/registry.h"

#include <gtest/gtest.h>

#include "sluice/core/builder.h"
#include "sluice/core/clock.h"
#include "sluice/core/error_classes.h"
#include "sluice/engine/builtin_sinks.h"
#include "sluice/engine/memory_sink.h"
#include "sluice/engine/streaming_query.h"
#include "testing/temp_dir.h"

namespace sluice::engine {
namespace {

// A registry holding the engine's own formats.
Registry& Builtins() {
  static Registry* registry = [] {
    auto* made = new Registry();
    EXPECT_TRUE(RegisterBuiltinFormats(made).ok());
    return made;
  }();
  return *registry;
}

TEST(RegistryTest, BuiltInFormatsAreRegistered) {
  Registry& registry = Builtins();
  EXPECT_NE(registry.FindSourceFormat("rate"), nullptr);
  EXPECT_NE(registry.FindSourceFormat("RATE"), nullptr) << "format names are case-insensitive";
  for (const char* sink : {"memory", "console", "foreachBatch"}) EXPECT_NE(registry.FindSinkFormat(sink), nullptr) << sink;
  // Table and file formats are the connectors' (connectors/register_formats.h).
  for (const char* format : {"delta", "parquet", "csv", "json"}) {
    EXPECT_EQ(registry.FindSourceFormat(format), nullptr) << format;
    EXPECT_EQ(registry.FindSinkFormat(format), nullptr) << format;
  }
}

TEST(RegistryTest, UnknownFormatsListTheKnownOnes) {
  auto source = Builtins().MakeSource("kafak", {});
  ASSERT_FALSE(source.ok());
  EXPECT_EQ(source.status().error_class(), errors::kDataSourceNotFound);
  EXPECT_NE(source.status().message().find("rate"), std::string_view::npos);
  EXPECT_EQ(Builtins().MakeSink("nowhere", {}).status().error_class(), errors::kDataSourceNotFound);
}

TEST(RegistryTest, OptionsAreValidatedBeforeAnythingIsBuilt) {
  auto wrong_type = Builtins().MakeSource("rate", {{"rowsPerSecond", "fast"}});
  ASSERT_FALSE(wrong_type.ok());
  EXPECT_EQ(wrong_type.status().error_class(), errors::kInvalidOptions);
  EXPECT_NE(wrong_type.status().message().find("rowsPerSecond"), std::string_view::npos);

  auto unknown_key = Builtins().MakeSource("rate", {{"rowsPerSecnd", "5"}});
  ASSERT_FALSE(unknown_key.ok());
  EXPECT_NE(unknown_key.status().message().find("rowsPerSecnd"), std::string_view::npos);

  EXPECT_EQ(Builtins().MakeSource("rate", {{"rowsPerSecond", "0"}}).status().error_class(),
            errors::kInvalidOptions);
  EXPECT_EQ(Builtins().MakeSink("memory", {}).status().error_class(), errors::kInvalidOptions)
      << "queryName is required";
  EXPECT_EQ(Builtins().MakeSink("console", {{"numRows", "-1"}}).status().error_class(), errors::kInvalidOptions);
  EXPECT_TRUE(Builtins().MakeSource("rate", {{"ROWSPERSECOND", "5"}}).ok()) << "keys match in any case";
}

TEST(RegistryTest, RegisteringANameTwiceFails) {
  Registry registry;
  ASSERT_TRUE(RegisterBuiltinFormats(&registry).ok());
  EXPECT_EQ(RegisterBuiltinFormats(&registry).error_class(), errors::kInvalidArgument);
  auto noop = [](const RecordBatch&, const BatchContext&) { return Status::OK(); };
  ASSERT_TRUE(registry.RegisterForeachBatch("f", noop).ok());
  EXPECT_EQ(registry.RegisterForeachBatch("f", noop).error_class(), errors::kInvalidArgument);
}

TEST(RegistryTest, ForeachBatchFunctionsAreFoundByName) {
  Registry registry;
  ASSERT_TRUE(RegisterBuiltinFormats(&registry).ok());
  auto missing = registry.MakeSink("foreachBatch", {{"function", "summarize"}});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().error_class(), errors::kForeachBatchFunctionNotFound);

  std::vector<int64_t> ids;
  std::vector<const Registry*> registries;
  ASSERT_TRUE(registry
                  .RegisterForeachBatch("summarize",
                                        [&](const RecordBatch&, const BatchContext& context) {
                                          const int64_t batch_id = context.batch_id;
                                          ids.push_back(batch_id);
                                          registries.push_back(context.registry);
                                          return Status::OK();
                                        })
                  .ok());
  auto sink = registry.MakeSink("foreachBatch", {{"function", "summarize"}});
  ASSERT_TRUE(sink.ok()) << sink.status().ToString();
  EXPECT_EQ((*sink)->description(), "ForeachBatchSink[summarize]");
  ASSERT_TRUE(AddBatch(**sink, 7, *RecordBatch::Empty(DataType::Struct({}).value())).ok());
  EXPECT_EQ(ids, std::vector<int64_t>{7});
  EXPECT_EQ(registries, std::vector<const Registry*>{&registry}) << "the callback writes through the sink's registry";
}

TEST(RegistryTest, ForeachBatchGetsTheSameBatchIdWhenABatchIsReplayed) {
  testing::TempDir dir;
  Registry registry;
  ASSERT_TRUE(RegisterBuiltinFormats(&registry).ok());
  std::vector<std::pair<int64_t, int64_t>> calls;  // (batch id, first value)
  bool fail_once = true;
  ASSERT_TRUE(registry
                  .RegisterForeachBatch("flaky",
                                        [&](const RecordBatch& batch, const BatchContext& context) -> Status {
                                          const int64_t batch_id = context.batch_id;
                                          calls.emplace_back(batch_id, batch.column(1)->Value<int64_t>(0));
                                          if (batch_id == 1 && fail_once) {
                                            fail_once = false;
                                            return Status::Error(errors::kIoError, "callback failed");
                                          }
                                          return Status::OK();
                                        })
                  .ok());
  auto clock = std::make_shared<ManualClock>(0);
  auto run = [&](Trigger trigger) {
    QueryConfig config;
    config.checkpoint_location = dir.Join("checkpoint");
    config.clock = clock;
    config.trigger = trigger;
    auto source = registry.MakeSource("rate", {{"rowsPerSecond", "10"}, {"maxRowsPerBatch", "5"}, {"startTimestamp", "0"}});
    auto sink = registry.MakeSink("foreachBatch", {{"function", "flaky"}});
    auto query = StreamingQuery::Start(std::move(source).value(), std::move(sink).value(), std::move(config));
    return query.ok() ? (*query)->Run() : query.status();
  };
  clock->AdvanceBy(std::chrono::seconds(2));
  EXPECT_EQ(run(Trigger::AvailableNow()).error_class(), errors::kIoError);
  ASSERT_TRUE(run(Trigger::AvailableNow()).ok());
  std::vector<std::pair<int64_t, int64_t>> expected = {{0, 0}, {1, 5}, {1, 5}, {2, 10}, {3, 15}};
  EXPECT_EQ(calls, expected);
}

TEST(ConsoleSinkTest, PrintsABannerAndAtMostTheRowLimit) {
  std::ostringstream out;
  auto sink = MakeConsoleSink(&out, 2);
  Int64Builder values(DataType::Long());
  for (int64_t v : {1, 2, 3}) values.Append(v);
  auto schema = DataType::Struct({Field{"value", DataType::Long()}}).value();
  auto batch = RecordBatch::Make(schema, {values.Finish()}, 3).value();
  ASSERT_TRUE(AddBatch(*sink, 4, *batch).ok());
  std::string text = out.str();
  EXPECT_EQ(text.rfind("-------------------------------------------\nBatch: 4\n", 0), 0u) << text;
  EXPECT_NE(text.find("|    2|"), std::string::npos) << text;
  EXPECT_EQ(text.find("|    3|"), std::string::npos) << text;
}

TEST(MemorySinkTest, IgnoresABatchIdItAlreadyHas) {
  auto table = std::make_shared<MemoryTable>();
  MemorySink sink(table);
  auto schema = DataType::Struct({Field{"value", DataType::Long()}}).value();
  Int64Builder values(DataType::Long());
  values.Append(1);
  auto batch = RecordBatch::Make(schema, {values.Finish()}, 1).value();
  ASSERT_TRUE(AddBatch(sink, 0, *batch).ok());
  ASSERT_TRUE(AddBatch(sink, 0, *batch).ok());
  ASSERT_TRUE(AddBatch(sink, 1, *batch).ok());
  EXPECT_EQ(table->batch_ids(), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(MemoryTable::Named("t"), MemoryTable::Named("t"));
  EXPECT_NE(MemoryTable::Named("t"), MemoryTable::Named("u"));
}

}  // namespace
}  // namespace sluice::engine
