// Decoding Confluent-framed values (confluent.h) whose writer schemas live in a Schema Registry.
//
// The decoder is built from a reader schema, normally the subject's latest version resolved when
// the stream starts (and again every schema_refresh_interval, by building a new decoder). Each
// value names its writer schema by id; the writer schema is fetched once per id (the client
// caches it), compiled against the reader schema (Avro resolution, avro.h), and kept for the
// decoder's life, so rows written with older or newer schemas land in the reader's columns.
// JSON values need no writer schema: every id decodes with the reader's JSON Schema. Nor do
// Protobuf values, whose fields are matched by number: they decode with the reader's message
// (protobuf_decoder.h, Confluent framing), its imports being the reader's references.
//
// Permissive, as every Decoder: a value without the Confluent header, naming an id the registry
// does not hold, written with a schema that cannot be resolved into the reader's, or not a valid
// datum becomes a null row and is counted. Decode() fails only when the registry cannot be asked
// (SCHEMA_REGISTRY_REQUEST_FAILED / _UNAUTHORIZED): that is not the data's fault, and retrying
// the batch later decodes it fully.
//
// Thread safety: as every Decoder, one instance serves one thread at a time; the client may be
// shared between decoders.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <string_view>

#include "sluice/formats/decoder.h"
#include "sluice/formats/schema_registry.h"

namespace sluice::formats {

// `reader`'s references are fetched through `client`. `protobuf_message_name` names the message
// of a Protobuf reader schema (empty: the first message of the file, as Confluent's serializers
// default to). Fails with the reader schema's own errors.
Result<std::unique_ptr<Decoder>> MakeRegistryDecoder(std::shared_ptr<SchemaRegistryClient> client, RegisteredSchemaPtr reader,
                                                     std::string_view protobuf_message_name = {});

// The subject a stream's key or value reads its schema from: a DecoderSpec's registry_options,
// validated, with the subject named.
struct RegistrySubject {
  SchemaRegistryConfig config;
  SchemaFormat format = SchemaFormat::kAvro;
  std::string subject;
  int32_t version = 0;  // 0: the latest
  std::string message_name;  // Protobuf: the message to decode (empty: the schema's first)
  std::chrono::microseconds refresh_interval{0};
};

// Checks `spec.registry_options` (INVALID_OPTIONS naming the option) and names the subject: the
// `subject` option, else the strategy's subject for `topic` (the stream's topic; empty when it
// reads several, in which case TopicNameStrategy and TopicRecordNameStrategy need `subject`).
// Asks nothing of the registry.
Result<RegistrySubject> RegistrySubjectOf(const DecoderSpec& spec, std::string_view topic, bool is_key);

// A registry decoder made from the subject's schema as the registry holds it now.
struct SubjectDecoder {
  RegisteredSchemaPtr reader;
  std::unique_ptr<Decoder> decoder;
};

// Fetches the subject's schema (SCHEMA_REGISTRY_* errors), checks that it is of the declared
// format (INVALID_OPTIONS otherwise) and builds the decoder (the schema's own errors).
Result<SubjectDecoder> MakeSubjectDecoder(std::shared_ptr<SchemaRegistryClient> client, const RegistrySubject& subject);

}  // namespace sluice::formats
