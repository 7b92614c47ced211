// The Avro binary decoder. The writer's schema is compiled once, against the reader's, into a
// tree of Ops bound to the column builders of the reader's type (schema resolution happens at
// compile time: at run time a promoted int is one more switch, a dropped field a skip). Rows are decoded optimistically, straight into the builders; since a
// builder cannot take back part of a row, a batch in which some datum turns out malformed is
// decoded again from its start in careful mode, where each datum is first walked without
// appending (the same code, instantiated with kAppend = false) and appended only when it reads
// cleanly to its last byte. Clean batches pay for one pass, dirty ones for at most three.
#include <algorithm>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <simdjson.h>

#include "sluice/core/builder.h"
#include "sluice/core/error_classes.h"
#include "sluice/core/utf8.h"
#include "sluice/formats/avro.h"

namespace sluice::formats {
namespace {

using Kind = AvroNode::Kind;
using Logical = AvroNode::Logical;

constexpr int kNullBranch = -1;
constexpr int kUnmatchedBranch = -2;

// A reader field the writer lacks: its default, appended to every row.
struct DefaultValue {
  ColumnBuilder* builder = nullptr;
  TypeId type = TypeId::kString;
  bool is_null = false;
  bool is_empty_list = false;
  int64_t integer = 0;
  double real = 0;
  std::string bytes;
};

// One step of decoding: how to read a writer's value, and where its reader-side value goes.
// An Op with no builder only skips its bytes (a field the reader does not have).
struct Op {
  Kind kind = Kind::kNull;      // the writer's encoding
  Logical logical = Logical::kNone;  // the writer's logical type (millis are scaled to micros)
  TypeId target = TypeId::kString;   // the reader's type, for scalars
  ColumnBuilder* builder = nullptr;
  std::vector<Op> children;     // record: one per writer field; array/map: the items; union: branches
  int64_t fixed_size = 0;
  // Enum: the reader's symbol for each writer symbol, null when the reader lacks it.
  std::vector<const std::string*> symbols;
  BinaryBuilder* map_keys = nullptr;
  // Record: the reader's fields the writer lacks.
  std::vector<DefaultValue> defaults;
  // Writer union: the child each branch decodes into, or kNullBranch / kUnmatchedBranch.
  std::vector<int> branch_child;
  // Reader union held as a struct (one field per branch): the struct, and for a writer union
  // the field of each branch (for any other op, branch_field[0] is the field this value fills).
  StructBuilder* branch_struct = nullptr;
  std::vector<int> branch_field;
};

struct Reader {
  const uint8_t* pos;
  const uint8_t* end;

  size_t remaining() const { return static_cast<size_t>(end - pos); }

  bool ReadLong(int64_t* out) {
    uint64_t value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos == end) return false;
      uint8_t byte = *pos++;
      value |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) {
        *out = static_cast<int64_t>(value >> 1) ^ -static_cast<int64_t>(value & 1);
        return true;
      }
    }
    return false;  // more than 10 bytes
  }
  bool ReadInt(int32_t* out) {
    int64_t value;
    if (!ReadLong(&value) || value < std::numeric_limits<int32_t>::min() || value > std::numeric_limits<int32_t>::max()) {
      return false;
    }
    *out = static_cast<int32_t>(value);
    return true;
  }
  // A length-prefixed run of bytes.
  bool ReadBytes(std::string_view* out) {
    int64_t length;
    if (!ReadLong(&length) || length < 0 || static_cast<uint64_t>(length) > remaining()) return false;
    *out = std::string_view(reinterpret_cast<const char*>(pos), static_cast<size_t>(length));
    pos += length;
    return true;
  }
  bool ReadFixed(size_t size, std::string_view* out) {
    if (size > remaining()) return false;
    *out = std::string_view(reinterpret_cast<const char*>(pos), size);
    pos += size;
    return true;
  }
};

__extension__ typedef unsigned __int128 uint128_t;  // __extension__: -Wpedantic knows no 128-bit integers

// Big-endian two's complement of at most 16 bytes.
bool DecimalFromBytes(std::string_view bytes, int128_t* out) {
  if (bytes.size() > 16) return false;
  if (bytes.empty()) {
    *out = 0;
    return true;
  }
  uint128_t value = static_cast<int8_t>(bytes[0]) < 0 ? ~uint128_t{0} : 0;
  for (char c : bytes) value = (value << 8) | static_cast<uint8_t>(c);
  *out = static_cast<int128_t>(value);
  return true;
}

