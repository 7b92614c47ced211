// Serialization and parsing of the parquet.thrift structures in metadata.h. Field ids are those
// of apache/parquet-format's src/main/thrift/parquet.thrift.
#include "sluice/parquet/metadata.h"

#include <string>

#include "parquet/thrift_compact.h"
#include "sluice/core/error_classes.h"

namespace sluice::parquet {

using thrift::CompactReader;
using thrift::CompactWriter;
using thrift::CType;

namespace {

// ---------------------------------------------------------------------------------------------
// Writing

void WriteStatistics(CompactWriter& w, const Statistics& s) {
  if (s.max) w.FieldBinary(1, *s.max);
  if (s.min) w.FieldBinary(2, *s.min);
  if (s.null_count) w.FieldI64(3, *s.null_count);
  if (s.distinct_count) w.FieldI64(4, *s.distinct_count);
  if (s.max_value) w.FieldBinary(5, *s.max_value);
  if (s.min_value) w.FieldBinary(6, *s.min_value);
  if (s.is_max_value_exact) w.FieldBool(7, *s.is_max_value_exact);
  if (s.is_min_value_exact) w.FieldBool(8, *s.is_min_value_exact);
  if (s.nan_count) w.FieldI64(9, *s.nan_count);
}

void WriteEmptyStructField(CompactWriter& w, int16_t id) {
  w.FieldStructBegin(id);
  w.StructEnd();
}

void WriteTimeUnit(CompactWriter& w, int16_t id, TimeUnit unit) {
  w.FieldStructBegin(id);
  WriteEmptyStructField(w, unit == TimeUnit::kMillis ? 1 : unit == TimeUnit::kMicros ? 2 : 3);
  w.StructEnd();
}

// kOther carries nothing that could be written back; it is skipped by the caller.
void WriteLogicalType(CompactWriter& w, const LogicalType& t) {
  using K = LogicalType::Kind;
  switch (t.kind) {
    case K::kString: WriteEmptyStructField(w, 1); break;
    case K::kMap: WriteEmptyStructField(w, 2); break;
    case K::kList: WriteEmptyStructField(w, 3); break;
    case K::kEnum: WriteEmptyStructField(w, 4); break;
    case K::kDecimal:
      w.FieldStructBegin(5);
      w.FieldI32(1, t.scale);
      w.FieldI32(2, t.precision);
      w.StructEnd();
      break;
    case K::kDate: WriteEmptyStructField(w, 6); break;
    case K::kTime:
    case K::kTimestamp:
      w.FieldStructBegin(t.kind == K::kTime ? 7 : 8);
      w.FieldBool(1, t.is_adjusted_to_utc);
      WriteTimeUnit(w, 2, t.unit);
      w.StructEnd();
      break;
    case K::kInteger:
      w.FieldStructBegin(10);
      w.FieldI8(1, t.bit_width);
      w.FieldBool(2, t.is_signed);
      w.StructEnd();
      break;
    case K::kNull: WriteEmptyStructField(w, 11); break;
    case K::kJson: WriteEmptyStructField(w, 12); break;
    case K::kBson: WriteEmptyStructField(w, 13); break;
    case K::kUuid: WriteEmptyStructField(w, 14); break;
    case K::kFloat16: WriteEmptyStructField(w, 15); break;
    case K::kOther: break;
  }
}

void WriteKeyValues(CompactWriter& w, int16_t id, const std::vector<KeyValue>& kvs) {
  w.FieldListBegin(id, CType::kStruct, static_cast<uint32_t>(kvs.size()));
  for (const KeyValue& kv : kvs) {
    w.StructBegin();
    w.FieldBinary(1, kv.key);
    if (kv.value) w.FieldBinary(2, *kv.value);
    w.StructEnd();
  }
}

void WriteSchemaElement(CompactWriter& w, const SchemaElement& e) {
  w.StructBegin();
  if (e.type) w.FieldI32(1, static_cast<int32_t>(*e.type));
  if (e.type_length) w.FieldI32(2, *e.type_length);
  if (e.repetition_type) w.FieldI32(3, static_cast<int32_t>(*e.repetition_type));
  w.FieldBinary(4, e.name);
  if (e.num_children) w.FieldI32(5, *e.num_children);
  if (e.converted_type) w.FieldI32(6, static_cast<int32_t>(*e.converted_type));
  if (e.scale) w.FieldI32(7, *e.scale);
  if (e.precision) w.FieldI32(8, *e.precision);
  if (e.field_id) w.FieldI32(9, *e.field_id);
  if (e.logical_type && e.logical_type->kind != LogicalType::Kind::kOther) {
    w.FieldStructBegin(10);
    WriteLogicalType(w, *e.logical_type);
    w.StructEnd();
  }
  w.StructEnd();
}

void WriteColumnMetaData(CompactWriter& w, const ColumnMetaData& m) {
  w.FieldI32(1, static_cast<int32_t>(m.type));
  w.FieldListBegin(2, CType::kI32, static_cast<uint32_t>(m.encodings.size()));
  for (Encoding e : m.encodings) w.I32(static_cast<int32_t>(e));
  w.FieldListBegin(3, CType::kBinary, static_cast<uint32_t>(m.path_in_schema.size()));
  for (const std::string& p : m.path_in_schema) w.Binary(p);
  w.FieldI32(4, static_cast<int32_t>(m.codec));
  w.FieldI64(5, m.num_values);
  w.FieldI64(6, m.total_uncompressed_size);
  w.FieldI64(7, m.total_compressed_size);
  if (!m.key_value_metadata.empty()) WriteKeyValues(w, 8, m.key_value_metadata);
  w.FieldI64(9, m.data_page_offset);
  if (m.index_page_offset) w.FieldI64(10, *m.index_page_offset);
  if (m.dictionary_page_offset) w.FieldI64(11, *m.dictionary_page_offset);
  if (m.statistics) {
    w.FieldStructBegin(12);
    WriteStatistics(w, *m.statistics);
    w.StructEnd();
  }
  if (!m.encoding_stats.empty()) {
    w.FieldListBegin(13, CType::kStruct, static_cast<uint32_t>(m.encoding_stats.size()));
    for (const PageEncodingStats& s : m.encoding_stats) {
      w.StructBegin();
      w.FieldI32(1, static_cast<int32_t>(s.page_type));
      w.FieldI32(2, static_cast<int32_t>(s.encoding));
      w.FieldI32(3, s.count);
      w.StructEnd();
    }
  }
  if (m.bloom_filter_offset) w.FieldI64(14, *m.bloom_filter_offset);
  if (m.bloom_filter_length) w.FieldI32(15, *m.bloom_filter_length);
}

void WriteColumnChunk(CompactWriter& w, const ColumnChunk& c) {
  w.StructBegin();
  if (c.file_path) w.FieldBinary(1, *c.file_path);
  w.FieldI64(2, c.file_offset);
  if (c.meta_data) {
    w.FieldStructBegin(3);
    WriteColumnMetaData(w, *c.meta_data);
    w.StructEnd();
  }
  if (c.offset_index_offset) w.FieldI64(4, *c.offset_index_offset);
  if (c.offset_index_length) w.FieldI32(5, *c.offset_index_length);
  if (c.column_index_offset) w.FieldI64(6, *c.column_index_offset);
  if (c.column_index_length) w.FieldI32(7, *c.column_index_length);
  w.StructEnd();
}

void WriteRowGroup(CompactWriter& w, const RowGroup& g) {
  w.StructBegin();
  w.FieldListBegin(1, CType::kStruct, static_cast<uint32_t>(g.columns.size()));
  for (const ColumnChunk& c : g.columns) WriteColumnChunk(w, c);
  w.FieldI64(2, g.total_byte_size);
  w.FieldI64(3, g.num_rows);
  if (!g.sorting_columns.empty()) {
    w.FieldListBegin(4, CType::kStruct, static_cast<uint32_t>(g.sorting_columns.size()));
    for (const SortingColumn& s : g.sorting_columns) {
      w.StructBegin();
      w.FieldI32(1, s.column_idx);
      w.FieldBool(2, s.descending);
      w.FieldBool(3, s.nulls_first);
      w.StructEnd();
    }
  }
  if (g.file_offset) w.FieldI64(5, *g.file_offset);
  if (g.total_compressed_size) w.FieldI64(6, *g.total_compressed_size);
  if (g.ordinal) {
    w.FieldHeader(7, CType::kI16);
    w.I32(*g.ordinal);
  }
  w.StructEnd();
}

// ---------------------------------------------------------------------------------------------
// Parsing. Each Parse* function is entered just after its struct's StructBegin and consumes
// fields up to and including the stop byte.

Status Bad(std::string_view where, std::string_view what) {
  return Status::Error(errors::kParquetCorruptFile, "bad Parquet metadata: " + std::string(where) + ": " + std::string(what));
}

Status Missing(std::string_view where, std::string_view field) {
  return Bad(where, "required field '" + std::string(field) + "' is missing");
}

Status WrongType(std::string_view where, int16_t id) {
  return Bad(where, "field " + std::to_string(id) + " has an unexpected Thrift type");
}

class Parser {
 public:
  explicit Parser(std::string_view bytes) : r_(bytes) {}
  CompactReader& reader() { return r_; }

