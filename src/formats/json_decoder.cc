// The JSON decoder. The struct type is compiled once into a tree of Nodes, each bound to the
// column builder it fills; each row is parsed with simdjson's DOM parser (reused, so its buffers
// are allocated once) and walked down the tree. A struct node first gathers its fields' values
// into a scratch array indexed by field (the last duplicate key wins, order does not matter),
// then appends them in field order. Fields that may not be null are checked (Fits) before
// anything is appended, since builders cannot take a row back.
#include <algorithm>
#include <cstring>
#include <limits>
#include <string>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>
#include <simdjson.h>

#include "sluice/core/builder.h"
#include "sluice/core/error_classes.h"
#include "sluice/core/iso_datetime.h"
#include "sluice/formats/json.h"

namespace sluice::formats {
namespace {

using simdjson::dom::element;
using simdjson::dom::element_type;

struct Node {
  TypeId id = TypeId::kString;
  bool nullable = true;
  ColumnBuilder* builder = nullptr;
  std::vector<Node> children;  // struct: one per field; array: the element; map: the value
  BinaryBuilder* map_keys = nullptr;
  // Struct only: field lookup and the per-row scratch of gathered values.
  std::unordered_map<std::string_view, int> field_index;
  std::vector<element> slots;
  std::vector<uint8_t> present;
};

Status Bind(const TypePtr& type, bool nullable, ColumnBuilder* builder, const std::string& path, Node* node) {
  node->id = type->id();
  node->nullable = nullable;
  node->builder = builder;
  switch (type->id()) {
    case TypeId::kBoolean:
    case TypeId::kByte:
    case TypeId::kShort:
    case TypeId::kInteger:
    case TypeId::kLong:
    case TypeId::kFloat:
    case TypeId::kDouble:
    case TypeId::kString:
    case TypeId::kDate:
    case TypeId::kTimestamp:
    case TypeId::kTimestampNtz:
      return Status::OK();
    case TypeId::kStruct: {
      auto* struct_builder = static_cast<StructBuilder*>(builder);
      node->children.resize(type->num_fields());
      for (int i = 0; i < type->num_fields(); ++i) {
        const Field& field = type->field(i);
        SLUICE_RETURN_IF_ERROR(Bind(field.type, field.nullable, struct_builder->field_builder(i), path + "." + field.name,
                                    &node->children[i]));
        node->field_index.emplace(type->field(i).name, i);
      }
      node->slots.resize(type->num_fields());
      node->present.resize(type->num_fields());
      return Status::OK();
    }
    case TypeId::kArray: {
      auto* list = static_cast<ListBuilder*>(builder);
      node->children.resize(1);
      return Bind(type->element_type(), type->contains_null(), list->element_builder(), path + "[]", &node->children[0]);
    }
    case TypeId::kMap: {
      if (type->key_type()->id() != TypeId::kString) {
        return Status::Error(errors::kInvalidArgument, fmt::format("{}: JSON object keys are strings, not {}", path,
                                                                   type->key_type()->ToString()));
      }
      auto* list = static_cast<ListBuilder*>(builder);
      node->map_keys = static_cast<BinaryBuilder*>(list->key_builder());
      node->children.resize(1);
      return Bind(type->value_type(), type->value_contains_null(), list->value_builder(), path + "{}", &node->children[0]);
    }
    case TypeId::kDecimal:
    case TypeId::kBinary:
      break;
  }
  return Status::Error(errors::kInvalidArgument,
                       fmt::format("{}: JSON documents cannot be decoded into {}", path, type->ToString()));
}

template <typename T>
bool ReadIntegral(element value, T* out) {
  int64_t v;
  if (value.get_int64().get(v) != simdjson::SUCCESS) return false;
  if (v < std::numeric_limits<T>::min() || v > std::numeric_limits<T>::max()) return false;
  *out = static_cast<T>(v);
  return true;
}

// Numbers, and the non-numeric spellings Spark's JSON reader accepts by default.
bool ReadDouble(element value, double* out) {
  if (value.get_double().get(*out) == simdjson::SUCCESS) return true;
  std::string_view text;
  if (value.get_string().get(text) != simdjson::SUCCESS) return false;
  if (text == "NaN") {
    *out = std::numeric_limits<double>::quiet_NaN();
  } else if (text == "Infinity" || text == "+Infinity" || text == "+INF" || text == "INF") {
    *out = std::numeric_limits<double>::infinity();
  } else if (text == "-Infinity" || text == "-INF") {
    *out = -std::numeric_limits<double>::infinity();
  } else {
    return false;
  }
  return true;
}

class JsonDecoder final : public Decoder {
 public:
  explicit JsonDecoder(TypePtr type) : type_(std::move(type)), builder_(ColumnBuilder::Make(type_)) {}

  Status Init() { return Bind(type_, true, builder_.get(), "value", &root_); }

  const TypePtr& type() const override { return type_; }

  Result<ColumnPtr> Decode(const Column& encoded, DecodeStats* stats) override;