// Ops that skip a writer's value without a reader-side target.
void CompileSkip(const AvroSchema& writer, int index, Op* op) {
  const AvroNode& node = writer.nodes[index];
  op->kind = node.kind;
  op->logical = node.logical;
  op->fixed_size = node.fixed_size;
  for (const std::string& symbol : node.symbols) op->symbols.push_back(&symbol);
  if (node.kind == Kind::kRecord) {
    op->children.resize(node.fields.size());
    for (size_t i = 0; i < node.fields.size(); ++i) CompileSkip(writer, node.fields[i].node, &op->children[i]);
  } else {
    op->children.resize(node.children.size());
    for (size_t i = 0; i < node.children.size(); ++i) {
      CompileSkip(writer, node.children[i], &op->children[i]);
      if (node.kind == Kind::kUnion) op->branch_child.push_back(static_cast<int>(i));
    }
  }
}

std::string_view ShortName(std::string_view name) {
  size_t dot = name.rfind('.');
  return dot == std::string_view::npos ? name : name.substr(dot + 1);
}

// Whether a writer's value of node `w` can be read as the reader's node `r` (neither a union).
bool Matches(const AvroNode& w, const AvroNode& r) {
  if (w.kind == r.kind) {
    switch (w.kind) {
      case Kind::kRecord:
      case Kind::kEnum: return ShortName(w.name) == ShortName(r.name);
      case Kind::kFixed: return ShortName(w.name) == ShortName(r.name) && w.fixed_size == r.fixed_size;
      default: return true;
    }
  }
  switch (w.kind) {
    case Kind::kInt: return r.kind == Kind::kLong || r.kind == Kind::kFloat || r.kind == Kind::kDouble;
    case Kind::kLong: return r.kind == Kind::kFloat || r.kind == Kind::kDouble;
    case Kind::kFloat: return r.kind == Kind::kDouble;
    case Kind::kString: return r.kind == Kind::kBytes;
    case Kind::kBytes: return r.kind == Kind::kString;
    default: return false;
  }
}

TypeId ScalarType(const AvroNode& node) {
  switch (node.kind) {
    case Kind::kBoolean: return TypeId::kBoolean;
    case Kind::kInt: return node.logical == Logical::kDate ? TypeId::kDate : TypeId::kInteger;
    case Kind::kLong:
      switch (node.logical) {
        case Logical::kTimestampMillis:
        case Logical::kTimestampMicros: return TypeId::kTimestamp;
        case Logical::kLocalTimestampMillis:
        case Logical::kLocalTimestampMicros: return TypeId::kTimestampNtz;
        default: return TypeId::kLong;
      }
    case Kind::kFloat: return TypeId::kFloat;
    case Kind::kDouble: return TypeId::kDouble;
    case Kind::kBytes:
    case Kind::kFixed: return node.logical == Logical::kDecimal ? TypeId::kDecimal : TypeId::kBinary;
    default: return TypeId::kString;
  }
}

// The non-null branches of a reader's union, and how the reader's type holds it.
struct ReaderUnion {
  bool admits_null = false;
  std::vector<int> branches;
  bool as_struct() const { return branches.size() > 1; }
};

ReaderUnion AnalyzeUnion(const AvroSchema& reader, const AvroNode& node) {
  ReaderUnion result;
  for (int child : node.children) {
    if (reader.nodes[child].kind == Kind::kNull) {
      result.admits_null = true;
    } else {
      result.branches.push_back(child);
    }
  }
  return result;
}

// The first reader branch a writer node matches, as a position in `u.branches`, or -1.
int MatchBranch(const AvroSchema& writer, int w, const AvroSchema& reader, const ReaderUnion& u) {
  for (size_t j = 0; j < u.branches.size(); ++j) {
    if (writer.nodes[w].kind == reader.nodes[u.branches[j]].kind && Matches(writer.nodes[w], reader.nodes[u.branches[j]])) {
      return static_cast<int>(j);
    }
  }
  for (size_t j = 0; j < u.branches.size(); ++j) {
    if (Matches(writer.nodes[w], reader.nodes[u.branches[j]])) return static_cast<int>(j);
  }
  return -1;
}

