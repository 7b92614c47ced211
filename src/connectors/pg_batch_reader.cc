#include "sluice/connectors/pg_batch_reader.h"

#include <libpq-fe.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <mutex>
#include <thread>

#include "sluice/connectors/pg_binary.h"
#include "sluice/connectors/pg_connection.h"
#include "sluice/connectors/pg_types.h"
#include "sluice/core/builder.h"
#include "sluice/core/error_classes.h"
#include "sluice/core/logging.h"

namespace sluice::connectors {

namespace {

struct ResultDeleter {
  void operator()(PGresult* r) const { PQclear(r); }
};
using ResultPtr = std::unique_ptr<PGresult, ResultDeleter>;

std::string ServerMessage(PGconn* conn, const PGresult* result) {
  std::string message = result ? PQresultErrorMessage(result) : "";
  if (message.empty()) message = PQerrorMessage(conn);
  while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) message.pop_back();
  const char* state = result ? PQresultErrorField(result, PG_DIAG_SQLSTATE) : nullptr;
  if (state != nullptr) message += std::string(" (SQLSTATE ") + state + ")";
  return message;
}

Status ServerFailure(PGconn* conn, std::string_view what, const PGresult* result) {
  std::string_view error_class = PQstatus(conn) == CONNECTION_OK ? errors::kPgQueryFailed : errors::kPgConnectionFailed;
  return Status::Error(error_class, std::string(what) + ": " + ServerMessage(conn, result));
}

Status InvalidOptions(std::string message) {
  return Status::Error(errors::kInvalidOptions, "postgresql batch read: " + message);
}

// The statement whose rows the read returns, before partitioning.
Result<std::string> BaseQuery(const PgBatchReadOptions& options) {
  if (options.query.has_value() == options.dbtable.has_value()) {
    return InvalidOptions("set exactly one of `query` (a SQL query) and `dbtable` (a table name)");
  }
  if (options.query) {
    std::string query = *options.query;
    while (!query.empty() && (query.back() == ';' || query.back() == ' ' || query.back() == '\n')) query.pop_back();
    if (query.empty()) return InvalidOptions("`query` is empty");
    return query;
  }
  SLUICE_ASSIGN_OR_RETURN(TableName table, ParseTableName(*options.dbtable));
  return "SELECT * FROM " + table.Quoted();
}

// One statement per partition, following Spark's JDBC strides.
Result<std::vector<std::string>> PartitionQueries(const PgBatchReadOptions& options, const std::string& base) {
  bool any = options.partition_column || options.lower_bound || options.upper_bound;
  if (!any) {
    if (options.num_partitions < 1) return InvalidOptions("`num_partitions` must be at least 1");
    if (options.num_partitions != 1 && !options.dbtable) {
      return InvalidOptions("`num_partitions` with a `query` needs `partition_column`, `lower_bound` and "
                            "`upper_bound` (a `dbtable` is split by block ranges without them)");
    }
    // A dbtable's block ranges are known once connected (BlockRangeQueries).
    return std::vector<std::string>{base};
  }
  if (!options.partition_column || !options.lower_bound || !options.upper_bound) {
    return InvalidOptions("set all of `partition_column`, `lower_bound` and `upper_bound`, or none");
  }
  if (options.num_partitions < 1) return InvalidOptions("`num_partitions` must be at least 1");
  if (*options.lower_bound > *options.upper_bound) {
    return InvalidOptions("`lower_bound` must not be greater than `upper_bound`");
  }
  if (!IsSimpleIdentifier(*options.partition_column)) {
    return Status::Error(errors::kInvalidArgument, "partition column `" + *options.partition_column +
                                                      "` is not a simple identifier (a letter or underscore, then "
                                                      "letters, digits or underscores)");
  }
  int64_t lower = *options.lower_bound;
  int64_t upper = *options.upper_bound;
  // Like Spark: never more partitions than distinct values in the range.
  int64_t partitions = std::min<int64_t>(options.num_partitions, std::max<int64_t>(1, upper - lower));
  std::string wrapped = "SELECT * FROM (" + base + ") AS sluice_partitioned";
  if (partitions == 1) return std::vector<std::string>{wrapped};
  std::string column = QuoteIdentifier(*options.partition_column);
  int64_t stride = upper / partitions - lower / partitions;
  std::vector<std::string> queries;
  int64_t bound = lower;
  for (int64_t i = 0; i < partitions; ++i) {
    std::string low = column + " >= " + std::to_string(bound);
    bound += stride;
    std::string high = column + " < " + std::to_string(bound);
    if (i == 0) {
      queries.push_back(wrapped + " WHERE " + high + " OR " + column + " IS NULL");
    } else if (i == partitions - 1) {
      queries.push_back(wrapped + " WHERE " + low);
    } else {
      queries.push_back(wrapped + " WHERE " + low + " AND " + high);
    }
  }
  return queries;
}

// A whole table split into `partitions` ranges of its blocks (ctid ranges, read by a TID range
// scan on PostgreSQL 14 and later): the table's size in blocks divided evenly, the last range open
// so that blocks added since the size was read are read too. One query when the table is small or
// the server older than 14 (where every range would scan the whole table).
// `blocks` is the size to divide, or unset for the table's size now (which it is set to).
Result<std::vector<std::string>> BlockRangeQueries(PgConnection* conn, const std::string& table, const std::string& base,
                                                   int partitions, std::optional<int64_t>* blocks_to_divide) {
  // The name is quoted simple identifiers (ParseTableName), so it holds no quote of its own.
  SLUICE_ASSIGN_OR_RETURN(PgRows rows,
                          conn->Query("SELECT current_setting('server_version_num')::int, pg_relation_size('" + table +
                                      "'::regclass) / current_setting('block_size')::int"));
  if (rows.size() != 1 || !rows[0][0] || !rows[0][1]) {
    return Status::Error(errors::kPgQueryFailed, "cannot read the size of " + table);
  }
  const int64_t version = std::stoll(*rows[0][0]);
  if (version < 140000) {
    LogWarn("postgresql batch read: {} is read over one connection: splitting a table by block ranges needs "
            "PostgreSQL 14 or later (the server is {})",
            table, version);
    blocks_to_divide->reset();
    return std::vector<std::string>{base};
  }
  if (!*blocks_to_divide) *blocks_to_divide = std::stoll(*rows[0][1]);
  const int64_t blocks = **blocks_to_divide;
  const int64_t ranges = std::min<int64_t>(partitions, std::max<int64_t>(1, blocks));
  if (ranges == 1) return std::vector<std::string>{base};
  const int64_t stride = (blocks + ranges - 1) / ranges;
  auto tid = [](int64_t block) { return "'(" + std::to_string(block) + ",0)'::tid"; };
  std::vector<std::string> queries;
  for (int64_t i = 0; i < ranges; ++i) {
    if (i == 0) {
      queries.push_back(base + " WHERE ctid < " + tid(stride));
    } else if (i == ranges - 1) {
      queries.push_back(base + " WHERE ctid >= " + tid(i * stride));
    } else {
      queries.push_back(base + " WHERE ctid >= " + tid(i * stride) + " AND ctid < " + tid((i + 1) * stride));
    }
  }
  return queries;
}

}  // namespace

