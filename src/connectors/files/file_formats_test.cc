#include "sluice/connectors/files/formats.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>

#include "sluice/core/compute.h"
#include "sluice/core/error_classes.h"
#include "connectors/files/file_formats_testing.h"
#include "testing/temp_dir.h"

namespace sluice::connectors {

using engine::OutputMode;
using engine::ReadLimit;
using engine::SinkContext;
using engine::SourceContext;

namespace {

// Every value of the batch as text, row by row, for comparisons that show what differs.
std::vector<std::string> Rows(const RecordBatch& batch) {
  std::vector<std::string> rows;
  for (int64_t row = 0; row < batch.num_rows(); ++row) {
    std::string text;
    for (int i = 0; i < batch.num_columns(); ++i) text += FormatValue(*batch.column(i), row) + " | ";
    rows.push_back(text);
  }
  return rows;
}

class FileFormatsTest : public ::testing::Test {
 protected:
  Status Write(const std::string& format, std::map<std::string, std::string> options, const BatchPtr& batch,
               const std::string& query_id = "query-1", int64_t batch_id = 0) {
    SLUICE_ASSIGN_OR_RETURN(auto sink, file_testing::FileFormatsRegistry().MakeSink(format, options));
    SLUICE_RETURN_IF_ERROR(sink->Open(SinkContext{query_id, OutputMode::kAppend, LocalFileSystem()}));
    return AddBatch(*sink, batch_id, *batch);
  }

  // Everything the source reads, in one batch.
  Result<BatchPtr> Read(const std::string& format, std::map<std::string, std::string> options) {
    SLUICE_ASSIGN_OR_RETURN(auto source, file_testing::FileFormatsRegistry().MakeSource(format, options));
    SourceContext context;
    context.file_system = LocalFileSystem();
    SLUICE_RETURN_IF_ERROR(source->Open(context));
    SLUICE_ASSIGN_OR_RETURN(std::string start, source->InitialOffset());
    SLUICE_ASSIGN_OR_RETURN(std::string end, source->LatestOffset(start, ReadLimit{true, std::nullopt}));
    SLUICE_ASSIGN_OR_RETURN(auto batches, source->Read(start, end));
    if (batches.empty()) return RecordBatch::Empty(source->schema());
    return Concatenate(batches);
  }

  void WriteText(const std::string& name, std::string_view content) {
    std::ofstream(dir_.Join(name), std::ios::binary) << content;
  }