class Compiler {
 public:
  Compiler(const AvroSchema& writer, const AvroSchema& reader) : writer_(writer), reader_(reader) {}

  Status Compile(int w, int r, ColumnBuilder* builder, const std::string& path, Op* op);

 private:
  Status Incompatible(const std::string& path, std::string_view what) const {
    return Status::Error(errors::kAvroSchemaInvalid, fmt::format("{}: the writer's schema cannot be read as the reader's: {}",
                                                                 path.empty() ? "the datum" : path, what));
  }
  Status CompileNonUnion(int w, int r, ColumnBuilder* builder, const std::string& path, Op* op);
  Status CompileRecord(const AvroNode& wn, const AvroNode& rn, ColumnBuilder* builder, const std::string& path, Op* op);
  Result<DefaultValue> ParseDefault(const AvroNode::RecordField& field, ColumnBuilder* builder, const std::string& path);

  const AvroSchema& writer_;
  const AvroSchema& reader_;
};

Status Compiler::Compile(int w, int r, ColumnBuilder* builder, const std::string& path, Op* op) {
  const AvroNode& wn = writer_.nodes[w];
  const AvroNode& rn = reader_.nodes[r];
  if (wn.kind == Kind::kUnion) {
    op->kind = Kind::kUnion;
    op->builder = builder;
    ReaderUnion u;
    if (rn.kind == Kind::kUnion) {
      u = AnalyzeUnion(reader_, rn);
    } else {
      u.branches.push_back(r);
    }
    if (u.as_struct()) op->branch_struct = static_cast<StructBuilder*>(builder);
    for (int branch : wn.children) {
      if (writer_.nodes[branch].kind == Kind::kNull) {
        op->branch_child.push_back(u.admits_null ? kNullBranch : kUnmatchedBranch);
        op->branch_field.push_back(-1);
        continue;
      }
      int j = MatchBranch(writer_, branch, reader_, u);
      if (j < 0) {
        op->branch_child.push_back(kUnmatchedBranch);
        op->branch_field.push_back(-1);
        continue;
      }
      ColumnBuilder* target = u.as_struct() ? op->branch_struct->field_builder(j) : builder;
      op->branch_child.push_back(static_cast<int>(op->children.size()));
      op->branch_field.push_back(j);
      op->children.emplace_back();
      SLUICE_RETURN_IF_ERROR(CompileNonUnion(branch, u.branches[j], target, path, &op->children.back()));
    }
    return Status::OK();
  }
  if (rn.kind == Kind::kUnion) {
    ReaderUnion u = AnalyzeUnion(reader_, rn);
    int j = MatchBranch(writer_, w, reader_, u);
    if (j < 0) return Incompatible(path, "no branch of the reader's union matches the writer's type");
    if (!u.as_struct()) return CompileNonUnion(w, u.branches[j], builder, path, op);
    auto* branch_struct = static_cast<StructBuilder*>(builder);
    SLUICE_RETURN_IF_ERROR(CompileNonUnion(w, u.branches[j], branch_struct->field_builder(j), path, op));
    op->branch_struct = branch_struct;
    op->branch_field = {j};
    return Status::OK();
  }
  return CompileNonUnion(w, r, builder, path, op);
}

Status Compiler::CompileNonUnion(int w, int r, ColumnBuilder* builder, const std::string& path, Op* op) {
  const AvroNode& wn = writer_.nodes[w];
  const AvroNode& rn = reader_.nodes[r];
  if (!Matches(wn, rn) && !(path.empty() && wn.kind == Kind::kRecord && rn.kind == Kind::kRecord)) {
    return Incompatible(path, "the types differ and do not promote");
  }
  op->kind = wn.kind;
  op->logical = wn.logical;
  op->target = ScalarType(rn);
  op->builder = builder;
  op->fixed_size = wn.fixed_size;
  switch (wn.kind) {
    case Kind::kRecord:
      return CompileRecord(wn, rn, builder, path, op);
    case Kind::kEnum:
      for (const std::string& symbol : wn.symbols) {
        auto it = std::find(rn.symbols.begin(), rn.symbols.end(), symbol);
        op->symbols.push_back(it == rn.symbols.end() ? nullptr : &*it);
      }
      return Status::OK();
    case Kind::kArray:
      op->children.resize(1);
      return Compile(wn.children[0], rn.children[0], static_cast<ListBuilder*>(builder)->element_builder(), path + "[]",
                     &op->children[0]);
    case Kind::kMap: {
      auto* list = static_cast<ListBuilder*>(builder);
      op->map_keys = static_cast<BinaryBuilder*>(list->key_builder());
      op->children.resize(1);
      return Compile(wn.children[0], rn.children[0], list->value_builder(), path + "{}", &op->children[0]);
    }
    case Kind::kBytes:
    case Kind::kFixed:
      if (op->target == TypeId::kDecimal && (wn.logical != Logical::kDecimal || wn.scale != rn.scale)) {
        return Incompatible(path, "decimals must have the same scale");
      }
      return Status::OK();
    default:
      return Status::OK();
  }
}

