// Interoperability with DuckDB, an independent Parquet implementation: DuckDB reads the files
// sluice writes, and sluice reads the files DuckDB writes, with exactly the values DuckDB sees.
// Rows are compared in the canonical JSON form of tests/tools/duckdb_query.mjs.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "parquet/duckdb_testing.h"
#include "sluice/core/builder.h"
#include "sluice/parquet/reader.h"
#include "sluice/parquet/writer.h"
#include "testing/temp_dir.h"

namespace sluice::parquet {
namespace {

using testing::CanonicalRows;
using testing::DuckDbRows;

// Every column type DuckDB maps onto a sluice type, with nulls, nesting and both low- and
// high-cardinality values.
constexpr const char* kAllTypesQuery = R"sql(
SELECT
  i::BIGINT AS id,
  (i % 2 = 0) AS flag,
  (i % 100 - 50)::TINYINT AS tiny,
  (i * 7 % 30000)::SMALLINT AS small,
  CASE WHEN i % 5 = 0 THEN NULL ELSE (i * 104729) % 2147483647 - 1073741823 END::INTEGER AS int32,
  (i * 6700417 - 3000000000)::BIGINT AS int64,
  (i / 7.0)::FLOAT AS f32,
  CASE WHEN i % 11 = 0 THEN NULL ELSE i * 1.25e-3 - 3.5 END::DOUBLE AS f64,
  (i * 123 - 99999)::DECIMAL(9,2) AS dec9,
  (i * 1234567 - 99999999)::DECIMAL(18,4) AS dec18,
  CASE WHEN i % 3 = 0 THEN NULL ELSE (i::DECIMAL(38,0) * 1000000000000000000000 + i)::DECIMAL(38,10) END AS dec38,
  'cat_' || (i % 5)::VARCHAR AS low_card,
  CASE WHEN i % 13 = 0 THEN NULL ELSE md5(i::VARCHAR) || repeat('x', i % 17) END AS high_card,
  CASE WHEN i % 4 = 0 THEN NULL ELSE md5(i::VARCHAR)::BLOB END AS bin,
  (DATE '1969-12-25' + (i % 20000)::INTEGER) AS day,
  (TIMESTAMP '1969-12-31 23:00:00' + to_microseconds(i * 3600000123)) AS ts_ntz,
  (TIMESTAMPTZ '2024-02-29 12:00:00+00' + to_microseconds(i * 1000001)) AS ts_utc,
  (i % 200)::UTINYINT AS u8,
  CASE WHEN i % 6 = 0 THEN NULL ELSE [i, NULL, i + 1] END AS int_list,
  CASE WHEN i % 7 = 0 THEN [] ELSE ['a' || i::VARCHAR, NULL] END AS str_list,
  CASE WHEN i % 9 = 0 THEN NULL ELSE {'x': i, 'y': CASE WHEN i % 2 = 0 THEN NULL ELSE 'y' || i::VARCHAR END} END AS st,
  [{'k': i, 'v': [i, i]}, NULL] AS list_of_structs,
  CASE WHEN i % 8 = 0 THEN NULL ELSE MAP {'a': i, 'b': NULL} END AS m,
  [[i], [], NULL, [i, i + 1]] AS nested_list
FROM range(0, 3000) t(i)
)sql";

class DuckDbWritesSluiceReads : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_NO_FATAL_FAILURE(testing::RequireDuckDb()); }

  // DuckDB writes `query` with `options`, then the rows sluice reads are the rows DuckDB reads.
  void ExpectSameRows(const std::string& query, const std::string& options, const ReadOptions& read = {},
                      const std::string& select = "*") {
    const std::string path = dir_.Join("duckdb.parquet");
    bool ok = false;
    std::string error;
    std::vector<std::string> expected =
        DuckDbRows({"SET threads=1", "COPY (" + query + ") TO '" + path + "' (FORMAT parquet" + options + ")",
                    "SELECT " + select + " FROM '" + path + "'"},
                   &ok, &error);
    ASSERT_TRUE(ok) << error;

    auto reader = ParquetReader::Open(*LocalFileSystem(), path);
    ASSERT_TRUE(reader.ok()) << reader.status().ToString();
    metadata_ = (*reader)->metadata();
    auto batch = (*reader)->ReadAll(read);
    ASSERT_TRUE(batch.ok()) << batch.status().ToString();
    ASSERT_TRUE((*batch)->num_rows() == static_cast<int64_t>(expected.size()));
    std::vector<std::string> actual = CanonicalRows(**batch);
    for (size_t i = 0; i < expected.size(); ++i) {
      ASSERT_EQ(actual[i], expected[i]) << "row " << i << " of a file written with" << options;
    }
  }

  // Whether some column chunk of the last file read uses `encoding`.
  bool UsesEncoding(Encoding encoding) const {
    for (const auto& group : metadata_.row_groups) {
      for (const auto& chunk : group.columns) {
        for (Encoding e : chunk.meta_data->encodings) {
          if (e == encoding) return true;
        }
      }
    }
    return false;
  }

  sluice::testing::TempDir dir_{"sluice-duckdb"};
  FileMetaData metadata_;
};