 private:
  // Whether `value` can be appended to `node` without nulling a field that may not be null.
  bool Fits(Node& node, element value);
  // Appends `value` (null when `present` is false); requires node.nullable || Fits(node, value).
  void Append(Node& node, element value, bool present);
  void AppendMismatch(Node& node) {
    node.builder->AppendNull();
    ++mismatched_;
  }
  void Gather(Node& node, simdjson::dom::object object);
  // Whether every field of a gathered struct that may not be null has a value that fits.
  bool RequiredFieldsFit(Node& node);
  // Appends a struct row from its gathered slots; requires RequiredFieldsFit(node).
  void AppendGathered(Node& node);

  TypePtr type_;
  std::unique_ptr<ColumnBuilder> builder_;
  Node root_;
  simdjson::dom::parser parser_;
  std::vector<uint8_t> padded_;  // one row plus simdjson's padding
  int64_t mismatched_ = 0;
};

void JsonDecoder::Gather(Node& node, simdjson::dom::object object) {
  std::fill(node.present.begin(), node.present.end(), 0);
  for (auto [key, value] : object) {
    auto it = node.field_index.find(key);
    if (it == node.field_index.end()) continue;
    node.slots[it->second] = value;
    node.present[it->second] = 1;
  }
}

bool JsonDecoder::RequiredFieldsFit(Node& node) {
  for (size_t i = 0; i < node.children.size(); ++i) {
    Node& child = node.children[i];
    if (!child.nullable && (!node.present[i] || !Fits(child, node.slots[i]))) return false;
  }
  return true;
}

void JsonDecoder::AppendGathered(Node& node) {
  for (size_t i = 0; i < node.children.size(); ++i) {
    // Fits() may have re-gathered a child struct's slots, never this node's own.
    Append(node.children[i], node.slots[i], node.present[i] != 0);
  }
  static_cast<StructBuilder*>(node.builder)->Append();
}

bool JsonDecoder::Fits(Node& node, element value) {
  if (value.is_null()) return node.nullable;
  if (node.nullable) return true;
  switch (node.id) {
    case TypeId::kBoolean: return value.is_bool();
    case TypeId::kByte: { int8_t v; return ReadIntegral(value, &v); }
    case TypeId::kShort: { int16_t v; return ReadIntegral(value, &v); }
    case TypeId::kInteger: { int32_t v; return ReadIntegral(value, &v); }
    case TypeId::kLong: return value.is_int64();
    case TypeId::kFloat:
    case TypeId::kDouble: { double v; return ReadDouble(value, &v); }
    case TypeId::kString: return true;
    case TypeId::kDate: {
      std::string_view text;
      int32_t days;
      return value.get_string().get(text) == simdjson::SUCCESS && ParseIsoDate(text, &days);
    }
    case TypeId::kTimestamp:
    case TypeId::kTimestampNtz: {
      std::string_view text;
      int64_t micros;
      return value.get_string().get(text) == simdjson::SUCCESS && ParseIsoTimestamp(text, &micros);
    }
    case TypeId::kStruct: {
      simdjson::dom::object object;
      if (value.get_object().get(object) != simdjson::SUCCESS) return false;
      Gather(node, object);
      return RequiredFieldsFit(node);
    }
    case TypeId::kArray: {
      simdjson::dom::array array;
      if (value.get_array().get(array) != simdjson::SUCCESS) return false;
      for (element item : array) {
        if (!Fits(node.children[0], item)) return false;
      }
      return true;
    }
    case TypeId::kMap: {
      simdjson::dom::object object;
      if (value.get_object().get(object) != simdjson::SUCCESS) return false;
      for (auto [key, item] : object) {
        if (!Fits(node.children[0], item)) return false;
      }
      return true;
    }
    default:
      return false;
  }
}

void JsonDecoder::Append(Node& node, element value, bool present) {
  if (!present || value.is_null()) {
    node.builder->AppendNull();
    return;
  }
  switch (node.id) {
    case TypeId::kBoolean: {
      bool v;
      if (value.get_bool().get(v) != simdjson::SUCCESS) return AppendMismatch(node);
      static_cast<BooleanBuilder*>(node.builder)->Append(v ? 1 : 0);
      return;
    }
    case TypeId::kByte: {
      int8_t v;
      if (!ReadIntegral(value, &v)) return AppendMismatch(node);
      static_cast<Int8Builder*>(node.builder)->Append(v);
      return;
    }
    case TypeId::kShort: {
      int16_t v;
      if (!ReadIntegral(value, &v)) return AppendMismatch(node);
      static_cast<Int16Builder*>(node.builder)->Append(v);
      return;
    }
    case TypeId::kInteger: {
      int32_t v;
      if (!ReadIntegral(value, &v)) return AppendMismatch(node);
      static_cast<Int32Builder*>(node.builder)->Append(v);
      return;
    }
    case TypeId::kLong: {
      int64_t v;
      if (value.get_int64().get(v) != simdjson::SUCCESS) return AppendMismatch(node);
      static_cast<Int64Builder*>(node.builder)->Append(v);
      return;
    }
    case TypeId::kFloat: {
      double v;
      if (!ReadDouble(value, &v)) return AppendMismatch(node);
      static_cast<FloatBuilder*>(node.builder)->Append(static_cast<float>(v));
      return;
    }
    case TypeId::kDouble: {
      double v;
      if (!ReadDouble(value, &v)) return AppendMismatch(node);
      static_cast<DoubleBuilder*>(node.builder)->Append(v);
      return;
    }
    case TypeId::kString: {
      auto* builder = static_cast<BinaryBuilder*>(node.builder);
      std::string_view text;
      if (value.get_string().get(text) == simdjson::SUCCESS) {
        builder->Append(text);
      } else {
        builder->Append(simdjson::minify(value));  // rare: a non-string kept as its JSON text
      }
      return;
    }
    case TypeId::kDate: {
      std::string_view text;
      int32_t days;
      if (value.get_string().get(text) != simdjson::SUCCESS || !ParseIsoDate(text, &days)) return AppendMismatch(node);
      static_cast<Int32Builder*>(node.builder)->Append(days);
      return;
    }
    case TypeId::kTimestamp:
    case TypeId::kTimestampNtz: {
      std::string_view text;
      int64_t micros;
      if (value.get_string().get(text) != simdjson::SUCCESS || !ParseIsoTimestamp(text, &micros)) {
        return AppendMismatch(node);
      }
      static_cast<Int64Builder*>(node.builder)->Append(micros);
      return;
    }
    case TypeId::kStruct: {
      simdjson::dom::object object;
      if (value.get_object().get(object) != simdjson::SUCCESS) return AppendMismatch(node);
      Gather(node, object);
      if (!RequiredFieldsFit(node)) return AppendMismatch(node);
      AppendGathered(node);
      return;
    }
    case TypeId::kArray: {
      simdjson::dom::array array;
      if (value.get_array().get(array) != simdjson::SUCCESS) return AppendMismatch(node);
      Node& element_node = node.children[0];
      if (!element_node.nullable) {
        for (element item : array) {
          if (!Fits(element_node, item)) return AppendMismatch(node);
        }
      }
      for (element item : array) Append(element_node, item, true);
      static_cast<ListBuilder*>(node.builder)->Append();
      return;
    }
    case TypeId::kMap: {
      simdjson::dom::object object;
      if (value.get_object().get(object) != simdjson::SUCCESS) return AppendMismatch(node);
      Node& value_node = node.children[0];
      if (!value_node.nullable) {
        for (auto [key, item] : object) {
          if (!Fits(value_node, item)) return AppendMismatch(node);
        }
      }
      for (auto [key, item] : object) {
        node.map_keys->Append(key);
        Append(value_node, item, true);
      }
      static_cast<ListBuilder*>(node.builder)->Append();
      return;
    }
    default:
      node.builder->AppendNull();
      return;
  }
}

Result<ColumnPtr> JsonDecoder::Decode(const Column& encoded, DecodeStats* stats) {
  if (!encoded.type->is_binary_like()) {
    return Status::Error(errors::kInvalidArgument,
                         fmt::format("JSON decoding reads a binary or string column, not {}", encoded.type->ToString()));
  }
  DecodeStats local;
  DecodeStats& out = stats != nullptr ? *stats : local;
  mismatched_ = 0;
  builder_->Reserve(encoded.length);
  for (int64_t row = 0; row < encoded.length; ++row) {
    if (encoded.IsNull(row)) {
      root_.builder->AppendNull();
      continue;
    }
    std::string_view bytes = encoded.View(row);
    if (padded_.size() < bytes.size() + simdjson::SIMDJSON_PADDING) padded_.resize(bytes.size() + simdjson::SIMDJSON_PADDING);
    if (!bytes.empty()) std::memcpy(padded_.data(), bytes.data(), bytes.size());  // an empty row may have no data pointer
    simdjson::dom::object document;
    if (parser_.parse(padded_.data(), bytes.size(), false).get_object().get(document) != simdjson::SUCCESS) {
      root_.builder->AppendNull();
      out.RecordMalformed(row);
      continue;
    }
    Gather(root_, document);
    if (!RequiredFieldsFit(root_)) {
      root_.builder->AppendNull();
      out.RecordMalformed(row);
      continue;
    }
    AppendGathered(root_);
  }
  out.rows += encoded.length;
  out.mismatched_fields += mismatched_;
  return builder_->Finish();
}

}  // namespace

Result<std::unique_ptr<Decoder>> MakeJsonDecoder(TypePtr type) {
  if (type == nullptr || type->id() != TypeId::kStruct) {
    return Status::Error(errors::kInvalidArgument, "a JSON decoder decodes into a struct type");
  }
  auto decoder = std::make_unique<JsonDecoder>(std::move(type));
  SLUICE_RETURN_IF_ERROR(decoder->Init());
  return std::unique_ptr<Decoder>(std::move(decoder));
}

}  // namespace sluice::formats