Status Compiler::CompileRecord(const AvroNode& wn, const AvroNode& rn, ColumnBuilder* builder, const std::string& path, Op* op) {
  auto* struct_builder = static_cast<StructBuilder*>(builder);
  std::vector<uint8_t> filled(rn.fields.size(), 0);
  op->children.resize(wn.fields.size());
  for (size_t i = 0; i < wn.fields.size(); ++i) {
    const AvroNode::RecordField& field = wn.fields[i];
    std::string field_path = path.empty() ? field.name : path + "." + field.name;
    auto it = std::find_if(rn.fields.begin(), rn.fields.end(), [&](const AvroNode::RecordField& f) { return f.name == field.name; });
    if (it == rn.fields.end()) {
      CompileSkip(writer_, field.node, &op->children[i]);
      continue;
    }
    int k = static_cast<int>(it - rn.fields.begin());
    filled[k] = 1;
    SLUICE_RETURN_IF_ERROR(Compile(field.node, it->node, struct_builder->field_builder(k), field_path, &op->children[i]));
  }
  for (size_t k = 0; k < rn.fields.size(); ++k) {
    if (filled[k]) continue;
    std::string field_path = path.empty() ? rn.fields[k].name : path + "." + rn.fields[k].name;
    if (!rn.fields[k].has_default) return Incompatible(field_path, "the writer lacks this field and the reader gives no default");
    SLUICE_ASSIGN_OR_RETURN(DefaultValue value,
                            ParseDefault(rn.fields[k], struct_builder->field_builder(static_cast<int>(k)), field_path));
    op->defaults.push_back(std::move(value));
  }
  return Status::OK();
}

Result<DefaultValue> Compiler::ParseDefault(const AvroNode::RecordField& field, ColumnBuilder* builder, const std::string& path) {
  DefaultValue value;
  value.builder = builder;
  value.type = builder->type()->id();
  simdjson::dom::parser parser;
  simdjson::dom::element json;
  if (parser.parse(field.default_json).get(json) != simdjson::SUCCESS) return Incompatible(path, "the default is not JSON");
  const AvroNode* node = &reader_.nodes[field.node];
  if (node->kind == Kind::kUnion) {
    if (json.is_null() && reader_.nodes[node->children[0]].kind == Kind::kNull) {
      value.is_null = true;
      return value;
    }
    if (AnalyzeUnion(reader_, *node).as_struct()) return Incompatible(path, "only null can be the default of a union of several types");
    node = &reader_.nodes[node->children[0]];  // a union's default is of its first branch
  }
  bool ok = false;
  switch (value.type) {
    case TypeId::kBoolean: {
      bool flag = false;
      ok = json.get_bool().get(flag) == simdjson::SUCCESS;
      value.integer = flag ? 1 : 0;
      break;
    }
    case TypeId::kInteger:
    case TypeId::kDate:
    case TypeId::kLong:
    case TypeId::kTimestamp:
    case TypeId::kTimestampNtz: ok = json.get_int64().get(value.integer) == simdjson::SUCCESS; break;
    case TypeId::kFloat:
    case TypeId::kDouble: ok = json.get_double().get(value.real) == simdjson::SUCCESS; break;
    case TypeId::kString: {
      std::string_view text;
      ok = json.get_string().get(text) == simdjson::SUCCESS;
      value.bytes = std::string(text);
      break;
    }
    case TypeId::kArray:
    case TypeId::kMap:
      ok = (json.is_array() && json.get_array().size() == 0) || (json.is_object() && json.get_object().size() == 0);
      value.is_empty_list = true;
      break;
    default: break;
  }
  if (node->logical == Logical::kTimestampMillis || node->logical == Logical::kLocalTimestampMillis) {
    ok = ok && !__builtin_mul_overflow(value.integer, int64_t{1000}, &value.integer);
  }
  if (!ok) return Incompatible(path, fmt::format("the default {} is not supported for {}", field.default_json, builder->type()->ToString()));
  return value;
}

