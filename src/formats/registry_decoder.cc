// The registry decoder strips the Confluent header of every row into one payload column per
// writer schema id (rows of other ids null there), decodes each with that id's compiled decoder,
// and, when a batch mixes ids, picks each row from its id's column. A batch of one id, the usual
// case, costs one copy of the payload bytes beyond the inner decoder. Protobuf needs none of this
// (fields match by number whatever the writer's version): the reader's decoder takes every row.
#include "sluice/formats/registry_decoder.h"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "sluice/core/compute.h"
#include "sluice/core/error_classes.h"
#include "sluice/formats/avro.h"
#include "sluice/formats/confluent.h"
#include "sluice/formats/json.h"
#include "sluice/formats/protobuf_decoder.h"

namespace sluice::formats {
namespace {

// Avro schema texts of everything `schema` references, dependencies first.
Result<std::vector<std::string>> ReferencedTexts(SchemaRegistryClient& client, const RegisteredSchema& schema) {
  SLUICE_ASSIGN_OR_RETURN(std::vector<ResolvedReference> references, client.ResolveReferences(schema));
  std::vector<std::string> texts;
  for (const ResolvedReference& reference : references) texts.push_back(reference.schema->schema);
  return texts;
}

Result<AvroSchemaPtr> ParseRegistered(SchemaRegistryClient& client, const RegisteredSchema& schema) {
  SLUICE_ASSIGN_OR_RETURN(std::vector<std::string> references, ReferencedTexts(client, schema));
  return ParseAvroSchema(schema.schema, references);
}

// Whether a failure to build a writer's decoder is the data's fault (its rows become malformed)
// rather than the registry's (the batch fails and is retried).
bool IsDataFault(const Status& status) {
  return status.error_class() == errors::kSchemaRegistryNotFound || status.error_class() == errors::kAvroSchemaInvalid;
}

class RegistryDecoder final : public Decoder {
 public:
  RegistryDecoder(std::shared_ptr<SchemaRegistryClient> client, SchemaFormat format, AvroSchemaPtr avro_reader,
                  std::unique_ptr<Decoder> json_decoder)
      : client_(std::move(client)), format_(format), avro_reader_(std::move(avro_reader)), json_decoder_(std::move(json_decoder)) {}

  const TypePtr& type() const override { return format_ == SchemaFormat::kJson ? json_decoder_->type() : avro_reader_->type; }

  Result<ColumnPtr> Decode(const Column& encoded, DecodeStats* stats) override;

 private:
  // The decoder for values written with schema `id`; null when such values are malformed.
  Result<Decoder*> DecoderFor(int32_t id);