  testing::TempDir dir_{"sluice-files"};
};

TEST_F(FileFormatsTest, ParquetRoundTripsEveryType) {
  BatchPtr batch = file_testing::EveryTypeBatch();
  ASSERT_TRUE(Write("parquet", {{"path", dir_.Join("out")}}, batch).ok());
  auto read = Read("parquet", {{"path", dir_.Join("out")}});
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_TRUE((*read)->schema()->Equals(*batch->schema())) << (*read)->schema()->ToString();
  EXPECT_EQ(Rows(**read), Rows(*batch));
}

TEST_F(FileFormatsTest, CsvRoundTripsEveryTypeWithHeaderAndOtherSeparator) {
  BatchPtr batch = file_testing::EveryTypeBatch();
  ASSERT_TRUE(Write("csv", {{"path", dir_.Join("out")}, {"header", "true"}, {"sep", ";"}}, batch).ok());
  auto read = Read("csv", {{"path", dir_.Join("out")},
                           {"header", "true"},
                           {"delimiter", ";"},
                           {"schema", batch->schema()->ToString()}});
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(Rows(**read), Rows(*batch));
}

TEST_F(FileFormatsTest, CsvRoundTripsWithQuoteAsEscapeAndANullMarker) {
  BatchPtr batch = file_testing::EveryTypeBatch();
  std::map<std::string, std::string> options = {{"path", dir_.Join("out")}, {"escape", "\""}, {"nullValue", "NULL"}};
  ASSERT_TRUE(Write("csv", options, batch).ok());
  options["schema"] = batch->schema()->ToString();
  auto read = Read("csv", options);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(Rows(**read), Rows(*batch));
}

TEST_F(FileFormatsTest, JsonLinesRoundTripEveryType) {
  BatchPtr batch = file_testing::EveryTypeBatch();
  ASSERT_TRUE(Write("json", {{"path", dir_.Join("out")}}, batch).ok());
  auto read = Read("json", {{"path", dir_.Join("out")}, {"schema", batch->schema()->ToString()}});
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(Rows(**read), Rows(*batch));
}

TEST_F(FileFormatsTest, CsvOfOneColumnKeepsNullRowsAsBlankLines) {
  Int64Builder ids(DataType::Long());
  ids.Append(1);
  ids.AppendNull();
  ids.Append(3);
  ids.AppendNull();
  BatchPtr batch = RecordBatch::Make(DataType::Struct({{"id", DataType::Long()}}).value(), {ids.Finish()}, 4).value();
  ASSERT_TRUE(Write("csv", {{"path", dir_.Join("out")}}, batch).ok());
  auto read = Read("csv", {{"path", dir_.Join("out")}, {"schema", "id long"}});
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(Rows(**read), (std::vector<std::string>{"1 | ", "null | ", "3 | ", "null | "}));

  WriteText("names.csv", "name\r\nada\r\n\r\n\"\"\r\n");
  read = Read("csv", {{"path", dir_.Join("names.csv")}, {"header", "true"}, {"schema", "name string"}});
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(Rows(**read), (std::vector<std::string>{"ada | ", "null | ", " | "}));
}

TEST_F(FileFormatsTest, CsvWithoutSchemaReadsStringsNamedByTheHeader) {
  WriteText("people.csv", "name,age\r\nada,36\r\n\r\n\"lin, jr\",\r\n");
  auto read = Read("csv", {{"path", dir_.Join("people.csv")}, {"header", "true"}});
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ((*read)->schema()->ToString(), "struct<name:string,age:string>");
  EXPECT_EQ(Rows(**read), (std::vector<std::string>{"ada | 36 | ", "lin, jr | null | "}));
}

TEST_F(FileFormatsTest, JsonLinesIgnoreUnknownKeysAndNullAbsentOnes) {
  WriteText("events.json", "{\"id\": 1, \"extra\": [1, {\"x\": 2}], \"price\": 12.50}\n\n{\"id\": 2}\n");
  auto read = Read("json", {{"path", dir_.Join("events.json")}, {"schema", "id long, price decimal(5,2)"}});
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(Rows(**read), (std::vector<std::string>{"1 | 12.50 | ", "2 | null | "}));
}

TEST_F(FileFormatsTest, ADirectoryIsReadFileByFileSkippingHiddenOnes) {
  std::filesystem::create_directories(dir_.Join("in"));
  WriteText("in/b.csv", "3\n4\n");
  WriteText("in/a.csv", "1\n2\n");
  WriteText("in/_SUCCESS", "");
  WriteText("in/.a.csv.crc", "junk");
  auto read = Read("csv", {{"path", dir_.Join("in")}, {"schema", "n int"}});
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(Rows(**read), (std::vector<std::string>{"1 | ", "2 | ", "3 | ", "4 | "}));
}

TEST_F(FileFormatsTest, PiecesReachTheQueryFileByFileBeforeALaterFileIsRead) {
  std::filesystem::create_directories(dir_.Join("in"));
  WriteText("in/a.json", "{\"n\": 1}\n{\"n\": 2}\n");
  WriteText("in/b.json", "{\"n\": 3}\n");
  WriteText("in/c.json", "{\"n\": 4}\n{\"n\": 5, \"cut o");
  auto source = file_testing::FileFormatsRegistry().MakeSource("json", {{"path", dir_.Join("in")}, {"schema", "n int"}});
  ASSERT_TRUE(source.ok()) << source.status().ToString();
  SourceContext context;
  context.file_system = LocalFileSystem();
  ASSERT_TRUE((*source)->Open(context).ok());
  auto start = (*source)->InitialOffset();
  ASSERT_TRUE(start.ok());
  auto end = (*source)->LatestOffset(*start, ReadLimit{true, std::nullopt});
  ASSERT_TRUE(end.ok());
  std::vector<std::vector<std::string>> pieces;
  Status read = (*source)->ReadPieces(*start, *end, [&](BatchPtr piece) {
    pieces.push_back(Rows(*piece));
    return Status::OK();
  });
  EXPECT_EQ(read.error_class(), errors::kMalformedJsonRecord) << read.ToString();
  EXPECT_EQ(pieces, (std::vector<std::vector<std::string>>{{"1 | ", "2 | "}, {"3 | "}}));
}

TEST_F(FileFormatsTest, CsvRecordWithTheWrongFieldCountNamesFileAndLine) {
  WriteText("bad.csv", "a,1\nb,2\nc\n");
  auto read = Read("csv", {{"path", dir_.Join("bad.csv")}, {"schema", "s string, n int"}});
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().error_class(), errors::kMalformedCsvRecord);
  EXPECT_NE(read.status().message().find("bad.csv:3: expected 2 fields, found 1"), std::string::npos)
      << read.status().message();
}

TEST_F(FileFormatsTest, CsvFieldThatIsNoNumberNamesFileLineAndColumn) {
  WriteText("bad.csv", "s,n\na,1\nb,12x\n");
  auto read = Read("csv", {{"path", dir_.Join("bad.csv")}, {"header", "true"}, {"schema", "s string, n int"}});
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().error_class(), errors::kMalformedCsvRecord);
  EXPECT_NE(read.status().message().find("bad.csv:3: column 2 (`n`): `12x` is not a valid int"), std::string::npos)
      << read.status().message();
}