struct PgBatchReader::State {
  PgBatchReadOptions options;
  // Described the result; reads it when it is not split, else holds the partitions' snapshot.
  std::unique_ptr<PgConnection> first;
  TypePtr schema;
  std::vector<PgColumnMapping> mappings;
  std::vector<PgBinaryKind> binary_kinds;  // how each column's binary values are read
  // Columns cast to text whose text is parsed (AppendPgText) rather than kept as it is: arrays.
  std::vector<bool> parse_text;
  // The select list around a partition query that casts the columns without a binary decoding to
  // text; empty when every column has one and the partition query is copied as it is.
  std::string text_casts;
  std::vector<std::string> queries;
  // The snapshot the partitions of a split read import, exported by `first`'s open transaction;
  // empty until the first ReadPartitions of a split read.
  std::string snapshot;
};

namespace {

// Learns the result's columns by preparing and describing the statement (nothing runs).
Status Describe(PgConnection* conn, const std::string& query, PgBatchReader::State* state) {
  PGconn* raw = conn->raw();
  ResultPtr prepared(PQprepare(raw, "sluice_batch_read", query.c_str(), 0, nullptr));
  if (PQresultStatus(prepared.get()) != PGRES_COMMAND_OK) {
    return ServerFailure(raw, "the postgresql batch read query failed", prepared.get());
  }
  ResultPtr described(PQdescribePrepared(raw, "sluice_batch_read"));
  if (PQresultStatus(described.get()) != PGRES_COMMAND_OK) {
    return ServerFailure(raw, "describing the postgresql batch read query failed", described.get());
  }
  int columns = PQnfields(described.get());
  std::vector<std::optional<std::string>> oid_list{std::string("{")};
  for (int c = 0; c < columns; ++c) {
    *oid_list[0] += (c ? "," : "") + std::to_string(PQftype(described.get(), c));
  }
  *oid_list[0] += "}";
  SLUICE_ASSIGN_OR_RETURN(PgRows enums,
                          conn->Query("SELECT oid::int8 FROM pg_catalog.pg_type WHERE typtype = 'e' AND oid = ANY($1::oid[])",
                                      oid_list));
  std::vector<Field> fields;
  std::string select_list;
  bool any_cast = false;
  for (int c = 0; c < columns; ++c) {
    uint32_t oid = PQftype(described.get(), c);
    bool is_enum = false;
    for (const auto& row : enums) is_enum |= row[0] && *row[0] == std::to_string(oid);
    state->mappings.push_back(MapPgType(oid, PQfmod(described.get(), c), is_enum));
    std::string name = PQfname(described.get(), c);
    std::optional<PgBinaryKind> kind = PgBinaryKindFor(oid, is_enum, state->mappings.back());
    select_list += (c ? ", " : "") + QuoteIdentifier(name) + (kind ? "" : "::text");
    any_cast |= !kind;
    // A text cast is sent as its text: the bytes are the value, or, for an array, its text form.
    state->binary_kinds.push_back(kind.value_or(PgBinaryKind::kBytes));
    state->parse_text.push_back(!kind && state->mappings.back().text_kind != PgTextKind::kText);
    fields.push_back(Field{std::move(name), state->mappings.back().type, true});
  }
  if (any_cast) state->text_casts = std::move(select_list);
  SLUICE_RETURN_IF_ERROR(conn->Execute("DEALLOCATE sluice_batch_read"));
  SLUICE_ASSIGN_OR_RETURN(state->schema, DataType::Struct(std::move(fields)));
  return Status::OK();
}

// The binary COPY stream's fixed signature, which starts its header.
constexpr std::string_view kCopySignature{"PGCOPY\n\377\r\n\0", 11};

int32_t ReadInt32(const char* at) {
  return static_cast<int32_t>((uint32_t{static_cast<uint8_t>(at[0])} << 24) |
                              (uint32_t{static_cast<uint8_t>(at[1])} << 16) |
                              (uint32_t{static_cast<uint8_t>(at[2])} << 8) | uint32_t{static_cast<uint8_t>(at[3])});
}

int16_t ReadInt16(const char* at) {
  return static_cast<int16_t>((uint16_t{static_cast<uint8_t>(at[0])} << 8) | uint16_t{static_cast<uint8_t>(at[1])});
}

Status Malformed(std::string_view what) {
  return Status::Error(errors::kPgQueryFailed, "the server's binary COPY data is malformed: " + std::string(what));
}

// The most bytes a string or binary column's builder reserves for a batch before filling it.
constexpr int64_t kMaxReservedBytes = int64_t{1} << 30;
// The rows a batch's columns have room for at first; a larger batch_size grows them as rows come.
constexpr int64_t kInitialRows = int64_t{1} << 16;

// The buffers of columns a reader made, handed back when the columns die (on whichever thread
// drops them last, typically the sink's), so that later batches are filled in memory that is
// already mapped and sized rather than in fresh pages the kernel must fault in and zero.
// Thread-safe; keeps a bounded number of buffers.
class BufferPool {
 public:
  // A buffer of at least `size` bytes of room (its contents are stale), or an empty one.
  std::vector<uint8_t> TakeBytes(size_t size) { return Take(&bytes_, size); }
  std::vector<int64_t> TakeOffsets(size_t size) { return Take(&offsets_, size); }