void AppendDefault(const DefaultValue& value) {
  if (value.is_null) return value.builder->AppendNull();
  switch (value.type) {
    case TypeId::kBoolean: return static_cast<BooleanBuilder*>(value.builder)->Append(value.integer != 0);
    case TypeId::kInteger:
    case TypeId::kDate: return static_cast<Int32Builder*>(value.builder)->Append(static_cast<int32_t>(value.integer));
    case TypeId::kLong:
    case TypeId::kTimestamp:
    case TypeId::kTimestampNtz: return static_cast<Int64Builder*>(value.builder)->Append(value.integer);
    case TypeId::kFloat: return static_cast<FloatBuilder*>(value.builder)->Append(static_cast<float>(value.real));
    case TypeId::kDouble: return static_cast<DoubleBuilder*>(value.builder)->Append(value.real);
    case TypeId::kString: return static_cast<BinaryBuilder*>(value.builder)->Append(value.bytes);
    case TypeId::kArray:
    case TypeId::kMap: return static_cast<ListBuilder*>(value.builder)->Append();
    default: return value.builder->AppendNull();
  }
}

// Appends a writer's integer (int or long) as the reader's type.
void AppendInteger(const Op& op, int64_t value) {
  switch (op.target) {
    case TypeId::kInteger:
    case TypeId::kDate: return static_cast<Int32Builder*>(op.builder)->Append(static_cast<int32_t>(value));
    case TypeId::kFloat: return static_cast<FloatBuilder*>(op.builder)->Append(static_cast<float>(value));
    case TypeId::kDouble: return static_cast<DoubleBuilder*>(op.builder)->Append(static_cast<double>(value));
    default: return static_cast<Int64Builder*>(op.builder)->Append(value);
  }
}

// After a value was appended to its field of a reader union held as a struct: the other
// fields get null and the struct its row.
void CloseBranch(StructBuilder* branch_struct, int field) {
  for (int i = 0; i < branch_struct->num_fields(); ++i) {
    if (i != field) branch_struct->field_builder(i)->AppendNull();
  }
  branch_struct->Append();
}

template <bool kAppend>
bool Read(const Op& op, Reader& in);