TEST_F(FileFormatsTest, TruncatedCsvWithAnOpenQuoteIsMalformed) {
  WriteText("cut.csv", "1,\"complete\"\n2,\"cut off in the mid");
  auto read = Read("csv", {{"path", dir_.Join("cut.csv")}, {"schema", "n int, s string"}});
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().error_class(), errors::kMalformedCsvRecord);
  EXPECT_NE(read.status().message().find("cut.csv:2: a quoted field is not closed"), std::string::npos)
      << read.status().message();
}

// Strings hold UTF-8: a field whose bytes are not is a malformed record, in either format and
// with or without a schema, never a string that would reach a table as such.
TEST_F(FileFormatsTest, FieldsThatAreNotUtf8AreMalformed) {
  for (std::string bytes : {std::string("\xFF\xFE\x80"), std::string("ok\xC3"), std::string("\xED\xA0\x80"),
                            std::string("\xC0\xAF")}) {
    SCOPED_TRACE(bytes);
    WriteText("bad.csv", "s,n\nfine,1\n" + bytes + ",2\n");
    for (bool with_schema : {true, false}) {
      std::map<std::string, std::string> options = {{"path", dir_.Join("bad.csv")}, {"header", "true"}};
      if (with_schema) options["schema"] = "s string, n int";
      auto read = Read("csv", options);
      ASSERT_FALSE(read.ok());
      EXPECT_EQ(read.status().error_class(), errors::kMalformedCsvRecord);
      EXPECT_NE(read.status().message().find("bad.csv:3: column 1 (`s`): not valid UTF-8"), std::string::npos)
          << read.status().message();
    }
    WriteText("bad.json", "{\"s\": \"fine\"}\n{\"s\": \"" + bytes + "\"}\n");
    auto read = Read("json", {{"path", dir_.Join("bad.json")}, {"schema", "s string"}});
    ASSERT_FALSE(read.ok());
    EXPECT_EQ(read.status().error_class(), errors::kMalformedJsonRecord);
    EXPECT_NE(read.status().message().find("bad.json:2:"), std::string::npos) << read.status().message();
  }
}

TEST_F(FileFormatsTest, TruncatedJsonLineIsMalformed) {
  WriteText("cut.json", "{\"n\": 1}\n{\"n\": 2, \"s\": \"cut o");
  auto read = Read("json", {{"path", dir_.Join("cut.json")}, {"schema", "n int, s string"}});
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().error_class(), errors::kMalformedJsonRecord);
  EXPECT_NE(read.status().message().find("cut.json:2:"), std::string::npos) << read.status().message();
}

TEST_F(FileFormatsTest, JsonValueOfTheWrongTypeNamesTheField) {
  WriteText("bad.json", "{\"n\": 1}\n{\"n\": \"one\"}\n");
  auto read = Read("json", {{"path", dir_.Join("bad.json")}, {"schema", "n int"}});
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().error_class(), errors::kMalformedJsonRecord);
  EXPECT_NE(read.status().message().find("bad.json:2: field `n`: expected a number"), std::string::npos)
      << read.status().message();
}

// A value that is not a string where the schema says string names what it found, and a string
// JSON cannot decode (a lone surrogate escape) says so.
TEST_F(FileFormatsTest, JsonValuesThatAreNoStringSayWhatTheyAre) {
  struct Case {
    std::string value;
    std::string message;
  };
  for (const Case& c : std::vector<Case>{{R"({"a": 1})", "expected a string (the text of a string), found an object"},
                                         {"[1]", "found an array"},
                                         {"12", "found a number"},
                                         {"true", "found a boolean"},
                                         {R"("\ud800")", "a lone surrogate"},
                                         {R"("\udc00x")", "a lone surrogate"}}) {
    WriteText("bad.json", "{\"s\": " + c.value + "}\n");
    auto read = Read("json", {{"path", dir_.Join("bad.json")}, {"schema", "s string"}});
    ASSERT_FALSE(read.ok()) << c.value;
    EXPECT_EQ(read.status().error_class(), errors::kMalformedJsonRecord);
    EXPECT_NE(read.status().message().find(c.message), std::string::npos) << read.status().message();
  }
}

