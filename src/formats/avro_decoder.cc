// The Avro binary decoder. The schema is compiled once into a tree of Ops bound to the column
// builders they fill. Rows are decoded optimistically, straight into the builders; since a
// builder cannot take back part of a row, a batch in which some datum turns out malformed is
// decoded again from its start in careful mode, where each datum is first walked without
// appending (the same code, instantiated with kAppend = false) and appended only when it reads
// cleanly to its last byte. Clean batches pay for one pass, dirty ones for at most three.
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "sluice/core/builder.h"
#include "sluice/core/error_classes.h"
#include "sluice/formats/avro.h"

namespace sluice::formats {
namespace {

using Kind = AvroNode::Kind;
using Logical = AvroNode::Logical;

struct Op {
  Kind kind = Kind::kNull;
  Logical logical = Logical::kNone;
  ColumnBuilder* builder = nullptr;
  std::vector<Op> children;
  const AvroNode* node = nullptr;  // symbols, fixed size
  BinaryBuilder* map_keys = nullptr;
  // Union: the child each branch decodes into, -1 for the null branch.
  std::vector<int> branch_child;
  bool union_as_struct = false;
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

Status Compile(const AvroSchema& schema, int index, ColumnBuilder* builder, Op* op) {
  const AvroNode& node = schema.nodes[index];
  op->kind = node.kind;
  op->logical = node.logical;
  op->builder = builder;
  op->node = &node;
  switch (node.kind) {
    case Kind::kRecord: {
      auto* struct_builder = static_cast<StructBuilder*>(builder);
      op->children.resize(node.fields.size());
      for (size_t i = 0; i < node.fields.size(); ++i) {
        SLUICE_RETURN_IF_ERROR(Compile(schema, node.fields[i].node, struct_builder->field_builder(static_cast<int>(i)), &op->children[i]));
      }
      return Status::OK();
    }
    case Kind::kArray: {
      op->children.resize(1);
      return Compile(schema, node.children[0], static_cast<ListBuilder*>(builder)->element_builder(), &op->children[0]);
    }
    case Kind::kMap: {
      auto* list = static_cast<ListBuilder*>(builder);
      op->map_keys = static_cast<BinaryBuilder*>(list->key_builder());
      op->children.resize(1);
      return Compile(schema, node.children[0], list->value_builder(), &op->children[0]);
    }
    case Kind::kUnion: {
      int non_null = 0;
      for (int child : node.children) non_null += schema.nodes[child].kind != Kind::kNull;
      op->union_as_struct = non_null > 1;
      auto* struct_builder = op->union_as_struct ? static_cast<StructBuilder*>(builder) : nullptr;
      for (int child : node.children) {
        if (schema.nodes[child].kind == Kind::kNull) {
          op->branch_child.push_back(-1);
          continue;
        }
        int slot = static_cast<int>(op->children.size());
        op->branch_child.push_back(slot);
        op->children.emplace_back();
        ColumnBuilder* target = op->union_as_struct ? struct_builder->field_builder(slot) : builder;
        SLUICE_RETURN_IF_ERROR(Compile(schema, child, target, &op->children.back()));
      }
      return Status::OK();
    }
    default:
      return Status::OK();
  }
}

template <bool kAppend>
bool Read(const Op& op, Reader& in) {
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
      if constexpr (kAppend) static_cast<Int32Builder*>(op.builder)->Append(value);
      return true;
    }
    case Kind::kLong: {
      int64_t value;
      if (!in.ReadLong(&value)) return false;
      if (op.logical == Logical::kTimestampMillis || op.logical == Logical::kLocalTimestampMillis) {
        if (__builtin_mul_overflow(value, int64_t{1000}, &value)) return false;
      }
      if constexpr (kAppend) static_cast<Int64Builder*>(op.builder)->Append(value);
      return true;
    }
    case Kind::kFloat: {
      if (in.remaining() < 4) return false;
      float value;
      std::memcpy(&value, in.pos, 4);
      in.pos += 4;
      if constexpr (kAppend) static_cast<FloatBuilder*>(op.builder)->Append(value);
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
      bool ok = op.kind == Kind::kFixed ? in.ReadFixed(static_cast<size_t>(op.node->fixed_size), &bytes) : in.ReadBytes(&bytes);
      if (!ok) return false;
      if (op.logical == Logical::kDecimal) {
        int128_t value;
        if (!DecimalFromBytes(bytes, &value)) return false;
        if constexpr (kAppend) static_cast<DecimalBuilder*>(op.builder)->Append(value);
        return true;
      }
      if constexpr (kAppend) static_cast<BinaryBuilder*>(op.builder)->Append(bytes);
      return true;
    }
    case Kind::kEnum: {
      int32_t index;
      if (!in.ReadInt(&index) || index < 0 || static_cast<size_t>(index) >= op.node->symbols.size()) return false;
      if constexpr (kAppend) static_cast<BinaryBuilder*>(op.builder)->Append(op.node->symbols[index]);
      return true;
    }
    case Kind::kRecord: {
      for (const Op& field : op.children) {
        if (!Read<kAppend>(field, in)) return false;
      }
      if constexpr (kAppend) static_cast<StructBuilder*>(op.builder)->Append();
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
      if (child < 0) {
        if constexpr (kAppend) op.builder->AppendNull();
        return true;
      }
      if (!Read<kAppend>(op.children[child], in)) return false;
      if constexpr (kAppend) {
        if (op.union_as_struct) {
          auto* struct_builder = static_cast<StructBuilder*>(op.builder);
          for (int i = 0; i < struct_builder->num_fields(); ++i) {
            if (i != child) struct_builder->field_builder(i)->AppendNull();
          }
          struct_builder->Append();
        }
      }
      return true;
    }
  }
  return false;
}

class AvroDecoder final : public Decoder {
 public:
  explicit AvroDecoder(AvroSchemaPtr schema)
      : schema_(std::move(schema)), builder_(ColumnBuilder::Make(schema_->type)) {}