  // `column` as a ColumnPtr whose data and offsets come back to `pool` when it dies.
  static ColumnPtr Recycling(const std::shared_ptr<BufferPool>& pool, std::unique_ptr<Column> column) {
    return ColumnPtr(column.release(), [pool](const Column* dead) {
      std::unique_ptr<Column> owned(const_cast<Column*>(dead));
      pool->Give(&owned->data, &owned->offsets);
    });
  }

 private:
  // Several batches in flight, a handful of columns each.
  static constexpr size_t kMaxKept = 32;

  template <typename T>
  std::vector<T> Take(std::vector<std::vector<T>>* kept, size_t size) {
    std::lock_guard lock(mutex_);
    for (auto it = kept->begin(); it != kept->end(); ++it) {
      if (it->capacity() >= size) {
        std::vector<T> buffer = std::move(*it);
        kept->erase(it);
        return buffer;
      }
    }
    return {};
  }

  void Give(std::vector<uint8_t>* data, std::vector<int64_t>* offsets) {
    std::lock_guard lock(mutex_);
    if (data->capacity() > 0 && bytes_.size() < kMaxKept) bytes_.push_back(std::move(*data));
    if (offsets->capacity() > 0 && offsets_.size() < kMaxKept) offsets_.push_back(std::move(*offsets));
  }