  std::shared_ptr<SchemaRegistryClient> client_;
  SchemaFormat format_;
  AvroSchemaPtr avro_reader_;
  std::unique_ptr<Decoder> json_decoder_;
  std::map<int32_t, std::unique_ptr<Decoder>> by_id_;  // a null entry: the id's values are malformed
  std::vector<int32_t> row_ids_;                       // scratch, one per row
};

Result<Decoder*> RegistryDecoder::DecoderFor(int32_t id) {
  if (format_ == SchemaFormat::kJson) return json_decoder_.get();
  if (auto it = by_id_.find(id); it != by_id_.end()) return it->second.get();
  Result<RegisteredSchemaPtr> writer = client_->GetById(id);
  Result<std::unique_ptr<Decoder>> decoder = Status::Error(errors::kAvroSchemaInvalid, "not an Avro schema");
  if (!writer.ok()) {
    decoder = writer.status();
  } else if ((*writer)->format == SchemaFormat::kAvro) {
    Result<AvroSchemaPtr> parsed = ParseRegistered(*client_, **writer);
    decoder = parsed.ok() ? MakeAvroDecoder(*parsed, avro_reader_) : Result<std::unique_ptr<Decoder>>(parsed.status());
  }
  if (!decoder.ok() && !IsDataFault(decoder.status())) return decoder.status();
  Decoder* result = decoder.ok() ? decoder->get() : nullptr;
  by_id_[id] = decoder.ok() ? std::move(decoder).value() : nullptr;
  return result;
}

Result<ColumnPtr> RegistryDecoder::Decode(const Column& encoded, DecodeStats* stats) {
  if (!encoded.type->is_binary_like()) {
    return Status::Error(errors::kInvalidArgument,
                         fmt::format("registry decoding reads a binary or string column, not {}", encoded.type->ToString()));
  }
  DecodeStats local;
  DecodeStats& out = stats != nullptr ? *stats : local;
  constexpr int32_t kNoId = -1;  // a null row, or one without a valid header
  row_ids_.assign(static_cast<size_t>(encoded.length), kNoId);
  std::vector<int32_t> ids;  // distinct ids in first-seen order; few per batch
  std::vector<int64_t> bad_headers;
  for (int64_t row = 0; row < encoded.length; ++row) {
    if (encoded.IsNull(row)) continue;
    int32_t id;
    std::string_view payload;
    if (!ParseConfluentHeader(encoded.View(row), &id, &payload) || id < 0) {
      bad_headers.push_back(row);
      continue;
    }
    row_ids_[row] = id;
    if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
  }

  std::vector<ColumnPtr> decoded;
  DecodeStats merged;
  for (int32_t id : ids) {
    SLUICE_ASSIGN_OR_RETURN(Decoder * decoder, DecoderFor(id));
    if (decoder == nullptr) {
      for (int64_t row = 0; row < encoded.length; ++row) {
        if (row_ids_[row] == id) merged.RecordMalformed(row);
      }
      decoded.push_back(MakeNullColumn(type(), encoded.length));
      continue;
    }
    auto payloads = std::make_shared<Column>();
    payloads->type = DataType::Binary();
    payloads->length = encoded.length;
    payloads->offsets.reserve(static_cast<size_t>(encoded.length) + 1);
    payloads->offsets.push_back(0);
    payloads->validity.assign(static_cast<size_t>(encoded.length), 0);
    payloads->data.reserve(encoded.data.size());
    for (int64_t row = 0; row < encoded.length; ++row) {
      if (row_ids_[row] == id) {
        std::string_view payload = encoded.View(row).substr(kConfluentHeaderSize);
        payloads->data.insert(payloads->data.end(), payload.begin(), payload.end());
        payloads->validity[row] = 1;
      } else {
        ++payloads->null_count;
      }
      payloads->offsets.push_back(static_cast<int64_t>(payloads->data.size()));
    }
    if (payloads->null_count == 0) payloads->validity.clear();
    DecodeStats id_stats;
    SLUICE_ASSIGN_OR_RETURN(ColumnPtr column, decoder->Decode(*payloads, &id_stats));
    merged.mismatched_fields += id_stats.mismatched_fields;
    merged.malformed += id_stats.malformed;
    merged.malformed_rows.insert(merged.malformed_rows.end(), id_stats.malformed_rows.begin(), id_stats.malformed_rows.end());
    decoded.push_back(std::move(column));
  }

  ColumnPtr result;
  if (decoded.empty()) {
    result = MakeNullColumn(type(), encoded.length);
  } else if (decoded.size() == 1) {
    result = decoded[0];
  } else {
    SLUICE_ASSIGN_OR_RETURN(ColumnPtr all, Concatenate(decoded));
    std::vector<int64_t> indices(static_cast<size_t>(encoded.length));
    for (int64_t row = 0; row < encoded.length; ++row) {
      int64_t group = row_ids_[row] == kNoId ? 0 : std::find(ids.begin(), ids.end(), row_ids_[row]) - ids.begin();
      indices[row] = group * encoded.length + row;
    }
    result = Take(all, indices);
  }

  for (int64_t row : bad_headers) merged.RecordMalformed(row);
  std::sort(merged.malformed_rows.begin(), merged.malformed_rows.end());
  out.rows += encoded.length;
  out.malformed += merged.malformed;
  out.mismatched_fields += merged.mismatched_fields;
  for (int64_t row : merged.malformed_rows) {
    if (out.malformed_rows.size() < DecodeStats::kMaxSampledRows) out.malformed_rows.push_back(row);
  }
  return result;
}

}  // namespace

Result<std::unique_ptr<Decoder>> MakeRegistryDecoder(std::shared_ptr<SchemaRegistryClient> client, RegisteredSchemaPtr reader,
                                                     std::string_view protobuf_message_name) {
  if (client == nullptr || reader == nullptr) {
    return Status::Error(errors::kInvalidArgument, "a registry decoder needs a client and a reader schema");
  }
  switch (reader->format) {
    case SchemaFormat::kAvro: {
      SLUICE_ASSIGN_OR_RETURN(AvroSchemaPtr schema, ParseRegistered(*client, *reader));
      return std::unique_ptr<Decoder>(new RegistryDecoder(std::move(client), SchemaFormat::kAvro, std::move(schema), nullptr));
    }
    case SchemaFormat::kJson: {
      SLUICE_ASSIGN_OR_RETURN(TypePtr type, JsonSchemaToType(reader->schema));
      SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<Decoder> json, MakeJsonDecoder(std::move(type)));
      return std::unique_ptr<Decoder>(new RegistryDecoder(std::move(client), SchemaFormat::kJson, nullptr, std::move(json)));
    }
    case SchemaFormat::kProtobuf: {
      SLUICE_ASSIGN_OR_RETURN(std::vector<ResolvedReference> references, client->ResolveReferences(*reader));
      std::vector<ProtobufSourceFile> imports;
      for (const ResolvedReference& reference : references) imports.push_back({reference.name, reference.schema->schema});
      std::string message_name(protobuf_message_name);
      if (message_name.empty()) {
        constexpr int32_t kFirstMessage[] = {0};
        SLUICE_ASSIGN_OR_RETURN(message_name, ProtobufMessageNameAt(reader->schema, kFirstMessage, imports));
      }
      SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<ProtobufDecoder> decoder,
                              ProtobufDecoder::Make(reader->schema, message_name, imports, ProtobufFraming::kConfluent));
      return std::unique_ptr<Decoder>(std::move(decoder));
    }
    case SchemaFormat::kBinary:
      break;  // no registry schema type: RegistrySubjectOf refuses it
  }
  return Status::Error(errors::kInternalError, "unknown schema format");
}

}  // namespace sluice::formats