TEST_F(DuckDbWritesSluiceReads, EveryTypeWithSnappy) { ExpectSameRows(kAllTypesQuery, ", COMPRESSION snappy"); }

TEST_F(DuckDbWritesSluiceReads, EveryTypeWithZstd) { ExpectSameRows(kAllTypesQuery, ", COMPRESSION zstd"); }

TEST_F(DuckDbWritesSluiceReads, EveryTypeWithGzip) { ExpectSameRows(kAllTypesQuery, ", COMPRESSION gzip"); }

TEST_F(DuckDbWritesSluiceReads, EveryTypeUncompressed) { ExpectSameRows(kAllTypesQuery, ", COMPRESSION uncompressed"); }

TEST_F(DuckDbWritesSluiceReads, ManySmallRowGroups) {
  ExpectSameRows(kAllTypesQuery, ", COMPRESSION snappy, ROW_GROUP_SIZE 500");
}

TEST_F(DuckDbWritesSluiceReads, DataPagesV2WithDeltaEncodings) {
  ExpectSameRows(kAllTypesQuery, ", COMPRESSION zstd, PARQUET_VERSION v2");
  EXPECT_TRUE(UsesEncoding(Encoding::kDeltaBinaryPacked));
  EXPECT_TRUE(UsesEncoding(Encoding::kDeltaLengthByteArray));
}

TEST_F(DuckDbWritesSluiceReads, PlainEncodingWhenDictionariesAreRefused) {
  ExpectSameRows(kAllTypesQuery, ", COMPRESSION snappy, DICTIONARY_SIZE_LIMIT 1");
  EXPECT_FALSE(UsesEncoding(Encoding::kRleDictionary));
}

TEST_F(DuckDbWritesSluiceReads, UnsignedIntegersWidenAsSparkReadsThem) {
  // UINT_32 reads as long and UINT_64 as decimal(20,0): DuckDB prints them cast the same way.
  ExpectSameRows("SELECT (i * 1000)::UINTEGER AS u32, i::UBIGINT * 9000000000000000000::UBIGINT AS u64, (i * 300)::USMALLINT AS u16 "
                 "FROM range(0, 3) t(i)",
                 "", {}, "u32::BIGINT, u64::DECIMAL(20,0), u16");
}

TEST_F(DuckDbWritesSluiceReads, NullHeavyAndAllNullColumns) {
  ExpectSameRows(R"sql(
    SELECT CASE WHEN i % 97 = 0 THEN i END::BIGINT AS sparse,
           NULL::VARCHAR AS nothing,
           CASE WHEN i % 50 = 0 THEN [NULL::INTEGER] END AS sparse_list,
           CASE WHEN i % 31 = 0 THEN {'a': NULL::DOUBLE} END AS sparse_struct
    FROM range(0, 20000) t(i))sql",
                 ", COMPRESSION snappy");
}

TEST_F(DuckDbWritesSluiceReads, ProjectionReadsTopLevelAndNestedColumns) {
  ReadOptions read;
  read.columns = {"st.y", "id", "m"};
  ExpectSameRows(kAllTypesQuery, ", COMPRESSION snappy", read,
                 "CASE WHEN st IS NULL THEN NULL ELSE {'y': st.y} END, id, m");
}

TEST_F(DuckDbWritesSluiceReads, SmallBatchesSplitRowGroups) {
  ReadOptions read;
  read.batch_size = 77;
  ExpectSameRows(kAllTypesQuery, ", COMPRESSION snappy, ROW_GROUP_SIZE 1000", read);
}

// --- sluice writes, DuckDB reads

