// .proto text -> the compiled message tree the wire decoder walks (see protobuf_schema.h).
#include "formats/protobuf_schema.h"

#include <google/protobuf/compiler/parser.h>
#include <google/protobuf/descriptor.h>
#include <google/protobuf/descriptor.pb.h>
#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <algorithm>
#include <map>
#include <set>

#include "sluice/core/error_classes.h"

namespace sluice::formats::protobuf {
namespace {

namespace pb = google::protobuf;

// The name the main schema text is known by in error messages and to the descriptor pool.
constexpr std::string_view kMainFileName = "schema.proto";
// Deeper nesting than this is refused: it keeps the decoder's recursion bounded.
constexpr int kMaxNestingDepth = 64;
// Field numbers below this are looked up in a table; larger ones (rare) in a list.
constexpr uint32_t kDenseFieldNumbers = 1024;

class ParseErrors final : public pb::io::ErrorCollector {
 public:
  explicit ParseErrors(std::string_view file) : file_(file) {}
  void AddError(int line, pb::io::ColumnNumber column, const std::string& message) override {
    if (!text_.empty()) text_ += "; ";
    text_ += file_ + ":" + std::to_string(line + 1) + ":" + std::to_string(column + 1) + ": " + message;
  }
  const std::string& text() const { return text_; }

 private:
  std::string file_;
  std::string text_;
};

class BuildErrors final : public pb::DescriptorPool::ErrorCollector {
 public:
  void AddError(const std::string& filename, const std::string& element_name, const pb::Message*, ErrorLocation,
                const std::string& message) override {
    if (!text_.empty()) text_ += "; ";
    text_ += filename + ": " + (element_name.empty() ? "" : element_name + ": ") + message;
  }
  const std::string& text() const { return text_; }

 private:
  std::string text_;
};

Status ParseFile(std::string_view name, std::string_view text, pb::FileDescriptorProto* out) {
  pb::io::ArrayInputStream input(text.data(), static_cast<int>(text.size()));
  ParseErrors errors(name);
  pb::io::Tokenizer tokenizer(&input, &errors);
  pb::compiler::Parser parser;
  parser.RecordErrorsTo(&errors);
  if (!parser.Parse(&tokenizer, out) || !errors.text().empty()) {
    return Status::Error(errors::kProtobufSchemaInvalid, errors.text().empty() ? std::string(name) + ": cannot parse"
                                                                               : errors.text());
  }
  out->set_name(std::string(name));
  return Status::OK();
}

// Builds the parsed files into `pool`, each after the files it imports.
class FileBuilder {
 public:
  FileBuilder(pb::DescriptorPool* pool, std::map<std::string, pb::FileDescriptorProto>* files)
      : pool_(pool), files_(files) {}

  Status Build(const std::string& name) {
    if (built_.contains(name)) return Status::OK();
    auto it = files_->find(name);
    if (it == files_->end()) return Status::OK();  // the pool resolves it (a well-known type) or reports it
    if (!in_progress_.insert(name).second) {
      return Status::Error(errors::kProtobufSchemaInvalid, "import cycle through " + name);
    }
    for (const std::string& dependency : it->second.dependency()) SLUICE_RETURN_IF_ERROR(Build(dependency));
    BuildErrors errors;
    if (pool_->BuildFileCollectingErrors(it->second, &errors) == nullptr) {
      return Status::Error(errors::kProtobufSchemaInvalid, errors.text());
    }
    in_progress_.erase(name);
    built_.insert(name);
    return Status::OK();
  }

 private:
  pb::DescriptorPool* pool_;
  std::map<std::string, pb::FileDescriptorProto>* files_;
  std::set<std::string> built_;
  std::set<std::string> in_progress_;
};

// The schema text and its imports, parsed and built into a descriptor pool. The pool's underlay
// is the generated pool, which holds the well-known types (timestamp.proto, wrappers.proto, ...)
// that libprotobuf is built with, so imports of them resolve without files on disk.
class LoadedSchema {
 public:
  LoadedSchema() : pool_(pb::DescriptorPool::generated_pool()) {}

  Status Load(std::string_view proto_text, const std::vector<ProtobufSourceFile>& imports) {
    std::map<std::string, pb::FileDescriptorProto> files;
    SLUICE_RETURN_IF_ERROR(ParseFile(kMainFileName, proto_text, &files[std::string(kMainFileName)]));
    for (const ProtobufSourceFile& import : imports) {
      if (files.contains(import.name)) {
        return Status::Error(errors::kProtobufSchemaInvalid, "two files named " + import.name);
      }
      SLUICE_RETURN_IF_ERROR(ParseFile(import.name, import.text, &files[import.name]));
    }
    FileBuilder builder(&pool_, &files);
    SLUICE_RETURN_IF_ERROR(builder.Build(std::string(kMainFileName)));
    main_ = pool_.FindFileByName(std::string(kMainFileName));
    return Status::OK();
  }