// Reads one value of a non-union writer type. Every check runs whether or not kAppend is set,
// so that a datum read cleanly without appending also appends cleanly.
template <bool kAppend>
bool ReadValue(const Op& op, Reader& in) {
  switch (op.kind) {
    case Kind::kNull:
      if constexpr (kAppend) op.builder->AppendNull();
      return true;
    case Kind::kBoolean: {
      if (in.pos == in.end || *in.pos > 1) return false;
      uint8_t value = *in.pos++;
      if constexpr (kAppend) static_cast<BooleanBuilder*>(op.builder)->Append(value);
      return true;
    }
    case Kind::kInt: {
      int32_t value;
      if (!in.ReadInt(&value)) return false;
      if constexpr (kAppend) AppendInteger(op, value);
      return true;
    }
    case Kind::kLong: {
      int64_t value;
      if (!in.ReadLong(&value)) return false;
      if (op.logical == Logical::kTimestampMillis || op.logical == Logical::kLocalTimestampMillis) {
        if (__builtin_mul_overflow(value, int64_t{1000}, &value)) return false;
      }
      if constexpr (kAppend) AppendInteger(op, value);
      return true;
    }
    case Kind::kFloat: {
      if (in.remaining() < 4) return false;
      float value;
      std::memcpy(&value, in.pos, 4);
      in.pos += 4;
      if constexpr (kAppend) {
        if (op.target == TypeId::kDouble) {
          static_cast<DoubleBuilder*>(op.builder)->Append(value);
        } else {
          static_cast<FloatBuilder*>(op.builder)->Append(value);
        }
      }
      return true;
    }
    case Kind::kDouble: {
      if (in.remaining() < 8) return false;
      double value;
      std::memcpy(&value, in.pos, 8);
      in.pos += 8;
      if constexpr (kAppend) static_cast<DoubleBuilder*>(op.builder)->Append(value);
      return true;
    }
    case Kind::kBytes:
    case Kind::kString:
    case Kind::kFixed: {
      std::string_view bytes;
      bool ok = op.kind == Kind::kFixed ? in.ReadFixed(static_cast<size_t>(op.fixed_size), &bytes) : in.ReadBytes(&bytes);
      if (!ok) return false;
      if (op.target == TypeId::kDecimal) {
        int128_t value;
        if (!DecimalFromBytes(bytes, &value)) return false;
        if constexpr (kAppend) static_cast<DecimalBuilder*>(op.builder)->Append(value);
        return true;
      }
      // A string holds UTF-8 (core/utf8.h): other bytes, written as an Avro string or as bytes
      // read into a string, make the record malformed.
      if (op.target == TypeId::kString && !IsValidUtf8(bytes)) return false;
      if constexpr (kAppend) static_cast<BinaryBuilder*>(op.builder)->Append(bytes);
      return true;
    }
    case Kind::kEnum: {
      int32_t index;
      if (!in.ReadInt(&index) || index < 0 || static_cast<size_t>(index) >= op.symbols.size() || op.symbols[index] == nullptr) {
        return false;
      }
      if constexpr (kAppend) static_cast<BinaryBuilder*>(op.builder)->Append(*op.symbols[index]);
      return true;
    }
    case Kind::kRecord: {
      for (const Op& field : op.children) {
        bool ok = field.builder == nullptr ? Read<false>(field, in) : Read<kAppend>(field, in);
        if (!ok) return false;
      }
      if constexpr (kAppend) {
        for (const DefaultValue& value : op.defaults) AppendDefault(value);
        static_cast<StructBuilder*>(op.builder)->Append();
      }
      return true;
    }
    case Kind::kArray:
    case Kind::kMap: {
      const Op& item = op.children[0];
      while (true) {
        int64_t count;
        if (!in.ReadLong(&count)) return false;
        if (count == 0) break;
        if (count < 0) {
          // A negative count is followed by the block's size in bytes, which readers may use to skip.
          int64_t block_bytes;
          if (count == std::numeric_limits<int64_t>::min() || !in.ReadLong(&block_bytes) || block_bytes < 0) return false;
          count = -count;
        }
        // Every item takes a byte at least (an empty record aside), so a larger count is a lie
        // that would otherwise loop for long.
        if (static_cast<uint64_t>(count) > in.remaining()) return false;
        for (int64_t i = 0; i < count; ++i) {
          if (op.kind == Kind::kMap) {
            std::string_view key;
            if (!in.ReadBytes(&key)) return false;
            if constexpr (kAppend) op.map_keys->Append(key);
          }
          if (!Read<kAppend>(item, in)) return false;
        }
      }
      if constexpr (kAppend) static_cast<ListBuilder*>(op.builder)->Append();
      return true;
    }
    case Kind::kUnion: {
      int64_t branch;
      if (!in.ReadLong(&branch) || branch < 0 || static_cast<uint64_t>(branch) >= op.branch_child.size()) return false;
      int child = op.branch_child[branch];
      if (child == kUnmatchedBranch) return false;
      if (child == kNullBranch) {
        if constexpr (kAppend) op.builder->AppendNull();
        return true;
      }
      if (!Read<kAppend>(op.children[child], in)) return false;
      if constexpr (kAppend) {
        if (op.branch_struct != nullptr) CloseBranch(op.branch_struct, op.branch_field[branch]);
      }
      return true;
    }
  }
  return false;
}

template <bool kAppend>
bool Read(const Op& op, Reader& in) {
  if (!ReadValue<kAppend>(op, in)) return false;
  if constexpr (kAppend) {
    // A non-union writer value landing in one field of a reader union held as a struct.
    if (op.kind != Kind::kUnion && op.branch_struct != nullptr) CloseBranch(op.branch_struct, op.branch_field[0]);
  }
  return true;
}

// Datums of one or several writer schemas (`writers`, newest first) into `reader`'s columns: a
// batch is read with the first; a datum it cannot read to its last byte is read with each of the
// others in turn, the first that reads it cleanly winning.
class AvroDecoder final : public Decoder {
 public:
  AvroDecoder(std::vector<AvroSchemaPtr> writers, AvroSchemaPtr reader)
      : writers_(std::move(writers)), reader_(std::move(reader)), builder_(ColumnBuilder::Make(reader_->type)) {}

