// The Apache Arrow C Data Interface: how batches cross between sluice and another Arrow
// implementation in the same process (pyarrow, pandas through pyarrow, DuckDB, Polars) with no
// library between them. The three structs are the interface's ABI, as its specification defines
// them (https://arrow.apache.org/docs/format/CDataInterface.html and CStreamInterface.html).
//
// Types: boolean b, byte c, short s, integer i, long l, float f, double g, decimal(p,s) d:p,s
// (decimal128), string U (large_string: sluice's offsets are 64-bit), binary Z (large_binary),
// date tdD, timestamp tsu:UTC, timestamp_ntz tsu: (no zone), struct +s, array +L (large_list),
// map +m (an `entries` struct of `key` and `value`, with 32-bit offsets: Arrow has no 64-bit map).
//
// Export is zero-copy for every values buffer, string/binary bytes and offsets, array offsets and
// decimals: the exported arrays hold references to sluice's (immutable) columns, kept alive until
// the consumer calls release. Three buffers are made by the export because Arrow lays them out
// differently: validity (sluice has a byte per row, Arrow a bit), boolean values (likewise) and
// map offsets (32-bit). A consumer may release a child array before its parent, as the
// specification allows.
//
// Import copies into sluice columns (sluice's buffers are its own vectors) and accepts, besides
// the formats above, what producers commonly hand out: string/binary/list with 32-bit offsets
// (u, z, +l), string and binary views (vu, vz), unsigned integers (C, S, I widened to the next
// signed type; L as decimal(20,0)), half floats (e), date64 (tdm), timestamps in s/ms/us/ns with
// any zone (a zone makes it a timestamp, none a timestamp_ntz; ns are truncated to µs), null (n,
// as a string column of nulls), and array offsets at every level. A struct child of a null row
// becomes null, as sluice's columns require. Anything else (dictionaries, unions, intervals,
// 256-bit decimals, run-end encoding) is NOT_IMPLEMENTED naming the field and its format; a
// malformed array (a missing buffer, an offset outside its child, a null where the schema forbids
// none) is INVALID_ARGUMENT. Import never takes ownership of what it reads: the caller releases
// the schema and array it passed (ImportStream releases the stream and what it produced).
//
// All functions are thread-safe; exported structs may be released from any thread.
#pragma once

#include <cstdint>
#include <vector>

#include "sluice/core/record_batch.h"
#include "sluice/core/status.h"

extern "C" {

#ifndef ARROW_C_DATA_INTERFACE
#define ARROW_C_DATA_INTERFACE

#define ARROW_FLAG_DICTIONARY_ORDERED 1
#define ARROW_FLAG_NULLABLE 2
#define ARROW_FLAG_MAP_KEYS_SORTED 4

struct ArrowSchema {
  const char* format;
  const char* name;
  const char* metadata;
  int64_t flags;
  int64_t n_children;
  struct ArrowSchema** children;
  struct ArrowSchema* dictionary;
  void (*release)(struct ArrowSchema*);
  void* private_data;
};

struct ArrowArray {
  int64_t length;
  int64_t null_count;
  int64_t offset;
  int64_t n_buffers;
  int64_t n_children;
  const void** buffers;
  struct ArrowArray** children;
  struct ArrowArray* dictionary;
  void (*release)(struct ArrowArray*);
  void* private_data;
};

#endif  // ARROW_C_DATA_INTERFACE

#ifndef ARROW_C_STREAM_INTERFACE
#define ARROW_C_STREAM_INTERFACE

struct ArrowArrayStream {
  int (*get_schema)(struct ArrowArrayStream*, struct ArrowSchema* out);
  int (*get_next)(struct ArrowArrayStream*, struct ArrowArray* out);
  const char* (*get_last_error)(struct ArrowArrayStream*);
  void (*release)(struct ArrowArrayStream*);
  void* private_data;
};

#endif  // ARROW_C_STREAM_INTERFACE
}

namespace sluice {

// Fills `out` with a struct schema of `schema`'s fields (names, nullability, field metadata).
// `schema` must be a struct type.
void ExportSchema(const TypePtr& schema, ArrowSchema* out);
// Fills `out` with `batch` as a struct array, referencing its columns.
void ExportBatch(const BatchPtr& batch, ArrowArray* out);
// Fills `out` with a stream that yields `batches` (each of `schema`) in order, then ends.
void ExportStream(const TypePtr& schema, std::vector<BatchPtr> batches, ArrowArrayStream* out);

// The sluice schema of a struct ArrowSchema (a record batch's).
Result<TypePtr> ImportSchema(const ArrowSchema& schema);
// The batch `array` holds, `array` described by `schema` (the struct ArrowSchema ImportSchema
// read, which gives the batch's schema `type`).
Result<BatchPtr> ImportBatch(const ArrowSchema& schema, const TypePtr& type, const ArrowArray& array);

struct ImportedStream {
  TypePtr schema;
  std::vector<BatchPtr> batches;
};
// Reads `stream` to its end and releases it (also on error).
Result<ImportedStream> ImportStream(ArrowArrayStream* stream);

}  // namespace sluice