  const pb::DescriptorPool& pool() const { return pool_; }
  const pb::FileDescriptor* main_file() const { return main_; }

 private:
  pb::DescriptorPool pool_;
  const pb::FileDescriptor* main_ = nullptr;
};

void CollectMessageNames(const pb::Descriptor* message, std::vector<std::string>* names) {
  if (message->options().map_entry()) return;
  names->push_back(message->full_name());
  for (int i = 0; i < message->nested_type_count(); ++i) CollectMessageNames(message->nested_type(i), names);
}

bool IsEmptyStruct(const ProtobufMessage& message) {
  return message.shape == ProtobufMessage::Shape::kStruct && message.fields.empty();
}

// Whether a compiled field's values are messages without fields (for a map: its values).
bool HoldsOnlyEmptyMessages(const ProtobufField& field) {
  if (field.kind != ValueKind::kMessage) return false;
  if (!field.is_map) return IsEmptyStruct(*field.message);
  const ProtobufField& value = field.message->fields.at(1);
  return value.kind == ValueKind::kMessage && IsEmptyStruct(*value.message);
}

// `path` is the field's dot path; empty for the message named by message_name itself.
Status Unsupported(const std::string& path, std::string_view what) {
  std::string subject = path.empty() ? std::string("the message") : "field `" + path + "`";
  return Status::Error(errors::kProtobufUnsupportedField, subject + " " + std::string(what));
}

bool IsWrapper(std::string_view full_name) {
  static const std::set<std::string_view> kWrappers = {
      "google.protobuf.DoubleValue", "google.protobuf.FloatValue",  "google.protobuf.Int64Value",
      "google.protobuf.UInt64Value", "google.protobuf.Int32Value",  "google.protobuf.UInt32Value",
      "google.protobuf.BoolValue",   "google.protobuf.StringValue", "google.protobuf.BytesValue"};
  return kWrappers.contains(full_name);
}

class Compiler {
 public:
  Status CompileMessage(const pb::Descriptor* descriptor, const std::string& path, int depth,
                        ProtobufMessage* out) {
    if (depth > kMaxNestingDepth) {
      return Unsupported(path, "nests messages deeper than " + std::to_string(kMaxNestingDepth) + " levels");
    }
    const std::string& name = descriptor->full_name();
    if (name == "google.protobuf.Duration" || name == "google.protobuf.Struct" || name == "google.protobuf.Any" ||
        name == "google.protobuf.Value" || name == "google.protobuf.ListValue") {
      return Unsupported(path, "has type " + name + ", which has no column mapping; use another type");
    }
    if (std::find(stack_.begin(), stack_.end(), descriptor) != stack_.end()) {
      return Unsupported(path, "makes message " + name + " contain itself; recursive messages have no column type");
    }
    stack_.push_back(descriptor);
    out->full_name = name;
    out->num_oneofs = descriptor->real_oneof_decl_count();
    out->oneof_current.assign(out->num_oneofs, -1);
    if (name == "google.protobuf.Timestamp") {
      out->shape = ProtobufMessage::Shape::kTimestamp;
    } else if (IsWrapper(name)) {
      out->shape = ProtobufMessage::Shape::kWrapper;
    } else if (descriptor->options().map_entry()) {
      out->shape = ProtobufMessage::Shape::kMapEntry;
    }

    std::vector<Field> columns;
    for (int i = 0; i < descriptor->field_count(); ++i) {
      const pb::FieldDescriptor* field = descriptor->field(i);
      std::string field_path = path.empty() ? field->name() : path + "." + field->name();
      ProtobufField compiled;
      TypePtr type;
      SLUICE_RETURN_IF_ERROR(CompileField(field, field_path, depth, &compiled, &type));
      // As Spark does by default, a field of a message type without fields (such as
      // google.protobuf.Empty) is left out: an empty struct has no Parquet form, so a Delta
      // table could not hold it. Its occurrences are then skipped like unknown fields.
      if (out->shape == ProtobufMessage::Shape::kStruct && HoldsOnlyEmptyMessages(compiled)) continue;
      if (out->shape == ProtobufMessage::Shape::kMapEntry) {
        // A map's key and value take their defaults when absent, as libprotobuf gives them.
        compiled.has_presence = compiled.kind == ValueKind::kMessage;
      }
      columns.push_back(Field{compiled.name, std::move(type), true, "{}"});
      out->fields.push_back(std::move(compiled));
    }
    out->slots.resize(out->fields.size());
    IndexFieldNumbers(out);

    switch (out->shape) {
      case ProtobufMessage::Shape::kStruct: {
        SLUICE_ASSIGN_OR_RETURN(out->type, DataType::Struct(std::move(columns)));
        break;
      }
      case ProtobufMessage::Shape::kTimestamp:
        out->type = DataType::Timestamp();
        break;
      case ProtobufMessage::Shape::kWrapper:
        out->type = columns.at(0).type;
        break;
      case ProtobufMessage::Shape::kMapEntry:
        out->type = DataType::Map(columns.at(0).type, columns.at(1).type);
        break;
    }
    stack_.pop_back();
    return Status::OK();
  }