  Status Init() {
    auto* root = static_cast<StructBuilder*>(builder_.get());
    wrapped_ = schema_->nodes[schema_->root].kind != Kind::kRecord;
    return Compile(*schema_, schema_->root, wrapped_ ? root->field_builder(0) : root, &root_);
  }

  const TypePtr& type() const override { return schema_->type; }

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
  bool ReadDatum(std::string_view bytes) {
    Reader in{reinterpret_cast<const uint8_t*>(bytes.data()), reinterpret_cast<const uint8_t*>(bytes.data()) + bytes.size()};
    if (!Read<kAppend>(root_, in)) return false;
    if constexpr (kAppend) {
      if (wrapped_) static_cast<StructBuilder*>(builder_.get())->Append();
    }
    return in.pos == in.end;
  }

  bool DecodeOptimistically(const Column& encoded) {
    for (int64_t row = 0; row < encoded.length; ++row) {
      if (encoded.IsNull(row)) {
        builder_->AppendNull();
      } else if (!ReadDatum<true>(encoded.View(row))) {
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
      if (ReadDatum<false>(bytes)) {
        ReadDatum<true>(bytes);
      } else {
        builder_->AppendNull();
        stats->RecordMalformed(row);
      }
    }
  }

  AvroSchemaPtr schema_;
  std::unique_ptr<ColumnBuilder> builder_;
  Op root_;
  bool wrapped_ = false;
};

}  // namespace

Result<std::unique_ptr<Decoder>> MakeAvroDecoder(AvroSchemaPtr schema) {
  if (schema == nullptr || schema->type == nullptr) {
    return Status::Error(errors::kInvalidArgument, "an Avro decoder needs a parsed schema");
  }
  auto decoder = std::make_unique<AvroDecoder>(std::move(schema));
  SLUICE_RETURN_IF_ERROR(decoder->Init());
  return std::unique_ptr<Decoder>(std::move(decoder));
}

}  // namespace sluice::formats
