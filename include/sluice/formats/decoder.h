// Decoders turn Kafka key or value bytes into typed columnar data.
//
// A Decoder is built once from a schema (see MakeDecoder) and then decodes whole columns: the
// input is a binary (or string) column with one encoded value per row, the output one struct
// column of type() with the same number of rows. Decoding is permissive, as Spark's PERMISSIVE
// mode: a value that cannot be decoded becomes a null struct row and is counted in DecodeStats,
// never an error; a null input row (a Kafka tombstone) becomes a null struct row and is not
// counted as malformed. Decode() fails only for problems that are not the data's fault (an input
// column that is not binary or string, a schema registry that cannot be asked).
//
// Implementations append straight into column builders: no heap allocation per row on the hot
// path beyond the builders' geometric growth.
//
// Thread safety: a Decoder may keep scratch state between calls, so one instance is used by one
// thread at a time; build one per thread (construction is cheap next to decoding).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sluice/core/column.h"
#include "sluice/core/decode_stats.h"
#include "sluice/core/status.h"
#include "sluice/core/types.h"

namespace sluice::formats {

class Decoder {
 public:
  virtual ~Decoder();

  // The struct type every decoded column has.
  virtual const TypePtr& type() const = 0;

  // Decodes every row of `encoded` (type binary or string). `stats` may be null. Fails with
  // INVALID_ARGUMENT if `encoded` is of another type; malformed values never fail the call.
  virtual Result<ColumnPtr> Decode(const Column& encoded, DecodeStats* stats) = 0;
};

// The encodings a stream's key or value may have.
enum class SchemaFormat {
  kJson,      // JSON documents described by an inline JSON Schema (draft 7 subset, docs/formats.md)
  kAvro,      // Avro binary encoding of a single datum, described by Avro schema JSON
  kProtobuf,  // Protobuf wire format of the message `message_name` in the .proto text `schema`
  kBinary,    // the bytes as they are, without a schema: nothing decodes them (MakeDecoder refuses it)
};

// Everything a decoder needs, as the stream's `schema` options give it.
struct DecoderSpec {
  SchemaFormat format = SchemaFormat::kJson;
  // JSON Schema text, Avro schema JSON text, or .proto file text.
  std::string schema;
  // Protobuf only: the fully qualified message name ("com.example.Event").
  std::string message_name;
  // Instead of `format` and `schema`: the options of a `schema_registry` block
  // (SchemaRegistryOptionSpecs()), naming a registry subject whose schema is fetched when the
  // stream starts (registry_decoder.h). MakeDecoder() does not take such specs.
  std::map<std::string, std::string> registry_options = {};
  // Avro only: the schemas this key or value had before (a stream's earlier definitions), newest
  // first. A datum `schema` cannot read to its end is read with each of them and projected to
  // `schema` (MakeAvroDecoder with several writers).
  std::vector<std::string> earlier_schemas = {};

  bool from_registry() const { return !registry_options.empty(); }
  // `format: binary`: the bytes kept as they are, nothing to decode.
  bool raw_bytes() const { return format == SchemaFormat::kBinary && !from_registry(); }
};

// Builds the decoder for `spec` (INVALID_ARGUMENT for kBinary, which has none). Schemas are checked here, before any data moves: a schema that
// cannot be parsed, or uses a construct sluice cannot map (docs/formats.md), fails with the
// error class of its format (JSON_SCHEMA_INVALID, AVRO_SCHEMA_INVALID, or the Protobuf ones)
// and a message naming the place in the schema.
Result<std::unique_ptr<Decoder>> MakeDecoder(const DecoderSpec& spec);

// The Protobuf decoder, defined beside the Protobuf schema support (protobuf_*.cc) and reached
// through MakeDecoder; declared here so that the factory depends on nothing else of it.
Result<std::unique_ptr<Decoder>> MakeProtobufDecoder(const DecoderSpec& spec);

}  // namespace sluice::formats