 private:
  Status CompileField(const pb::FieldDescriptor* field, const std::string& path, int depth, ProtobufField* out,
                      TypePtr* type) {
    out->name = field->name();
    out->number = static_cast<uint32_t>(field->number());
    out->repeated = field->is_repeated();
    out->has_presence = !field->is_repeated() && field->has_presence();
    if (const pb::OneofDescriptor* oneof = field->real_containing_oneof()) out->oneof = oneof->index();

    TypePtr value_type;
    switch (field->type()) {
      case pb::FieldDescriptor::TYPE_DOUBLE:
        out->kind = ValueKind::kDouble;
        value_type = DataType::Double();
        break;
      case pb::FieldDescriptor::TYPE_FLOAT:
        out->kind = ValueKind::kFloat;
        value_type = DataType::Float();
        break;
      case pb::FieldDescriptor::TYPE_INT32:
        out->kind = ValueKind::kInt32;
        value_type = DataType::Integer();
        break;
      case pb::FieldDescriptor::TYPE_SINT32:
        out->kind = ValueKind::kSint32;
        value_type = DataType::Integer();
        break;
      case pb::FieldDescriptor::TYPE_SFIXED32:
        out->kind = ValueKind::kSfixed32;
        value_type = DataType::Integer();
        break;
      case pb::FieldDescriptor::TYPE_INT64:
        out->kind = ValueKind::kInt64;
        value_type = DataType::Long();
        break;
      case pb::FieldDescriptor::TYPE_SINT64:
        out->kind = ValueKind::kSint64;
        value_type = DataType::Long();
        break;
      case pb::FieldDescriptor::TYPE_SFIXED64:
        out->kind = ValueKind::kSfixed64;
        value_type = DataType::Long();
        break;
      case pb::FieldDescriptor::TYPE_UINT32:
        out->kind = ValueKind::kUint32;
        value_type = DataType::Long();
        break;
      case pb::FieldDescriptor::TYPE_UINT64: {
        out->kind = ValueKind::kUint64;
        SLUICE_ASSIGN_OR_RETURN(value_type, DataType::Decimal(20, 0));
        break;
      }
      case pb::FieldDescriptor::TYPE_BOOL:
        out->kind = ValueKind::kBool;
        value_type = DataType::Boolean();
        break;
      case pb::FieldDescriptor::TYPE_ENUM:
        out->kind = ValueKind::kEnum;
        out->enum_names = EnumNamesOf(field->enum_type());
        value_type = DataType::String();
        break;
      case pb::FieldDescriptor::TYPE_STRING:
        out->kind = ValueKind::kString;
        value_type = DataType::String();
        break;
      case pb::FieldDescriptor::TYPE_BYTES:
        out->kind = ValueKind::kBytes;
        value_type = DataType::Binary();
        break;
      case pb::FieldDescriptor::TYPE_FIXED32:
      case pb::FieldDescriptor::TYPE_FIXED64:
        return Unsupported(path, std::string("has type ") + field->type_name() +
                                     ", which sluice does not map; use uint32/uint64 (or sfixed32/sfixed64)");
      case pb::FieldDescriptor::TYPE_GROUP:
        return Unsupported(path, "is a group; groups are deprecated and not supported, use a nested message");
      case pb::FieldDescriptor::TYPE_MESSAGE: {
        if (field->is_map()) {
          const pb::FieldDescriptor* key = field->message_type()->map_key();
          if (key->type() != pb::FieldDescriptor::TYPE_STRING) {
            return Unsupported(path, std::string("is a map with ") + key->type_name() +
                                         " keys; only maps with string keys are supported");
          }
          out->is_map = true;
        }
        out->kind = ValueKind::kMessage;
        out->message = std::make_unique<ProtobufMessage>();
        SLUICE_RETURN_IF_ERROR(CompileMessage(field->message_type(), path, depth + 1, out->message.get()));
        value_type = out->message->type;
        break;
      }
    }
    out->wire_type = WireTypeOf(out->kind);
    *type = out->repeated && !out->is_map ? DataType::Array(value_type) : value_type;
    return Status::OK();
  }

