// The JSON stream decoder: the JSON reader of core (core/json_reader.h) behind the Decoder
// interface, its root a struct.
#include <fmt/format.h>

#include "sluice/core/error_classes.h"
#include "sluice/core/json_reader.h"
#include "sluice/formats/json.h"

namespace sluice::formats {
namespace {

class JsonDecoder final : public Decoder {
 public:
  explicit JsonDecoder(std::unique_ptr<JsonReader> reader) : reader_(std::move(reader)) {}

  const TypePtr& type() const override { return reader_->type(); }

  Result<ColumnPtr> Decode(const Column& encoded, DecodeStats* stats) override { return reader_->Read(encoded, stats); }

 private:
  std::unique_ptr<JsonReader> reader_;
};

}  // namespace

Result<std::unique_ptr<Decoder>> MakeJsonDecoder(TypePtr type) {
  if (type == nullptr || type->id() != TypeId::kStruct) {
    return Status::Error(errors::kInvalidArgument, "a JSON decoder decodes into a struct type");
  }
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<JsonReader> reader, JsonReader::Make(type));
  return std::unique_ptr<Decoder>(std::make_unique<JsonDecoder>(std::move(reader)));
}

}  // namespace sluice::formats