  std::mutex mutex_;
  std::vector<std::vector<uint8_t>> bytes_;
  std::vector<std::vector<int64_t>> offsets_;
};

// Streams one `COPY (query) TO STDOUT (FORMAT binary)` into batches, decoding every field
// straight into its column's buffers.
class CopyReader {
 public:
  CopyReader(const PgBatchReader::State& state, PgConnection* conn)
      : state_(state), conn_(conn), pool_(std::make_shared<BufferPool>()) {}

  Status Run(const std::string& query, const std::function<Status(BatchPtr)>& emit) {
    PGconn* raw = conn_->raw();
    std::string copied =
        state_.text_casts.empty() ? query : "SELECT " + state_.text_casts + " FROM (" + query + ") AS sluice_binary";
    ResultPtr started(PQexec(raw, ("COPY (" + copied + ") TO STDOUT (FORMAT binary)").c_str()));
    if (PQresultStatus(started.get()) != PGRES_COPY_OUT) {
      return ServerFailure(raw, "the postgresql batch read query failed", started.get());
    }
    NewBuilders();
    char* data = nullptr;
    int size;
    while ((size = PQgetCopyData(raw, &data, 0)) > 0) {
      Status parsed = ParseMessage(std::string_view(data, static_cast<size_t>(size)), emit);
      PQfreemem(data);
      // The rest of the stream is not read: the reader is spent, and closing its connection
      // ends the server's COPY.
      SLUICE_RETURN_IF_ERROR(parsed);
    }
    if (size == -2) return ServerFailure(raw, "reading the postgresql batch read result failed", nullptr);
    Status status;
    while (PGresult* raw_result = PQgetResult(raw)) {
      ResultPtr result(raw_result);
      if (status.ok() && PQresultStatus(raw_result) != PGRES_COMMAND_OK) {
        status = ServerFailure(raw, "the postgresql batch read query failed", raw_result);
      }
    }
    SLUICE_RETURN_IF_ERROR(status);
    if (!trailer_read_) return Malformed("the stream ends before its trailer");
    if (rows_ > 0) return Flush(emit);
    return Status::OK();
  }

 private:
  // One result column of the batch being filled. Fixed-width kinds are decoded straight into
  // the column's own buffer, and so are kBytes values (into bytes and offsets): no builder, so
  // no copy when the batch is handed on. The other kinds go through a builder.
  struct Slot {
    int width = 0;  // PgBinaryWidth; 0 for a variable-width column
    bool raw_bytes = false;  // kBytes: the value is its bytes as sent
    bool parse_text = false;  // the value is a text form read by AppendPgText
    std::vector<uint8_t> data;
    std::vector<int64_t> offsets;   // raw_bytes: rows + 1 offsets into data
    std::vector<uint8_t> validity;  // empty until the batch's first null
    int64_t nulls = 0;
    std::unique_ptr<ColumnBuilder> builder;
    int64_t value_bytes = 0;  // variable-width columns: bytes to reserve for a batch
  };