  std::shared_ptr<const EnumNames> EnumNamesOf(const pb::EnumDescriptor* descriptor) {
    std::shared_ptr<const EnumNames>& names = enums_[descriptor];
    if (names == nullptr) {
      auto built = std::make_shared<EnumNames>();
      for (int i = 0; i < descriptor->value_count(); ++i) {
        built->Add(descriptor->value(i)->number(), descriptor->value(i)->name());
      }
      built->Seal();
      names = std::move(built);
    }
    return names;
  }

  static void IndexFieldNumbers(ProtobufMessage* message) {
    uint32_t dense_end = 0;
    for (const ProtobufField& field : message->fields) {
      if (field.number < kDenseFieldNumbers) dense_end = std::max(dense_end, field.number + 1);
    }
    message->by_number.assign(dense_end, -1);
    for (size_t i = 0; i < message->fields.size(); ++i) {
      uint32_t number = message->fields[i].number;
      if (number < kDenseFieldNumbers) {
        message->by_number[number] = static_cast<int32_t>(i);
      } else {
        message->sparse_numbers.emplace_back(number, static_cast<int32_t>(i));
      }
    }
    message->dense = message->sparse_numbers.empty();
  }

  std::vector<const pb::Descriptor*> stack_;
  std::map<const pb::EnumDescriptor*, std::shared_ptr<const EnumNames>> enums_;
};

}  // namespace

WireType WireTypeOf(ValueKind kind) {
  switch (kind) {
    case ValueKind::kDouble:
    case ValueKind::kSfixed64:
      return WireType::kFixed64;
    case ValueKind::kFloat:
    case ValueKind::kSfixed32:
      return WireType::kFixed32;
    case ValueKind::kString:
    case ValueKind::kBytes:
    case ValueKind::kMessage:
      return WireType::kLengthDelimited;
    default:
      return WireType::kVarint;
  }
}

void EnumNames::Add(int32_t number, std::string_view name) {
  auto it = std::lower_bound(entries_.begin(), entries_.end(), number,
                             [](const Entry& entry, int32_t n) { return entry.number < n; });
  if (it != entries_.end() && it->number == number) return;  // an alias: the first name stands
  entries_.insert(it, Entry{number, std::string(name)});
}

void EnumNames::Seal() {
  constexpr int64_t kMaxDenseRange = 4096;
  dense_.clear();
  if (entries_.empty()) return;
  int64_t range = int64_t{entries_.back().number} - entries_.front().number + 1;
  if (range > kMaxDenseRange) return;
  dense_min_ = entries_.front().number;
  dense_.assign(static_cast<size_t>(range), -1);
  for (size_t i = 0; i < entries_.size(); ++i) dense_[entries_[i].number - dense_min_] = static_cast<int32_t>(i);
}

std::string_view EnumNames::Find(int32_t number) const {
  if (!dense_.empty()) {
    int64_t index = int64_t{number} - dense_min_;
    if (index < 0 || index >= static_cast<int64_t>(dense_.size()) || dense_[index] < 0) return {};
    return entries_[dense_[index]].name;
  }
  auto it = std::lower_bound(entries_.begin(), entries_.end(), number,
                             [](const Entry& entry, int32_t n) { return entry.number < n; });
  if (it == entries_.end() || it->number != number) return {};
  return it->name;
}

Result<CompiledProtobufSchema> CompileProtobufSchema(std::string_view proto_text, std::string_view message_name,
                                                     const std::vector<ProtobufSourceFile>& imports) {
  LoadedSchema schema;
  SLUICE_RETURN_IF_ERROR(schema.Load(proto_text, imports));
  std::string_view name = message_name;
  if (name.starts_with('.')) name.remove_prefix(1);
  const pb::Descriptor* message = schema.pool().FindMessageTypeByName(std::string(name));
  if (message == nullptr) {
    std::vector<std::string> known;
    for (int i = 0; i < schema.main_file()->message_type_count(); ++i) {
      CollectMessageNames(schema.main_file()->message_type(i), &known);
    }
    std::string list;
    for (const std::string& k : known) list += (list.empty() ? "" : ", ") + k;
    return Status::Error(errors::kProtobufMessageNotFound,
                         "message_name `" + std::string(message_name) + "` names no message of the schema" +
                             (list.empty() ? std::string(" (it declares none)") : "; it declares: " + list));
  }
  CompiledProtobufSchema compiled;
  compiled.root = std::make_unique<ProtobufMessage>();
  Compiler compiler;
  SLUICE_RETURN_IF_ERROR(compiler.CompileMessage(message, "", 0, compiled.root.get()));
  if (compiled.root->shape != ProtobufMessage::Shape::kStruct) {
    return Status::Error(errors::kProtobufUnsupportedField,
                         "message_name `" + std::string(message_name) +
                             "` is a well-known wrapper or Timestamp type; a stream decodes into a struct, "
                             "so name a message that contains it");
  }
  if (compiled.root->fields.empty()) {
    return Status::Error(errors::kProtobufUnsupportedField,
                         "message_name `" + std::string(message_name) +
                             "` names a message without fields (or only fields of empty message types); "
                             "a stream's value needs at least one column");
  }
  if (message->file() == schema.main_file()) {
    for (const pb::Descriptor* m = message; m != nullptr; m = m->containing_type()) {
      compiled.message_indexes.insert(compiled.message_indexes.begin(), m->index());
    }
  }
  return compiled;
}

Result<std::string> FindProtobufMessageName(std::string_view proto_text, std::span<const int32_t> message_indexes,
                                            const std::vector<ProtobufSourceFile>& imports) {
  LoadedSchema schema;
  SLUICE_RETURN_IF_ERROR(schema.Load(proto_text, imports));
  const pb::Descriptor* message = nullptr;
  for (size_t i = 0; i < message_indexes.size(); ++i) {
    int32_t index = message_indexes[i];
    int count = message == nullptr ? schema.main_file()->message_type_count() : message->nested_type_count();
    if (index < 0 || index >= count) {
      message = nullptr;
      break;
    }
    message = message == nullptr ? schema.main_file()->message_type(index) : message->nested_type(index);
  }
  if (message == nullptr) {
    std::string path;
    for (int32_t index : message_indexes) path += (path.empty() ? "" : ",") + std::to_string(index);
    return Status::Error(errors::kProtobufMessageNotFound,
                         "the message-index path [" + path + "] leads to no message of the schema");
  }
  return message->full_name();
}

}  // namespace sluice::formats::protobuf