// Deterministic values of any type: row `i` of a column, null where `i` hits the null pattern.
void AppendValue(ColumnBuilder* b, uint64_t i, int null_every) {
  if (null_every > 0 && i % null_every == 0) {
    b->AppendNull();
    return;
  }
  const uint64_t h = i * 0x9E3779B97F4A7C15ull;
  const DataType& t = *b->type();
  switch (t.id()) {
    case TypeId::kBoolean: static_cast<BooleanBuilder*>(b)->Append(h >> 63); break;
    case TypeId::kByte: static_cast<Int8Builder*>(b)->Append(static_cast<int8_t>(h >> 56)); break;
    case TypeId::kShort: static_cast<Int16Builder*>(b)->Append(static_cast<int16_t>(h >> 48)); break;
    case TypeId::kInteger: static_cast<Int32Builder*>(b)->Append(static_cast<int32_t>(h >> 32)); break;
    case TypeId::kDate: static_cast<Int32Builder*>(b)->Append(static_cast<int32_t>(h % 200000) - 100000); break;
    case TypeId::kLong: static_cast<Int64Builder*>(b)->Append(static_cast<int64_t>(h)); break;
    case TypeId::kTimestamp:
    case TypeId::kTimestampNtz:
      static_cast<Int64Builder*>(b)->Append(static_cast<int64_t>(h % 8000000000000000ull) - 4000000000000000ll);
      break;
    case TypeId::kFloat: static_cast<FloatBuilder*>(b)->Append(static_cast<float>(static_cast<int64_t>(h)) / 7e9f); break;
    case TypeId::kDouble: static_cast<DoubleBuilder*>(b)->Append(static_cast<double>(static_cast<int64_t>(h)) / 3e7); break;
    case TypeId::kDecimal: {
      int128_t limit = 1;
      for (int d = 0; d < t.precision(); ++d) limit *= 10;
      int128_t v = ((static_cast<int128_t>(h) << 64) | (h * 31)) % limit;
      static_cast<DecimalBuilder*>(b)->Append(v);
      break;
    }
    case TypeId::kString: {
      std::string s = "s" + std::to_string(h % 1000) + std::string(h % 7, 'x') + (i % 5 == 0 ? "\"q\u00e9\n" : "");
      static_cast<BinaryBuilder*>(b)->Append(s);
      break;
    }
    case TypeId::kBinary: {
      std::string bytes(h % 9, '\0');
      for (size_t k = 0; k < bytes.size(); ++k) bytes[k] = static_cast<char>(h >> (k * 7));
      static_cast<BinaryBuilder*>(b)->Append(bytes);
      break;
    }
    case TypeId::kStruct: {
      auto* s = static_cast<StructBuilder*>(b);
      for (int f = 0; f < s->num_fields(); ++f) {
        AppendValue(s->field_builder(f), i * 3 + f, t.field(f).nullable ? 3 : 0);
      }
      s->Append();
      break;
    }
    case TypeId::kArray: {
      auto* l = static_cast<ListBuilder*>(b);
      for (uint64_t e = 0; e < h % 4; ++e) AppendValue(l->element_builder(), i * 5 + e, t.contains_null() ? 4 : 0);
      l->Append();
      break;
    }
    case TypeId::kMap: {
      auto* m = static_cast<ListBuilder*>(b);
      for (uint64_t e = 0; e < h % 3; ++e) {
        static_cast<BinaryBuilder*>(m->key_builder())->Append("k" + std::to_string(e));
        AppendValue(m->value_builder(), i * 7 + e, t.value_contains_null() ? 2 : 0);
      }
      m->Append();
      break;
    }
  }
}

class SluiceWritesDuckDbReads : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_NO_FATAL_FAILURE(testing::RequireDuckDb()); }

  void ExpectSameRows(const TypePtr& schema, int64_t rows, int null_every, WriterOptions options) {
    std::vector<ColumnPtr> columns;
    for (const Field& field : schema->fields()) {
      auto builder = ColumnBuilder::Make(field.type);
      for (int64_t i = 0; i < rows; ++i) AppendValue(builder.get(), static_cast<uint64_t>(i), field.nullable ? null_every : 0);
      columns.push_back(builder->Finish());
    }
    auto batch = RecordBatch::Make(schema, columns, rows);
    ASSERT_TRUE(batch.ok()) << batch.status().ToString();
    const std::string path = dir_.Join("sluice.parquet");
    auto file = LocalFileSystem()->OpenForWrite(path);
    ASSERT_TRUE(file.ok());
    auto writer = ParquetWriter::Open(std::move(*file), schema, options);
    ASSERT_TRUE(writer.ok()) << writer.status().ToString();
    Status written = (*writer)->Write(**batch);
    ASSERT_TRUE(written.ok()) << written.ToString();
    auto closed = (*writer)->Close();
    ASSERT_TRUE(closed.ok()) << closed.status().ToString();

    bool ok = false;
    std::string error;
    std::vector<std::string> actual = DuckDbRows({"SELECT * FROM '" + path + "'"}, &ok, &error);
    ASSERT_TRUE(ok) << error;
    std::vector<std::string> expected = CanonicalRows(**batch);
    ASSERT_EQ(actual.size(), expected.size());
    for (size_t i = 0; i < expected.size(); ++i) ASSERT_EQ(actual[i], expected[i]) << "row " << i;
  }

  sluice::testing::TempDir dir_{"sluice-duckdb"};
};