TEST_F(FileFormatsTest, NumberOutOfItsTypesRangeIsMalformed) {
  WriteText("big.json", "{\"n\": 4294967296}\n");
  auto read = Read("json", {{"path", dir_.Join("big.json")}, {"schema", "n int"}});
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().error_class(), errors::kMalformedJsonRecord);
}

class FileSinkModesTest : public FileFormatsTest {
 protected:
  BatchPtr Numbers(int64_t from, int64_t to) {
    Int64Builder builder(DataType::Long());
    for (int64_t v = from; v < to; ++v) builder.Append(v);
    return RecordBatch::Make(DataType::Struct({{"n", DataType::Long()}}).value(), {builder.Finish()}, to - from)
        .value();
  }
  std::vector<std::string> Values() {
    auto read = Read("json", {{"path", dir_.Join("out")}, {"schema", "n long"}});
    EXPECT_TRUE(read.ok()) << read.status().ToString();
    return read.ok() ? Rows(**read) : std::vector<std::string>{};
  }
  Status WriteNumbers(const std::string& mode, int64_t from, int64_t to, const std::string& query_id) {
    return Write("json", {{"path", dir_.Join("out")}, {"mode", mode}}, Numbers(from, to), query_id);
  }
};

TEST_F(FileSinkModesTest, ErrorIfExistsRefusesADirectoryWithOtherData) {
  ASSERT_TRUE(WriteNumbers("errorifexists", 0, 2, "first").ok());
  Status second = WriteNumbers("errorifexists", 5, 6, "second");
  EXPECT_EQ(second.error_class(), errors::kFileAlreadyExists) << second.ToString();
  EXPECT_EQ(Values(), (std::vector<std::string>{"0 | ", "1 | "}));
}

TEST_F(FileSinkModesTest, AReplayedBatchRewritesItsOwnFileInEveryMode) {
  for (const char* mode : {"errorifexists", "append", "overwrite", "ignore"}) {
    ASSERT_TRUE(WriteNumbers(mode, 0, 2, "same-query").ok()) << mode;
  }
  EXPECT_EQ(Values(), (std::vector<std::string>{"0 | ", "1 | "}));
}

TEST_F(FileSinkModesTest, AppendAddsIgnoreKeepsOverwriteReplaces) {
  ASSERT_TRUE(WriteNumbers("append", 0, 2, "first").ok());
  ASSERT_TRUE(WriteNumbers("append", 2, 3, "second").ok());
  EXPECT_EQ(Values().size(), 3u);
  ASSERT_TRUE(WriteNumbers("ignore", 7, 9, "third").ok());
  EXPECT_EQ(Values().size(), 3u);
  ASSERT_TRUE(WriteNumbers("overwrite", 7, 9, "fourth").ok());
  EXPECT_EQ(Values(), (std::vector<std::string>{"7 | ", "8 | "}));
}

TEST_F(FileFormatsTest, CsvOptionsAreChecked) {
  auto both = file_testing::FileFormatsRegistry().MakeSource("csv", {{"path", "/x"}, {"sep", ";"}, {"delimiter", ","}});
  EXPECT_EQ(both.status().error_class(), errors::kInvalidOptions);
  auto long_quote = file_testing::FileFormatsRegistry().MakeSink("csv", {{"path", "/x"}, {"quote", "''"}});
  EXPECT_EQ(long_quote.status().error_class(), errors::kInvalidOptions);
  auto bad_schema = file_testing::FileFormatsRegistry().MakeSource("json", {{"path", "/x"}, {"schema", "id lung"}});
  EXPECT_EQ(bad_schema.status().error_class(), errors::kInvalidOptions);
  auto no_schema = file_testing::FileFormatsRegistry().MakeSource("json", {{"path", "/x"}});
  EXPECT_EQ(no_schema.status().error_class(), errors::kInvalidOptions);
}

TEST_F(FileFormatsTest, MissingPathIsFileNotFound) {
  auto read = Read("parquet", {{"path", dir_.Join("absent")}});
  EXPECT_EQ(read.status().error_class(), errors::kFileNotFound);
}

}  // namespace
}  // namespace sluice::connectors