  template <typename Fn>
  Status Struct(Fn&& on_field) {
    SLUICE_RETURN_IF_ERROR(r_.StructBegin());
    while (true) {
      int16_t id;
      CType type;
      SLUICE_RETURN_IF_ERROR(r_.ReadFieldHeader(&id, &type));
      if (type == CType::kStop) break;
      bool handled = false;
      SLUICE_RETURN_IF_ERROR(on_field(id, type, &handled));
      if (!handled) SLUICE_RETURN_IF_ERROR(r_.Skip(type));
    }
    r_.StructEnd();
    return Status::OK();
  }

  Status I32(std::string_view where, int16_t id, CType type, int32_t* out) {
    if (type != CType::kI32) return WrongType(where, id);
    return r_.ReadI32(out);
  }
  Status I64(std::string_view where, int16_t id, CType type, int64_t* out) {
    if (type != CType::kI64 && type != CType::kI32) return WrongType(where, id);
    return r_.ReadI64(out);
  }
  // Optional fields of an unexpected type are skipped, as Thrift's generated readers skip them
  // (the field stays unset); a required one is refused, since the struct cannot be read without it.
  template <typename T>
  Status OptI32(std::string_view where, int16_t id, CType type, std::optional<T>* out) {
    if (type != CType::kI32) return r_.Skip(type);
    int32_t v;
    SLUICE_RETURN_IF_ERROR(I32(where, id, type, &v));
    *out = static_cast<T>(v);
    return Status::OK();
  }
  Status OptI64(std::string_view where, int16_t id, CType type, std::optional<int64_t>* out) {
    if (type != CType::kI64 && type != CType::kI32) return r_.Skip(type);
    int64_t v;
    SLUICE_RETURN_IF_ERROR(I64(where, id, type, &v));
    *out = v;
    return Status::OK();
  }
  Status Binary(std::string_view where, int16_t id, CType type, std::string* out) {
    if (type != CType::kBinary) return WrongType(where, id);
    return r_.ReadBinary(out);
  }
  Status OptBinary(std::string_view where, int16_t id, CType type, std::optional<std::string>* out) {
    if (type != CType::kBinary) return r_.Skip(type);
    std::string v;
    SLUICE_RETURN_IF_ERROR(Binary(where, id, type, &v));
    *out = std::move(v);
    return Status::OK();
  }
  Status Bool(std::string_view where, int16_t id, CType type, bool* out) {
    if (type != CType::kBoolTrue && type != CType::kBoolFalse) return WrongType(where, id);
    return CompactReader::BoolFromFieldType(type, out);
  }
  Status OptBool(std::string_view where, int16_t id, CType type, std::optional<bool>* out) {
    if (type != CType::kBoolTrue && type != CType::kBoolFalse) return r_.Skip(type);
    bool v;
    SLUICE_RETURN_IF_ERROR(Bool(where, id, type, &v));
    *out = v;
    return Status::OK();
  }
  // A list field whose elements are read by `element` (called `size` times).
  template <typename Fn>
  Status List(std::string_view where, int16_t id, CType type, CType want, Fn&& element) {
    if (type != CType::kList) return WrongType(where, id);
    CType element_type;
    uint32_t size;
    SLUICE_RETURN_IF_ERROR(r_.ReadListHeader(&element_type, &size));
    if (size > 0 && element_type != want) return Bad(where, "list field " + std::to_string(id) + " has elements of an unexpected type");
    for (uint32_t i = 0; i < size; ++i) SLUICE_RETURN_IF_ERROR(element());
    return Status::OK();
  }