TypePtr EveryType() {
  return *DataType::Struct({
      {"flag", DataType::Boolean()},
      {"tiny", DataType::Byte()},
      {"small", DataType::Short()},
      {"int32", DataType::Integer()},
      {"int64", DataType::Long(), false},
      {"f32", DataType::Float()},
      {"f64", DataType::Double()},
      {"dec9", *DataType::Decimal(9, 3)},
      {"dec18", *DataType::Decimal(18, 0)},
      {"dec38", *DataType::Decimal(38, 12)},
      {"text", DataType::String()},
      {"bytes", DataType::Binary()},
      {"day", DataType::Date()},
      {"ts", DataType::Timestamp()},
      {"ts_ntz", DataType::TimestampNtz()},
      {"point", *DataType::Struct({{"x", DataType::Double()}, {"label", DataType::String(), false}})},
      {"tags", DataType::Array(DataType::String())},
      {"matrix", DataType::Array(DataType::Array(DataType::Integer(), false))},
      {"events", DataType::Array(*DataType::Struct({{"at", DataType::Timestamp()}, {"n", DataType::Long()}}))},
      {"attrs", DataType::Map(DataType::String(), DataType::Double())},
  });
}

TEST_F(SluiceWritesDuckDbReads, EveryTypeWithEveryCodec) {
  for (CompressionCodec codec : {CompressionCodec::kSnappy, CompressionCodec::kZstd, CompressionCodec::kGzip,
                                 CompressionCodec::kUncompressed}) {
    WriterOptions options;
    options.compression = codec;
    ASSERT_NO_FATAL_FAILURE(ExpectSameRows(EveryType(), 2000, 6, options)) << CodecName(codec);
  }
}

TEST_F(SluiceWritesDuckDbReads, NullHeavyColumnsSmallPagesAndRowGroups) {
  WriterOptions options;
  options.page_size = 512;
  options.row_group_size = 16 * 1024;
  ExpectSameRows(EveryType(), 5000, 2, options);
}

TEST_F(SluiceWritesDuckDbReads, AllNullColumns) { ExpectSameRows(EveryType(), 300, 1, WriterOptions{}); }

TEST_F(SluiceWritesDuckDbReads, PlainPagesAfterTheDictionaryOverflows) {
  WriterOptions options;
  options.dictionary_size_limit = 256;
  ExpectSameRows(EveryType(), 3000, 9, options);
}

TEST_F(SluiceWritesDuckDbReads, NearlyDistinctChunksWrittenPlainInRowGroupsCappedByRows) {
  // Distinct longs, doubles, 16-byte decimals and timestamps go PLAIN from the first page of each
  // row group; the strings (1000 values) keep their dictionary.
  TypePtr schema = *DataType::Struct({
      {"int64", DataType::Long(), false},
      {"f64", DataType::Double()},
      {"dec38", *DataType::Decimal(38, 12)},
      {"text", DataType::String()},
      {"ts", DataType::Timestamp()},
  });
  WriterOptions options;
  options.max_row_group_rows = 20000;
  ASSERT_NO_FATAL_FAILURE(ExpectSameRows(schema, 40000, 9, options));

  bool ok = false;
  std::string error;
  std::vector<std::string> chunks = DuckDbRows(
      {"SELECT row_group_id, row_group_num_rows, path_in_schema, encodings, dictionary_page_offset IS NOT NULL "
       "FROM parquet_metadata('" + dir_.Join("sluice.parquet") + "') ORDER BY 1, 3"},
      &ok, &error);
  ASSERT_TRUE(ok) << error;
  std::vector<std::string> expected;
  for (const char* group : {"0", "1"}) {
    const std::string prefix = std::string("[\"") + group + "\",\"20000\",";
    expected.push_back(prefix + "\"dec38\",\"PLAIN, RLE\",false]");
    expected.push_back(prefix + "\"f64\",\"PLAIN, RLE\",false]");
    expected.push_back(prefix + "\"int64\",\"PLAIN\",false]");
    expected.push_back(prefix + "\"text\",\"PLAIN, RLE, RLE_DICTIONARY\",true]");
    expected.push_back(prefix + "\"ts\",\"PLAIN, RLE\",false]");
  }
  EXPECT_EQ(chunks, expected);
}

}  // namespace
}  // namespace sluice::parquet