  // Fresh columns for the next batch, in buffers the pool hands back where it has them.
  // Fixed-width ones hold room for a full batch (up to kInitialRows, then they double); string
  // and binary columns get as many bytes as the previous batch's held, so they rarely grow (a
  // copy) while filling.
  void NewBuilders() {
    slots_.resize(state_.mappings.size());
    const int64_t rows = std::min(state_.options.batch_size, kInitialRows);
    for (size_t c = 0; c < slots_.size(); ++c) {
      Slot& slot = slots_[c];
      slot.width = PgBinaryWidth(state_.binary_kinds[c]);
      slot.parse_text = state_.parse_text[c];
      slot.raw_bytes = state_.binary_kinds[c] == PgBinaryKind::kBytes && !slot.parse_text;
      slot.validity.clear();
      slot.nulls = 0;
      if (slot.width > 0) {
        const auto size = static_cast<size_t>(rows * slot.width);
        slot.data = pool_->TakeBytes(size);
        // A recycled buffer keeps its length: only a fresh one is cleared here.
        if (slot.data.size() < size) slot.data.resize(size);
        continue;
      }
      if (slot.raw_bytes) {
        slot.data = pool_->TakeBytes(static_cast<size_t>(slot.value_bytes));
        slot.data.clear();
        slot.data.reserve(static_cast<size_t>(slot.value_bytes));
        slot.offsets = pool_->TakeOffsets(static_cast<size_t>(rows + 1));
        slot.offsets.clear();
        slot.offsets.reserve(static_cast<size_t>(rows + 1));
        slot.offsets.push_back(0);
        continue;
      }
      slot.builder = ColumnBuilder::Make(state_.mappings[c].type);
      slot.builder->Reserve(rows);
      if (slot.value_bytes > 0) static_cast<BinaryBuilder*>(slot.builder.get())->ReserveBytes(slot.value_bytes);
    }
    rows_ = 0;
  }

  // Where row rows_ of a fixed-width column goes, growing its buffer when full.
  uint8_t* FixedValue(Slot& slot) {
    const size_t at = static_cast<size_t>(rows_ * slot.width);
    if (at + slot.width > slot.data.size()) slot.data.resize(slot.data.size() * 2);
    return slot.data.data() + at;
  }

  void MarkNull(Slot& slot) {
    const auto row = static_cast<size_t>(rows_);
    if (slot.validity.size() <= row) slot.validity.resize(std::max(row + 1, 2 * slot.validity.size()), 1);
    slot.validity[row] = 0;
    ++slot.nulls;
  }

  // One CopyData message: the server sends the header with the first tuple, then one tuple per
  // message, then the trailer. Tuples are read whole from one message.
  Status ParseMessage(std::string_view data, const std::function<Status(BatchPtr)>& emit) {
    size_t pos = 0;
    if (!header_read_) {
      if (data.size() < 19 || data.substr(0, 11) != kCopySignature) return Malformed("no binary COPY header");
      if (ReadInt32(data.data() + 11) & (1 << 16)) return Malformed("the rows carry OIDs");
      const int32_t extension = ReadInt32(data.data() + 15);
      if (extension < 0 || static_cast<size_t>(extension) > data.size() - 19) return Malformed("a truncated header");
      pos = 19 + static_cast<size_t>(extension);
      header_read_ = true;
    }
    while (pos < data.size()) {
      if (trailer_read_) return Malformed("data after the trailer");
      if (data.size() - pos < 2) return Malformed("a truncated tuple");
      const int16_t fields = ReadInt16(data.data() + pos);
      pos += 2;
      if (fields == -1) {
        trailer_read_ = true;
        continue;
      }
      if (static_cast<size_t>(fields) != slots_.size()) {
        return Malformed("a tuple of " + std::to_string(fields) + " fields in a result of " +
                         std::to_string(slots_.size()) + " columns");
      }
      for (size_t c = 0; c < slots_.size(); ++c) {
        Slot& slot = slots_[c];
        if (data.size() - pos < 4) return Malformed("a truncated tuple");
        const int32_t length = ReadInt32(data.data() + pos);
        pos += 4;
        if (length == -1) {
          if (slot.raw_bytes) {
            slot.offsets.push_back(static_cast<int64_t>(slot.data.size()));
            MarkNull(slot);
          } else if (slot.width == 0) {
            slot.builder->AppendNull();
          } else {
            std::memset(FixedValue(slot), 0, static_cast<size_t>(slot.width));
            MarkNull(slot);
          }
          continue;
        }
        if (length < 0 || static_cast<size_t>(length) > data.size() - pos) return Malformed("a truncated field");
        const std::string_view bytes = data.substr(pos, static_cast<size_t>(length));
        const int scale = state_.mappings[c].type->scale();
        Status appended;
        if (slot.raw_bytes) {
          const auto* first = reinterpret_cast<const uint8_t*>(bytes.data());
          slot.data.insert(slot.data.end(), first, first + bytes.size());
          slot.offsets.push_back(static_cast<int64_t>(slot.data.size()));
        } else if (slot.parse_text) {
          appended = AppendPgText(state_.mappings[c], bytes, slot.builder.get());
        } else if (slot.width == 0) {
          appended = AppendPgBinary(state_.binary_kinds[c], scale, bytes, slot.builder.get());
        } else {
          bool is_null;
          appended = DecodePgBinaryFixed(state_.binary_kinds[c], scale, bytes, FixedValue(slot), &is_null);
          if (appended.ok() && is_null) MarkNull(slot);
        }
        if (!appended.ok()) {
          return Status::Error(appended.error_class(), "column `" + state_.schema->field(static_cast<int>(c)).name +
                                                           "`: " + std::string(appended.message()));
        }
        pos += static_cast<size_t>(length);
      }
      if (++rows_ == state_.options.batch_size) SLUICE_RETURN_IF_ERROR(Flush(emit));
    }
    return Status::OK();
  }