  Status Init() {
    auto* root = static_cast<StructBuilder*>(builder_.get());
    wrapped_ = reader_->nodes[reader_->root].kind != Kind::kRecord;
    roots_.resize(writers_.size());
    for (size_t w = 0; w < writers_.size(); ++w) {
      Compiler compiler(*writers_[w], *reader_);
      SLUICE_RETURN_IF_ERROR(
          compiler.Compile(writers_[w]->root, reader_->root, wrapped_ ? root->field_builder(0) : root, "", &roots_[w]));
    }
    return Status::OK();
  }

  const TypePtr& type() const override { return reader_->type; }

  Result<ColumnPtr> Decode(const Column& encoded, DecodeStats* stats) override {
    if (!encoded.type->is_binary_like()) {
      return Status::Error(errors::kInvalidArgument,
                           fmt::format("Avro decoding reads a binary or string column, not {}", encoded.type->ToString()));
    }
    DecodeStats local;
    DecodeStats& out = stats != nullptr ? *stats : local;
    builder_->Reserve(encoded.length);
    if (!DecodeOptimistically(encoded)) {
      builder_->Finish();  // drop the partial batch
      builder_->Reserve(encoded.length);
      DecodeCarefully(encoded, &out);
    }
    out.rows += encoded.length;
    return builder_->Finish();
  }

 private:
  // Appends one datum; true when it read cleanly to its last byte.
  template <bool kAppend>
  bool ReadDatum(const Op& root, std::string_view bytes) {
    Reader in{reinterpret_cast<const uint8_t*>(bytes.data()), reinterpret_cast<const uint8_t*>(bytes.data()) + bytes.size()};
    if (!Read<kAppend>(root, in)) return false;
    if constexpr (kAppend) {
      if (wrapped_) static_cast<StructBuilder*>(builder_.get())->Append();
    }
    return in.pos == in.end;
  }

  bool DecodeOptimistically(const Column& encoded) {
    for (int64_t row = 0; row < encoded.length; ++row) {
      if (encoded.IsNull(row)) {
        builder_->AppendNull();
      } else if (!ReadDatum<true>(roots_[0], encoded.View(row))) {
        return false;
      }
    }
    return true;
  }

  void DecodeCarefully(const Column& encoded, DecodeStats* stats) {
    for (int64_t row = 0; row < encoded.length; ++row) {
      if (encoded.IsNull(row)) {
        builder_->AppendNull();
        continue;
      }
      std::string_view bytes = encoded.View(row);
      auto clean = std::find_if(roots_.begin(), roots_.end(), [&](const Op& root) { return ReadDatum<false>(root, bytes); });
      if (clean != roots_.end()) {
        ReadDatum<true>(*clean, bytes);
      } else {
        builder_->AppendNull();
        stats->RecordMalformed(row);
      }
    }
  }

  std::vector<AvroSchemaPtr> writers_;
  AvroSchemaPtr reader_;
  std::unique_ptr<ColumnBuilder> builder_;
  std::vector<Op> roots_;  // one per writer
  bool wrapped_ = false;
};

}  // namespace

Result<std::unique_ptr<Decoder>> MakeAvroDecoder(AvroSchemaPtr schema) {
  AvroSchemaPtr reader = schema;
  return MakeAvroDecoder(std::move(schema), std::move(reader));
}

Result<std::unique_ptr<Decoder>> MakeAvroDecoder(AvroSchemaPtr writer, AvroSchemaPtr reader) {
  return MakeAvroDecoder(std::vector<AvroSchemaPtr>{std::move(writer)}, std::move(reader));
}

Result<std::unique_ptr<Decoder>> MakeAvroDecoder(std::vector<AvroSchemaPtr> writers, AvroSchemaPtr reader) {
  if (writers.empty() || reader == nullptr || reader->type == nullptr ||
      std::find(writers.begin(), writers.end(), nullptr) != writers.end()) {
    return Status::Error(errors::kInvalidArgument, "an Avro decoder needs parsed schemas");
  }
  auto decoder = std::make_unique<AvroDecoder>(std::move(writers), std::move(reader));
  SLUICE_RETURN_IF_ERROR(decoder->Init());
  return std::unique_ptr<Decoder>(std::move(decoder));
}

}  // namespace sluice::formats