 private:
  CompactReader r_;
};

Status ParseStatistics(Parser& p, Statistics* s) {
  constexpr std::string_view kWhere = "Statistics";
  return p.Struct([&](int16_t id, CType t, bool* handled) -> Status {
    *handled = true;
    switch (id) {
      case 1: return p.OptBinary(kWhere, id, t, &s->max);
      case 2: return p.OptBinary(kWhere, id, t, &s->min);
      case 3: return p.OptI64(kWhere, id, t, &s->null_count);
      case 4: return p.OptI64(kWhere, id, t, &s->distinct_count);
      case 5: return p.OptBinary(kWhere, id, t, &s->max_value);
      case 6: return p.OptBinary(kWhere, id, t, &s->min_value);
      case 7: return p.OptBool(kWhere, id, t, &s->is_max_value_exact);
      case 8: return p.OptBool(kWhere, id, t, &s->is_min_value_exact);
      case 9: return p.OptI64(kWhere, id, t, &s->nan_count);
      default: *handled = false; return Status::OK();
    }
  });
}

Status ParseTimeUnit(Parser& p, TimeUnit* unit) {
  bool seen = false;
  SLUICE_RETURN_IF_ERROR(p.Struct([&](int16_t id, CType t, bool*) -> Status {
    if (t != CType::kStruct || id < 1 || id > 3) return Status::OK();
    *unit = id == 1 ? TimeUnit::kMillis : id == 2 ? TimeUnit::kMicros : TimeUnit::kNanos;
    seen = true;
    return Status::OK();
  }));
  if (!seen) return Bad("TimeUnit", "no known unit is set");
  return Status::OK();
}

Status ParseTimeOrTimestamp(Parser& p, LogicalType* l, std::string_view where) {
  bool have_utc = false, have_unit = false;
  SLUICE_RETURN_IF_ERROR(p.Struct([&](int16_t id, CType t, bool* handled) -> Status {
    if (id == 1) {
      *handled = have_utc = true;
      return p.Bool(where, id, t, &l->is_adjusted_to_utc);
    }
    if (id == 2) {
      if (t != CType::kStruct) return WrongType(where, id);
      *handled = have_unit = true;
      return ParseTimeUnit(p, &l->unit);
    }
    return Status::OK();
  }));
  if (!have_utc) return Missing(where, "isAdjustedToUTC");
  if (!have_unit) return Missing(where, "unit");
  return Status::OK();
}

Status ParseLogicalType(Parser& p, LogicalType* l) {
  using K = LogicalType::Kind;
  bool seen = false;
  l->kind = K::kOther;
  SLUICE_RETURN_IF_ERROR(p.Struct([&](int16_t id, CType t, bool* handled) -> Status {
    if (t != CType::kStruct || seen) return Status::OK();
    seen = true;
    switch (id) {
      case 1: l->kind = K::kString; return Status::OK();
      case 2: l->kind = K::kMap; return Status::OK();
      case 3: l->kind = K::kList; return Status::OK();
      case 4: l->kind = K::kEnum; return Status::OK();
      case 5: {
        *handled = true;
        l->kind = K::kDecimal;
        bool have_scale = false, have_precision = false;
        SLUICE_RETURN_IF_ERROR(p.Struct([&](int16_t fid, CType ft, bool* h) -> Status {
          if (fid == 1) {
            *h = have_scale = true;
            return p.I32("DecimalType", fid, ft, &l->scale);
          }
          if (fid == 2) {
            *h = have_precision = true;
            return p.I32("DecimalType", fid, ft, &l->precision);
          }
          return Status::OK();
        }));
        if (!have_scale) return Missing("DecimalType", "scale");
        if (!have_precision) return Missing("DecimalType", "precision");
        return Status::OK();
      }
      case 6: l->kind = K::kDate; return Status::OK();
      case 7:
        *handled = true;
        l->kind = K::kTime;
        return ParseTimeOrTimestamp(p, l, "TimeType");
      case 8:
        *handled = true;
        l->kind = K::kTimestamp;
        return ParseTimeOrTimestamp(p, l, "TimestampType");
      case 10: {
        *handled = true;
        l->kind = K::kInteger;
        bool have_width = false, have_signed = false;
        SLUICE_RETURN_IF_ERROR(p.Struct([&](int16_t fid, CType ft, bool* h) -> Status {
          if (fid == 1) {
            if (ft != CType::kByte) return WrongType("IntType", fid);
            *h = have_width = true;
            return p.reader().ReadI8(&l->bit_width);
          }
          if (fid == 2) {
            *h = have_signed = true;
            return p.Bool("IntType", fid, ft, &l->is_signed);
          }
          return Status::OK();
        }));
        if (!have_width) return Missing("IntType", "bitWidth");
        if (!have_signed) return Missing("IntType", "isSigned");
        return Status::OK();
      }
      case 11: l->kind = K::kNull; return Status::OK();
      case 12: l->kind = K::kJson; return Status::OK();
      case 13: l->kind = K::kBson; return Status::OK();
      case 14: l->kind = K::kUuid; return Status::OK();
      case 15: l->kind = K::kFloat16; return Status::OK();
      default: l->kind = K::kOther; return Status::OK();
    }
  }));
  return Status::OK();
}

Status ParseKeyValue(Parser& p, KeyValue* kv) {
  constexpr std::string_view kWhere = "KeyValue";
  bool have_key = false;
  SLUICE_RETURN_IF_ERROR(p.Struct([&](int16_t id, CType t, bool* handled) -> Status {
    if (id == 1) {
      *handled = have_key = true;
      return p.Binary(kWhere, id, t, &kv->key);
    }
    if (id == 2) {
      *handled = true;
      return p.OptBinary(kWhere, id, t, &kv->value);
    }
    return Status::OK();
  }));
  if (!have_key) return Missing(kWhere, "key");
  return Status::OK();
}

Status ParseKeyValues(Parser& p, std::string_view where, int16_t id, CType t, std::vector<KeyValue>* out) {
  return p.List(where, id, t, CType::kStruct, [&]() -> Status {
    out->emplace_back();
    return ParseKeyValue(p, &out->back());
  });
}

Status ParseSchemaElement(Parser& p, SchemaElement* e) {
  constexpr std::string_view kWhere = "SchemaElement";
  bool have_name = false;
  SLUICE_RETURN_IF_ERROR(p.Struct([&](int16_t id, CType t, bool* handled) -> Status {
    *handled = true;
    switch (id) {
      case 1: return p.OptI32(kWhere, id, t, &e->type);
      case 2: return p.OptI32(kWhere, id, t, &e->type_length);
      case 3: return p.OptI32(kWhere, id, t, &e->repetition_type);
      case 4: have_name = true; return p.Binary(kWhere, id, t, &e->name);
      case 5: return p.OptI32(kWhere, id, t, &e->num_children);
      case 6: return p.OptI32(kWhere, id, t, &e->converted_type);
      case 7: return p.OptI32(kWhere, id, t, &e->scale);
      case 8: return p.OptI32(kWhere, id, t, &e->precision);
      case 9: return p.OptI32(kWhere, id, t, &e->field_id);
      case 10:
        if (t != CType::kStruct) return WrongType(kWhere, id);
        e->logical_type.emplace();
        return ParseLogicalType(p, &*e->logical_type);
      default: *handled = false; return Status::OK();
    }
  }));
  if (!have_name) return Missing(kWhere, "name");
  return Status::OK();
}

Status ParseColumnMetaData(Parser& p, ColumnMetaData* m) {
  constexpr std::string_view kWhere = "ColumnMetaData";
  uint32_t seen = 0;  // bit i: required field i+1 present
  SLUICE_RETURN_IF_ERROR(p.Struct([&](int16_t id, CType t, bool* handled) -> Status {
    *handled = true;
    if (id >= 1 && id <= 9) seen |= 1u << (id - 1);
    switch (id) {
      case 1: {
        int32_t v;
        SLUICE_RETURN_IF_ERROR(p.I32(kWhere, id, t, &v));
        m->type = static_cast<Type>(v);
        return Status::OK();
      }
      case 2:
        return p.List(kWhere, id, t, CType::kI32, [&]() -> Status {
          int32_t v;
          SLUICE_RETURN_IF_ERROR(p.reader().ReadI32(&v));
          m->encodings.push_back(static_cast<Encoding>(v));
          return Status::OK();
        });
      case 3:
        return p.List(kWhere, id, t, CType::kBinary, [&]() -> Status {
          m->path_in_schema.emplace_back();
          return p.reader().ReadBinary(&m->path_in_schema.back());
        });
      case 4: {
        int32_t v;
        SLUICE_RETURN_IF_ERROR(p.I32(kWhere, id, t, &v));
        m->codec = static_cast<CompressionCodec>(v);
        return Status::OK();
      }
      case 5: return p.I64(kWhere, id, t, &m->num_values);
      case 6: return p.I64(kWhere, id, t, &m->total_uncompressed_size);
      case 7: return p.I64(kWhere, id, t, &m->total_compressed_size);
      case 8: return ParseKeyValues(p, kWhere, id, t, &m->key_value_metadata);
      case 9: return p.I64(kWhere, id, t, &m->data_page_offset);
      case 10: return p.OptI64(kWhere, id, t, &m->index_page_offset);
      case 11: return p.OptI64(kWhere, id, t, &m->dictionary_page_offset);
      case 12:
        if (t != CType::kStruct) return WrongType(kWhere, id);
        m->statistics.emplace();
        return ParseStatistics(p, &*m->statistics);
      case 13:
        return p.List(kWhere, id, t, CType::kStruct, [&]() -> Status {
          PageEncodingStats& s = m->encoding_stats.emplace_back();
          uint32_t have = 0;
          SLUICE_RETURN_IF_ERROR(p.Struct([&](int16_t fid, CType ft, bool* h) -> Status {
            int32_t v;
            if (fid < 1 || fid > 3) return Status::OK();
            *h = true;
            have |= 1u << fid;
            SLUICE_RETURN_IF_ERROR(p.I32("PageEncodingStats", fid, ft, &v));
            if (fid == 1) s.page_type = static_cast<PageType>(v);
            if (fid == 2) s.encoding = static_cast<Encoding>(v);
            if (fid == 3) s.count = v;
            return Status::OK();
          }));
          if (have != 0b1110) return Missing("PageEncodingStats", "page_type, encoding or count");
          return Status::OK();
        });
      case 14: return p.OptI64(kWhere, id, t, &m->bloom_filter_offset);
      case 15: return p.OptI32(kWhere, id, t, &m->bloom_filter_length);
      default: *handled = false; return Status::OK();
    }
  }));
  static constexpr const char* kRequired[] = {"type", "encodings", "path_in_schema", "codec", "num_values",
                                              "total_uncompressed_size", "total_compressed_size", nullptr,
                                              "data_page_offset"};
  for (int i = 0; i < 9; ++i) {
    if (kRequired[i] != nullptr && (seen & (1u << i)) == 0) return Missing(kWhere, kRequired[i]);
  }
  return Status::OK();
}

Status ParseColumnChunk(Parser& p, ColumnChunk* c) {
  constexpr std::string_view kWhere = "ColumnChunk";
  bool have_file_offset = false;
  SLUICE_RETURN_IF_ERROR(p.Struct([&](int16_t id, CType t, bool* handled) -> Status {
    *handled = true;
    switch (id) {
      case 1: return p.OptBinary(kWhere, id, t, &c->file_path);
      case 2: have_file_offset = true; return p.I64(kWhere, id, t, &c->file_offset);
      case 3:
        if (t != CType::kStruct) return WrongType(kWhere, id);
        c->meta_data.emplace();
        return ParseColumnMetaData(p, &*c->meta_data);
      case 4: return p.OptI64(kWhere, id, t, &c->offset_index_offset);
      case 5: return p.OptI32(kWhere, id, t, &c->offset_index_length);
      case 6: return p.OptI64(kWhere, id, t, &c->column_index_offset);
      case 7: return p.OptI32(kWhere, id, t, &c->column_index_length);
      case 8:
      case 9:
        c->has_crypto_metadata = true;
        *handled = false;
        return Status::OK();
      default: *handled = false; return Status::OK();
    }
  }));
  if (!have_file_offset) return Missing(kWhere, "file_offset");
  return Status::OK();
}

Status ParseRowGroup(Parser& p, RowGroup* g) {
  constexpr std::string_view kWhere = "RowGroup";
  bool have_columns = false, have_size = false, have_rows = false;
  SLUICE_RETURN_IF_ERROR(p.Struct([&](int16_t id, CType t, bool* handled) -> Status {
    *handled = true;
    switch (id) {
      case 1:
        have_columns = true;
        return p.List(kWhere, id, t, CType::kStruct, [&]() -> Status {
          return ParseColumnChunk(p, &g->columns.emplace_back());
        });
      case 2: have_size = true; return p.I64(kWhere, id, t, &g->total_byte_size);
      case 3: have_rows = true; return p.I64(kWhere, id, t, &g->num_rows);
      case 4:
        return p.List(kWhere, id, t, CType::kStruct, [&]() -> Status {
          SortingColumn& s = g->sorting_columns.emplace_back();
          uint32_t have = 0;
          SLUICE_RETURN_IF_ERROR(p.Struct([&](int16_t fid, CType ft, bool* h) -> Status {
            if (fid < 1 || fid > 3) return Status::OK();
            *h = true;
            have |= 1u << fid;
            if (fid == 1) return p.I32("SortingColumn", fid, ft, &s.column_idx);
            if (fid == 2) return p.Bool("SortingColumn", fid, ft, &s.descending);
            return p.Bool("SortingColumn", fid, ft, &s.nulls_first);
          }));
          if (have != 0b1110) return Missing("SortingColumn", "column_idx, descending or nulls_first");
          return Status::OK();
        });
      case 5: return p.OptI64(kWhere, id, t, &g->file_offset);
      case 6: return p.OptI64(kWhere, id, t, &g->total_compressed_size);
      case 7: {
        if (t != CType::kI16) return WrongType(kWhere, id);
        int16_t v;
        SLUICE_RETURN_IF_ERROR(p.reader().ReadI16(&v));
        g->ordinal = v;
        return Status::OK();
      }
      default: *handled = false; return Status::OK();
    }
  }));
  if (!have_columns) return Missing(kWhere, "columns");
  if (!have_size) return Missing(kWhere, "total_byte_size");
  if (!have_rows) return Missing(kWhere, "num_rows");
  return Status::OK();
}

Status ParseColumnOrder(Parser& p, ColumnOrder* order) {
  *order = ColumnOrder::kUnknown;
  return p.Struct([&](int16_t id, CType t, bool*) -> Status {
    if (t != CType::kStruct) return Status::OK();
    if (id == 1) *order = ColumnOrder::kTypeDefinedOrder;
    if (id == 2) *order = ColumnOrder::kIeee754TotalOrder;
    if (id == 3) *order = ColumnOrder::kInt96TimestampOrder;
    return Status::OK();
  });
}

Status ParseFileMetaDataStruct(Parser& p, FileMetaData* f) {
  constexpr std::string_view kWhere = "FileMetaData";
  bool have_version = false, have_schema = false, have_rows = false, have_groups = false;
  SLUICE_RETURN_IF_ERROR(p.Struct([&](int16_t id, CType t, bool* handled) -> Status {
    *handled = true;
    switch (id) {
      case 1: have_version = true; return p.I32(kWhere, id, t, &f->version);
      case 2:
        have_schema = true;
        return p.List(kWhere, id, t, CType::kStruct, [&]() -> Status {
          return ParseSchemaElement(p, &f->schema.emplace_back());
        });
      case 3: have_rows = true; return p.I64(kWhere, id, t, &f->num_rows);
      case 4:
        have_groups = true;
        return p.List(kWhere, id, t, CType::kStruct, [&]() -> Status {
          return ParseRowGroup(p, &f->row_groups.emplace_back());
        });
      case 5: return ParseKeyValues(p, kWhere, id, t, &f->key_value_metadata);
      case 6: return p.OptBinary(kWhere, id, t, &f->created_by);
      case 7:
        return p.List(kWhere, id, t, CType::kStruct, [&]() -> Status {
          return ParseColumnOrder(p, &f->column_orders.emplace_back());
        });
      case 8:
        f->has_encryption_algorithm = true;
        *handled = false;
        return Status::OK();
      default: *handled = false; return Status::OK();
    }
  }));
  if (!have_version) return Missing(kWhere, "version");
  if (!have_schema) return Missing(kWhere, "schema");
  if (!have_rows) return Missing(kWhere, "num_rows");
  if (!have_groups) return Missing(kWhere, "row_groups");
  return Status::OK();
}

Status ParsePageHeaderStruct(Parser& p, PageHeader* h) {
  constexpr std::string_view kWhere = "PageHeader";
  bool have_type = false, have_uncompressed = false, have_compressed = false;
  SLUICE_RETURN_IF_ERROR(p.Struct([&](int16_t id, CType t, bool* handled) -> Status {
    *handled = true;
    switch (id) {
      case 1: {
        int32_t v;
        have_type = true;
        SLUICE_RETURN_IF_ERROR(p.I32(kWhere, id, t, &v));
        h->type = static_cast<PageType>(v);
        return Status::OK();
      }
      case 2: have_uncompressed = true; return p.I32(kWhere, id, t, &h->uncompressed_page_size);
      case 3: have_compressed = true; return p.I32(kWhere, id, t, &h->compressed_page_size);
      case 4: return p.OptI32(kWhere, id, t, &h->crc);
      case 5: {
        if (t != CType::kStruct) return WrongType(kWhere, id);
        DataPageHeader& d = h->data_page_header.emplace();
        uint32_t have = 0;
        SLUICE_RETURN_IF_ERROR(p.Struct([&](int16_t fid, CType ft, bool* hd) -> Status {
          if (fid < 1 || fid > 5) return Status::OK();
          *hd = true;
          have |= 1u << fid;
          if (fid == 5) {
            if (ft != CType::kStruct) return WrongType("DataPageHeader", fid);
            d.statistics.emplace();
            return ParseStatistics(p, &*d.statistics);
          }
          int32_t v;
          SLUICE_RETURN_IF_ERROR(p.I32("DataPageHeader", fid, ft, &v));
          if (fid == 1) d.num_values = v;
          if (fid == 2) d.encoding = static_cast<Encoding>(v);
          if (fid == 3) d.definition_level_encoding = static_cast<Encoding>(v);
          if (fid == 4) d.repetition_level_encoding = static_cast<Encoding>(v);
          return Status::OK();
        }));
        if ((have & 0b11110) != 0b11110) return Missing("DataPageHeader", "num_values or an encoding");
        return Status::OK();
      }
      case 7: {
        if (t != CType::kStruct) return WrongType(kWhere, id);
        DictionaryPageHeader& d = h->dictionary_page_header.emplace();
        uint32_t have = 0;
        SLUICE_RETURN_IF_ERROR(p.Struct([&](int16_t fid, CType ft, bool* hd) -> Status {
          if (fid < 1 || fid > 3) return Status::OK();
          *hd = true;
          have |= 1u << fid;
          if (fid == 3) return p.OptBool("DictionaryPageHeader", fid, ft, &d.is_sorted);
          int32_t v;
          SLUICE_RETURN_IF_ERROR(p.I32("DictionaryPageHeader", fid, ft, &v));
          if (fid == 1) d.num_values = v;
          if (fid == 2) d.encoding = static_cast<Encoding>(v);
          return Status::OK();
        }));
        if ((have & 0b110) != 0b110) return Missing("DictionaryPageHeader", "num_values or encoding");
        return Status::OK();
      }
      case 8: {
        if (t != CType::kStruct) return WrongType(kWhere, id);
        DataPageHeaderV2& d = h->data_page_header_v2.emplace();
        uint32_t have = 0;
        SLUICE_RETURN_IF_ERROR(p.Struct([&](int16_t fid, CType ft, bool* hd) -> Status {
          if (fid < 1 || fid > 8) return Status::OK();
          *hd = true;
          have |= 1u << fid;
          if (fid == 7) return p.Bool("DataPageHeaderV2", fid, ft, &d.is_compressed);
          if (fid == 8) {
            if (ft != CType::kStruct) return WrongType("DataPageHeaderV2", fid);
            d.statistics.emplace();
            return ParseStatistics(p, &*d.statistics);
          }
          int32_t v;
          SLUICE_RETURN_IF_ERROR(p.I32("DataPageHeaderV2", fid, ft, &v));
          switch (fid) {
            case 1: d.num_values = v; break;
            case 2: d.num_nulls = v; break;
            case 3: d.num_rows = v; break;
            case 4: d.encoding = static_cast<Encoding>(v); break;
            case 5: d.definition_levels_byte_length = v; break;
            case 6: d.repetition_levels_byte_length = v; break;
          }
          return Status::OK();
        }));
        if ((have & 0b1111110) != 0b1111110) return Missing("DataPageHeaderV2", "a count, the encoding or a level length");
        return Status::OK();
      }
      default: *handled = false; return Status::OK();
    }
  }));
  if (!have_type) return Missing(kWhere, "type");
  if (!have_uncompressed) return Missing(kWhere, "uncompressed_page_size");
  if (!have_compressed) return Missing(kWhere, "compressed_page_size");
  return Status::OK();
}

std::string Numbered(std::string_view prefix, int32_t v) { return std::string(prefix) + std::to_string(v); }

}  // namespace

void SerializeFileMetaData(const FileMetaData& f, std::string* out) {
  CompactWriter w(out);
  w.StructBegin();
  w.FieldI32(1, f.version);
  w.FieldListBegin(2, CType::kStruct, static_cast<uint32_t>(f.schema.size()));
  for (const SchemaElement& e : f.schema) WriteSchemaElement(w, e);
  w.FieldI64(3, f.num_rows);
  w.FieldListBegin(4, CType::kStruct, static_cast<uint32_t>(f.row_groups.size()));
  for (const RowGroup& g : f.row_groups) WriteRowGroup(w, g);
  if (!f.key_value_metadata.empty()) WriteKeyValues(w, 5, f.key_value_metadata);
  if (f.created_by) w.FieldBinary(6, *f.created_by);
  if (!f.column_orders.empty()) {
    w.FieldListBegin(7, CType::kStruct, static_cast<uint32_t>(f.column_orders.size()));
    for (ColumnOrder order : f.column_orders) {
      w.StructBegin();
      // kUnknown cannot be written back; TYPE_ORDER is the safe reading of it.
      int16_t id = order == ColumnOrder::kIeee754TotalOrder ? 2 : order == ColumnOrder::kInt96TimestampOrder ? 3 : 1;
      WriteEmptyStructField(w, id);
      w.StructEnd();
    }
  }
  w.StructEnd();
}

void SerializePageHeader(const PageHeader& h, std::string* out) {
  CompactWriter w(out);
  w.StructBegin();
  w.FieldI32(1, static_cast<int32_t>(h.type));
  w.FieldI32(2, h.uncompressed_page_size);
  w.FieldI32(3, h.compressed_page_size);
  if (h.crc) w.FieldI32(4, *h.crc);
  if (h.data_page_header) {
    const DataPageHeader& d = *h.data_page_header;
    w.FieldStructBegin(5);
    w.FieldI32(1, d.num_values);
    w.FieldI32(2, static_cast<int32_t>(d.encoding));
    w.FieldI32(3, static_cast<int32_t>(d.definition_level_encoding));
    w.FieldI32(4, static_cast<int32_t>(d.repetition_level_encoding));
    if (d.statistics) {
      w.FieldStructBegin(5);
      WriteStatistics(w, *d.statistics);
      w.StructEnd();
    }
    w.StructEnd();
  }
  if (h.dictionary_page_header) {
    const DictionaryPageHeader& d = *h.dictionary_page_header;
    w.FieldStructBegin(7);
    w.FieldI32(1, d.num_values);
    w.FieldI32(2, static_cast<int32_t>(d.encoding));
    if (d.is_sorted) w.FieldBool(3, *d.is_sorted);
    w.StructEnd();
  }
  if (h.data_page_header_v2) {
    const DataPageHeaderV2& d = *h.data_page_header_v2;
    w.FieldStructBegin(8);
    w.FieldI32(1, d.num_values);
    w.FieldI32(2, d.num_nulls);
    w.FieldI32(3, d.num_rows);
    w.FieldI32(4, static_cast<int32_t>(d.encoding));
    w.FieldI32(5, d.definition_levels_byte_length);
    w.FieldI32(6, d.repetition_levels_byte_length);
    w.FieldBool(7, d.is_compressed);
    if (d.statistics) {
      w.FieldStructBegin(8);
      WriteStatistics(w, *d.statistics);
      w.StructEnd();
    }
    w.StructEnd();
  }
  w.StructEnd();
}

Result<FileMetaData> ParseFileMetaData(std::string_view bytes) {
  Parser p(bytes);
  FileMetaData f;
  SLUICE_RETURN_IF_ERROR(ParseFileMetaDataStruct(p, &f));
  return f;
}

Result<PageHeader> ParsePageHeader(std::string_view bytes, size_t* header_size) {
  Parser p(bytes);
  PageHeader h;
  SLUICE_RETURN_IF_ERROR(ParsePageHeaderStruct(p, &h));
  *header_size = p.reader().position();
  return h;
}

std::string TypeName(Type type) {
  static constexpr const char* kNames[] = {"BOOLEAN", "INT32", "INT64", "INT96",
                                           "FLOAT", "DOUBLE", "BYTE_ARRAY", "FIXED_LEN_BYTE_ARRAY"};
  auto v = static_cast<int32_t>(type);
  return v >= 0 && v < 8 ? kNames[v] : Numbered("TYPE_", v);
}

std::string ConvertedTypeName(ConvertedType type) {
  static constexpr const char* kNames[] = {
      "UTF8",        "MAP",          "MAP_KEY_VALUE",    "LIST",   "ENUM",    "DECIMAL", "DATE",  "TIME_MILLIS",
      "TIME_MICROS", "TIMESTAMP_MILLIS", "TIMESTAMP_MICROS", "UINT_8", "UINT_16", "UINT_32", "UINT_64", "INT_8",
      "INT_16",      "INT_32",       "INT_64",           "JSON",   "BSON",    "INTERVAL"};
  auto v = static_cast<int32_t>(type);
  return v >= 0 && v < 22 ? kNames[v] : Numbered("CONVERTED_TYPE_", v);
}

std::string EncodingName(Encoding encoding) {
  static constexpr const char* kNames[] = {"PLAIN", "GROUP_VAR_INT", "PLAIN_DICTIONARY", "RLE", "BIT_PACKED",
                                           "DELTA_BINARY_PACKED", "DELTA_LENGTH_BYTE_ARRAY", "DELTA_BYTE_ARRAY",
                                           "RLE_DICTIONARY", "BYTE_STREAM_SPLIT"};
  auto v = static_cast<int32_t>(encoding);
  return v >= 0 && v < 10 ? kNames[v] : Numbered("ENCODING_", v);
}

std::string CodecName(CompressionCodec codec) {
  static constexpr const char* kNames[] = {"UNCOMPRESSED", "SNAPPY", "GZIP", "LZO", "BROTLI", "LZ4", "ZSTD", "LZ4_RAW"};
  auto v = static_cast<int32_t>(codec);
  return v >= 0 && v < 8 ? kNames[v] : Numbered("CODEC_", v);
}

std::string PageTypeName(PageType type) {
  static constexpr const char* kNames[] = {"DATA_PAGE", "INDEX_PAGE", "DICTIONARY_PAGE", "DATA_PAGE_V2"};
  auto v = static_cast<int32_t>(type);
  return v >= 0 && v < 4 ? kNames[v] : Numbered("PAGE_TYPE_", v);
}

std::string RepetitionName(FieldRepetitionType repetition) {
  static constexpr const char* kNames[] = {"REQUIRED", "OPTIONAL", "REPEATED"};
  auto v = static_cast<int32_t>(repetition);
  return v >= 0 && v < 3 ? kNames[v] : Numbered("REPETITION_", v);
}

std::string LogicalTypeToString(const LogicalType& t) {
  using K = LogicalType::Kind;
  auto unit = [&] { return t.unit == TimeUnit::kMillis ? "MILLIS" : t.unit == TimeUnit::kMicros ? "MICROS" : "NANOS"; };
  auto utc = [&] { return t.is_adjusted_to_utc ? "true" : "false"; };
  switch (t.kind) {
    case K::kString: return "STRING";
    case K::kMap: return "MAP";
    case K::kList: return "LIST";
    case K::kEnum: return "ENUM";
    case K::kDecimal: return "DECIMAL(" + std::to_string(t.precision) + "," + std::to_string(t.scale) + ")";
    case K::kDate: return "DATE";
    case K::kTime: return std::string("TIME(") + unit() + "," + utc() + ")";
    case K::kTimestamp: return std::string("TIMESTAMP(") + unit() + "," + utc() + ")";
    case K::kInteger: return "INTEGER(" + std::to_string(t.bit_width) + "," + (t.is_signed ? "true" : "false") + ")";
    case K::kNull: return "UNKNOWN";
    case K::kJson: return "JSON";
    case K::kBson: return "BSON";
    case K::kUuid: return "UUID";
    case K::kFloat16: return "FLOAT16";
    case K::kOther: break;
  }
  return "OTHER";
}

}  // namespace sluice::parquet
