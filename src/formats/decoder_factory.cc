#include "sluice/formats/decoder.h"

#include "sluice/core/error_classes.h"
#include "sluice/formats/avro.h"
#include "sluice/formats/json.h"

namespace sluice::formats {

Result<std::unique_ptr<Decoder>> MakeDecoder(const DecoderSpec& spec) {
  if (spec.from_registry()) {
    return Status::Error(errors::kInvalidArgument, "a schema kept in a registry is decoded by MakeSubjectDecoder");
  }
  switch (spec.format) {
    case SchemaFormat::kJson: {
      SLUICE_ASSIGN_OR_RETURN(TypePtr type, JsonSchemaToType(spec.schema));
      return MakeJsonDecoder(std::move(type));
    }
    case SchemaFormat::kAvro: {
      SLUICE_ASSIGN_OR_RETURN(AvroSchemaPtr schema, ParseAvroSchema(spec.schema));
      std::vector<AvroSchemaPtr> writers = {schema};
      for (const std::string& earlier : spec.earlier_schemas) {
        SLUICE_ASSIGN_OR_RETURN(AvroSchemaPtr writer, ParseAvroSchema(earlier));
        writers.push_back(std::move(writer));
      }
      return MakeAvroDecoder(std::move(writers), std::move(schema));
    }
    case SchemaFormat::kProtobuf:
      return MakeProtobufDecoder(spec);
    case SchemaFormat::kBinary:
      return Status::Error(errors::kInvalidArgument, "binary keys and values are kept as they are: no decoder");
  }
  return Status::Error("INTERNAL_ERROR", "unknown schema format");
}

}  // namespace sluice::formats