  Status Flush(const std::function<Status(BatchPtr)>& emit) {
    std::vector<ColumnPtr> columns;
    for (size_t c = 0; c < slots_.size(); ++c) {
      Slot& slot = slots_[c];
      if (slot.width > 0 || slot.raw_bytes) {
        auto column = std::make_unique<Column>();
        column->type = state_.mappings[c].type;
        column->length = rows_;
        column->null_count = slot.nulls;
        if (slot.width > 0) slot.data.resize(static_cast<size_t>(rows_ * slot.width));
        if (slot.raw_bytes) slot.value_bytes = ValueBytesAhead(static_cast<int64_t>(slot.data.size()));
        column->data = std::move(slot.data);
        column->offsets = std::move(slot.offsets);
        if (!slot.validity.empty()) {
          slot.validity.resize(static_cast<size_t>(rows_), 1);
          column->validity = std::move(slot.validity);
        }
        columns.push_back(BufferPool::Recycling(pool_, std::move(column)));
        continue;
      }
      columns.push_back(slot.builder->Finish());
      TypeId id = columns.back()->type->id();
      if (id == TypeId::kString || id == TypeId::kBinary) {
        slot.value_bytes = ValueBytesAhead(static_cast<int64_t>(columns.back()->data.size()));
      }
    }
    SLUICE_ASSIGN_OR_RETURN(BatchPtr batch, RecordBatch::Make(state_.schema, std::move(columns), rows_));
    NewBuilders();
    return emit(std::move(batch));
  }

  // The bytes to reserve for a string or binary column after a batch of rows_ rows held
  // `batch_bytes`: a partial batch may be followed by a full one, so its bytes per row are scaled
  // up to a full batch, never reserving more than kMaxReservedBytes ahead.
  int64_t ValueBytesAhead(int64_t batch_bytes) const {
    const int64_t per_row = batch_bytes / rows_ + 1;
    int64_t full;
    if (__builtin_mul_overflow(per_row, state_.options.batch_size, &full)) full = kMaxReservedBytes;
    return std::min(full, kMaxReservedBytes);
  }

  const PgBatchReader::State& state_;
  PgConnection* conn_;
  std::shared_ptr<BufferPool> pool_;
  std::vector<Slot> slots_;
  int64_t rows_ = 0;
  bool header_read_ = false;
  bool trailer_read_ = false;
};

// A snapshot id as pg_export_snapshot() prints it (hex digits and dashes): checked before it is
// written into SET TRANSACTION SNAPSHOT, which takes no parameters.
bool IsSnapshotId(const std::string& id) {
  if (id.empty() || id.size() > 64) return false;
  for (char c : id) {
    if (!std::isxdigit(static_cast<unsigned char>(c)) && c != '-') return false;
  }
  return true;
}

}  // namespace

PgBatchReader::PgBatchReader(std::unique_ptr<State> state) : state_(std::move(state)) {}
PgBatchReader::~PgBatchReader() = default;

const TypePtr& PgBatchReader::schema() const { return state_->schema; }
const std::vector<std::string>& PgBatchReader::partition_queries() const { return state_->queries; }

