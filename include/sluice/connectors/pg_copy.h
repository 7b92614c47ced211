// Record batches as PostgreSQL binary COPY data, and the PostgreSQL column types sluice creates
// for its types.
//
//   boolean -> boolean        byte, short -> smallint     integer -> integer   long -> bigint
//   float -> real             double -> double precision  decimal(p,s) -> numeric(p,s)
//   string -> text            binary -> bytea             date -> date
//   timestamp -> timestamptz  timestamp_ntz -> timestamp
//   array of one of the types above -> that type's array (integer[], text[], ...)
//   struct, map, array of a nested type -> jsonb
//
// Binary COPY needs the target column to be exactly that type; callers COPY into a table whose
// columns they created (or checked) with PgColumnType. An array column that an existing table
// holds as jsonb (a table created before arrays became PostgreSQL arrays) is sent as
// jsonb instead: PgArraysHeldAsJsonb finds those columns. A PgCopyEncoder reuses its buffers and
// is used by one thread at a time.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "sluice/core/record_batch.h"

namespace sluice::connectors {

// The PostgreSQL type sluice uses for a column of `type`, as SQL text ("numeric(10,2)",
// "integer[]"); "jsonb" for an array when `array_as_jsonb`.
std::string PgColumnType(const DataType& type, bool array_as_jsonb = false);

// Whether sluice sends a column of `type` as a PostgreSQL array: an array of a scalar type.
bool IsPgNativeArray(const DataType& type);

class PgCopyEncoder {
 public:
  // `arrays_as_jsonb[i]`: batch column i, a native array type, goes to a jsonb column and
  // is sent as jsonb. Empty: every array as PgColumnType gives it.
  explicit PgCopyEncoder(std::vector<bool> arrays_as_jsonb = {}) : arrays_as_jsonb_(std::move(arrays_as_jsonb)) {}

  // The fixed header that starts a binary COPY stream.
  static void AppendHeader(std::string* out);
  // The trailer that ends it.
  static void AppendTrailer(std::string* out);

  // Appends the given rows of the batch (in that order), one COPY tuple per row holding the
  // batch's columns `columns` in that order. Arrays of scalars are PostgreSQL arrays (one
  // dimension, lower bound 1, null elements kept). Other nested values (struct, map, array of a
  // nested type, and arrays sent as jsonb) become jsonb with
  // the text of AppendValueJson, decimals bare (jsonb keeps them exact): a NaN or an infinity
  // inside them, which JSON cannot hold, is the string "NaN", "Infinity" or "-Infinity", as
  // Spark's to_json writes it.
  void AppendRows(const RecordBatch& batch, std::span<const int> columns, std::span<const int64_t> rows,
                  std::string* out);

 private:
  // One column encoded field by field: bytes of every field (length word included) and where
  // each field starts.
  struct EncodedColumn {
    std::string bytes;
    std::vector<uint32_t> starts;
  };
  static void EncodeColumn(const Column& column, std::span<const int64_t> rows, bool as_jsonb, EncodedColumn* out);
  static void EncodeArray(const Column& column, std::span<const int64_t> rows, EncodedColumn* out);

  std::vector<bool> arrays_as_jsonb_;
  std::vector<EncodedColumn> scratch_;
};

}  // namespace sluice::connectors