namespace sluice::formats {
namespace {

// Kinds whose values are encoded alike on the wire, so that a value written as one reads as the
// other: plain varints, zig-zag varints, 4-byte and 8-byte fixed values, length-delimited bytes.
int EncodingFamily(protobuf::ValueKind kind) {
  using protobuf::ValueKind;
  switch (kind) {
    case ValueKind::kInt32:
    case ValueKind::kInt64:
    case ValueKind::kUint32:
    case ValueKind::kUint64:
    case ValueKind::kBool:
    case ValueKind::kEnum: return 0;
    case ValueKind::kSint32:
    case ValueKind::kSint64: return 1;
    case ValueKind::kSfixed32:
    case ValueKind::kFloat: return 2;
    case ValueKind::kSfixed64:
    case ValueKind::kDouble: return 3;
    case ValueKind::kString:
    case ValueKind::kBytes:
    case ValueKind::kMessage: return 4;
  }
  return -1;
}

std::optional<std::string> EncodingChange(const protobuf::ProtobufMessage& before, const protobuf::ProtobufMessage& after,
                                          const std::string& path) {
  for (const protobuf::ProtobufField& old_field : before.fields) {
    const int index = after.FindField(old_field.number);
    if (index < 0) continue;
    const protobuf::ProtobufField& new_field = after.fields[static_cast<size_t>(index)];
    const std::string field_path = path.empty() ? new_field.name : path + "." + new_field.name;
    if (EncodingFamily(old_field.kind) != EncodingFamily(new_field.kind)) {
      return field_path + " (field " + std::to_string(new_field.number) + ") changes its wire encoding";
    }
    if (old_field.message != nullptr && new_field.message != nullptr) {
      if (auto change = EncodingChange(*old_field.message, *new_field.message, field_path)) return change;
    }
  }
  return std::nullopt;
}

}  // namespace

Result<std::optional<std::string>> ProtobufEncodingChange(const DecoderSpec& before, const DecoderSpec& after) {
  SLUICE_ASSIGN_OR_RETURN(protobuf::CompiledProtobufSchema old_schema,
                          protobuf::CompileProtobufSchema(before.schema, before.message_name, {}));
  SLUICE_ASSIGN_OR_RETURN(protobuf::CompiledProtobufSchema new_schema,
                          protobuf::CompileProtobufSchema(after.schema, after.message_name, {}));
  return EncodingChange(*old_schema.root, *new_schema.root, "");
}

}  // namespace sluice::formats