Result<std::unique_ptr<PgBatchReader>> PgBatchReader::Open(PgBatchReadOptions options) {
  if (options.batch_size < 1) return InvalidOptions("the batch size must be at least 1");
  SLUICE_ASSIGN_OR_RETURN(std::string base, BaseQuery(options));
  auto state = std::make_unique<State>();
  SLUICE_ASSIGN_OR_RETURN(state->queries, PartitionQueries(options, base));
  state->options = std::move(options);
  SLUICE_ASSIGN_OR_RETURN(state->first, PgConnection::Connect(state->options.conninfo));
  if (state->options.dbtable && !state->options.partition_column && state->options.num_partitions > 1) {
    SLUICE_ASSIGN_OR_RETURN(TableName table, ParseTableName(*state->options.dbtable));
    SLUICE_ASSIGN_OR_RETURN(state->queries, BlockRangeQueries(state->first.get(), table.Quoted(), base,
                                                              state->options.num_partitions,
                                                              &state->options.table_blocks));
  } else {
    state->options.table_blocks.reset();
  }
  SLUICE_RETURN_IF_ERROR(Describe(state->first.get(), state->queries[0], state.get()));
  return std::unique_ptr<PgBatchReader>(new PgBatchReader(std::move(state)));
}

size_t PgBatchReader::partition_count() const { return state_->queries.size(); }
std::optional<int64_t> PgBatchReader::table_blocks() const { return state_->options.table_blocks; }

Status PgBatchReader::Read(const PgBatchConsumer& consume) { return ReadPartitions(0, state_->queries.size(), consume); }

Status PgBatchReader::ReadPartitions(size_t begin, size_t end, const PgBatchConsumer& consume) {
  if (begin >= end || end > state_->queries.size()) {
    return Status::Error(errors::kInvalidArgument, fmt::format("no partitions [{}, {}) among {}", begin, end,
                                                               state_->queries.size()));
  }
  if (state_->queries.size() == 1) {
    CopyReader reader(*state_, state_->first.get());
    return reader.Run(state_->queries[0], consume);
  }
  // The first connection exports its snapshot and keeps it; each partition's connection imports
  // it before reading.
  if (state_->snapshot.empty()) {
    SLUICE_RETURN_IF_ERROR(state_->first->Execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"));
    SLUICE_ASSIGN_OR_RETURN(PgRows exported, state_->first->Query("SELECT pg_export_snapshot()"));
    if (exported.size() != 1 || !exported[0][0] || !IsSnapshotId(*exported[0][0])) {
      return Status::Error(errors::kPgQueryFailed, "the server did not export a usable snapshot");
    }
    state_->snapshot = *exported[0][0];
  }
  std::vector<std::unique_ptr<PgConnection>> connections;
  for (size_t i = begin; i < end; ++i) {
    SLUICE_ASSIGN_OR_RETURN(auto conn, PgConnection::Connect(state_->options.conninfo));
    SLUICE_RETURN_IF_ERROR(conn->Execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; SET TRANSACTION SNAPSHOT '" +
                                         state_->snapshot + "'"));
    connections.push_back(std::move(conn));
  }
  std::mutex consume_mutex;
  Status consumer_status;  // once the consumer fails, every partition stops handing it batches
  auto emit = [&](BatchPtr batch) {
    std::lock_guard<std::mutex> lock(consume_mutex);
    if (consumer_status.ok()) consumer_status = consume(std::move(batch));
    return consumer_status;
  };
  std::vector<Status> statuses(end - begin);
  std::vector<std::thread> threads;
  for (size_t i = begin + 1; i < end; ++i) {
    threads.emplace_back([&, i] {
      CopyReader reader(*state_, connections[i - begin].get());
      statuses[i - begin] = reader.Run(state_->queries[i], emit);
    });
  }
  CopyReader reader(*state_, connections[0].get());
  statuses[0] = reader.Run(state_->queries[begin], emit);
  for (auto& thread : threads) thread.join();
  for (const auto& status : statuses) SLUICE_RETURN_IF_ERROR(status);
  for (auto& conn : connections) SLUICE_RETURN_IF_ERROR(conn->Execute("COMMIT"));
  if (end < state_->queries.size()) return Status::OK();
  // The exporting transaction ends last.
  state_->snapshot.clear();
  return state_->first->Execute("COMMIT");
}

Result<std::vector<BatchPtr>> ReadPostgres(PgBatchReadOptions options) {
  SLUICE_ASSIGN_OR_RETURN(auto reader, PgBatchReader::Open(std::move(options)));
  std::vector<BatchPtr> batches;
  SLUICE_RETURN_IF_ERROR(reader->Read([&](BatchPtr batch) {
    batches.push_back(std::move(batch));
    return Status::OK();
  }));
  return batches;
}

}  // namespace sluice::connectors
