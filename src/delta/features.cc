#include "sluice/delta/features.h"

#include <algorithm>
#include <cctype>
#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <simdjson.h>

#include "delta/column_mapping.h"
#include "delta/type_widening.h"
#include "sluice/core/error_classes.h"
#include "sluice/core/json_text.h"
#include "sluice/core/types.h"

namespace sluice::delta {
namespace {

Status Unsupported(std::string_view what, std::string_view why) {
  return Status::Error(errors::kDeltaProtocolUnsupported,
                       fmt::format("the table requires '{}', which sluice does not implement{}", what, why));
}

bool ConfigurationIs(const Metadata& metadata, std::string_view key, std::string_view value) {
  auto it = metadata.configuration.find(std::string(key));
  if (it == metadata.configuration.end()) return false;
  std::string lower = it->second;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  return lower == value;
}

bool HasCheckConstraints(const Metadata& metadata) {
  auto it = metadata.configuration.lower_bound("delta.constraints.");
  return it != metadata.configuration.end() && it->first.starts_with("delta.constraints.");
}

// Whether any field's metadata (at any depth) has a key starting with `key`: in the schema's
// JSON text such a key appears as a quoted string. (Field names are never compared: a column
// named like a metadata key only makes the answer conservative.)
bool SchemaMetadataMentions(const std::string& schema_string, std::string_view key) {
  return schema_string.find(fmt::format("\"{}", key)) != std::string::npos;
}

// What a writer feature governs, if it is in use in this table; OK when it is not in use or
// sluice implements it.
Status CheckWriterFeature(std::string_view feature, const Metadata& metadata) {
  if (feature == "appendOnly" || feature == "timestampNtz" || feature == "domainMetadata" ||
      feature == "typeWidening" || feature == "typeWidening-preview" || feature == "deletionVectors" ||
      feature == "columnMapping" || feature == "v2Checkpoint" || feature == "vacuumProtocolCheck" ||
      feature == "rowTracking") {
    return Status::OK();
  }
  if (feature == "invariants") {
    if (SchemaMetadataMentions(metadata.schema_string, "delta.invariants")) {
      return Unsupported(feature, ": a column declares an invariant");
    }
    return Status::OK();
  }
  if (feature == "checkConstraints") {
    if (HasCheckConstraints(metadata)) return Unsupported(feature, ": the table has CHECK constraints");
    return Status::OK();
  }
  if (feature == "changeDataFeed") {
    if (ConfigurationIs(metadata, "delta.enableChangeDataFeed", "true")) {
      return Unsupported(feature, ": change data feed is enabled");
    }
    return Status::OK();
  }
  if (feature == "generatedColumns") {
    if (SchemaMetadataMentions(metadata.schema_string, "delta.generationExpression")) {
      return Unsupported(feature, ": a column is generated");
    }
    return Status::OK();
  }
  if (feature == "identityColumns") {
    if (SchemaMetadataMentions(metadata.schema_string, "delta.identity.")) {
      return Unsupported(feature, ": a column is an identity column");
    }
    return Status::OK();
  }
  return Unsupported(feature, "");
}

// Readers must widen the values of every type change the table records, and fail on one they
// cannot: sluice widens each of the protocol's widenings (delta/type_widening.h).
bool IsRecordedWidening(std::string_view from, std::string_view to) {
  Result<TypePtr> from_type = ParseTypeJson(JsonString(from));
  Result<TypePtr> to_type = ParseTypeJson(JsonString(to));
  return from_type.ok() && to_type.ok() && ReadsWidened(**from_type, **to_type);
}

Status CheckTypeChanges(const Metadata& metadata) {
  if (!RecordsTypeChanges(metadata.schema_string)) return Status::OK();
  simdjson::dom::parser parser;
  simdjson::dom::element schema;
  if (parser.parse(simdjson::padded_string(metadata.schema_string)).get(schema) != simdjson::SUCCESS) {
    return Status::Error(errors::kDeltaLogCorrupt, "the table's schemaString is not JSON");
  }
  // Every object of the schema with a delta.typeChanges list, at any depth.
  std::vector<simdjson::dom::element> pending = {schema};
  while (!pending.empty()) {
    simdjson::dom::element element = pending.back();
    pending.pop_back();
    simdjson::dom::array items;
    if (element.get(items) == simdjson::SUCCESS) {
      for (simdjson::dom::element item : items) pending.push_back(item);
      continue;
    }
    simdjson::dom::object object;
    if (element.get(object) != simdjson::SUCCESS) continue;
    for (auto [key, value] : object) {
      if (key != "delta.typeChanges") {
        pending.push_back(value);
        continue;
      }
      simdjson::dom::array changes;
      if (value.get(changes) != simdjson::SUCCESS) return Unsupported("typeWidening", ": delta.typeChanges is not a list");
      for (simdjson::dom::element change : changes) {
        std::string_view from, to;
        if (change["fromType"].get(from) || change["toType"].get(to) || !IsRecordedWidening(from, to)) {
          return Unsupported("typeWidening", fmt::format(": a column was changed from {} to {}, which sluice does not "
                                                         "read", from, to));
        }
      }
    }
  }
  return Status::OK();
}

// Legacy writer versions imply every feature of the versions below them (reader version 2 implies
// columnMapping).
constexpr std::pair<int, std::string_view> kLegacyWriterFeatures[] = {
    {2, "appendOnly"},       {2, "invariants"},    {3, "checkConstraints"}, {4, "changeDataFeed"},
    {4, "generatedColumns"}, {5, "columnMapping"}, {6, "identityColumns"},
};

bool Listed(const std::optional<std::vector<std::string>>& list, std::string_view feature) {
  return list && std::find(list->begin(), list->end(), feature) != list->end();
}

// Whether writers of the protocol know the feature, listed or implied by a legacy version.
bool WriterHas(const Protocol& protocol, std::string_view feature) {
  if (protocol.min_writer_version == 7) return Listed(protocol.writer_features, feature);
  return std::any_of(std::begin(kLegacyWriterFeatures), std::end(kLegacyWriterFeatures), [&](const auto& legacy) {
    return legacy.second == feature && protocol.min_writer_version >= legacy.first;
  });
}

// Whether the protocol has the reader-and-writer feature, listed or implied by a legacy version.
bool ProtocolHas(const Protocol& protocol, std::string_view feature) {
  bool reader = protocol.min_reader_version == 3 ? Listed(protocol.reader_features, feature)
                                                 : feature == "columnMapping" && protocol.min_reader_version >= 2;
  return reader && WriterHas(protocol, feature);
}

// Whether a field of the struct, or of a struct inside it, is not nullable: Delta takes that as a
// NOT NULL invariant, which writers must know (the `invariants` feature).
bool HasNotNullField(const DataType& type) {
  if (type.id() != TypeId::kStruct) return false;
  return std::any_of(type.fields().begin(), type.fields().end(),
                     [](const Field& field) { return !field.nullable || HasNotNullField(*field.type); });
}

// The writer-only features a table with this schema and metadata uses (legacy writer version 2
// implies both).
std::vector<std::string> WriterFeaturesInUse(const DataType& schema, const Metadata& metadata) {
  std::vector<std::string> features;
  if (ConfigurationIs(metadata, "delta.appendOnly", "true")) features.push_back("appendOnly");
  if (HasNotNullField(schema)) features.push_back("invariants");
  return features;
}

// The reader-and-writer features a table with this schema and metadata uses.
std::vector<std::string> FeaturesInUse(const DataType& schema, const Metadata& metadata) {
  std::vector<std::string> features;
  if (ContainsTimestampNtz(schema)) features.push_back("timestampNtz");
  if (RecordsTypeChanges(metadata.schema_string)) features.push_back("typeWidening");
  Result<ColumnMappingMode> mode = MappingModeOf(metadata);
  if (mode.ok() && *mode != ColumnMappingMode::kNone) features.push_back("columnMapping");
  if (ConfigurationIs(metadata, "delta.checkpointPolicy", "v2")) features.push_back("v2Checkpoint");
  if (ConfigurationIs(metadata, kEnableDeletionVectors, "true")) features.push_back("deletionVectors");
  return features;
}

}  // namespace

Status CheckReadSupport(const Protocol& protocol, const Metadata& metadata) {
  int reader = protocol.min_reader_version;
  if (reader < 1 || reader > 3) {
    return Status::Error(errors::kDeltaProtocolUnsupported,
                         fmt::format("the table requires reader version {}; sluice reads versions 1 to 3", reader));
  }
  SLUICE_RETURN_IF_ERROR(MappingModeOf(metadata).status());
  if (reader == 3) {
    if (!protocol.reader_features) {
      return Status::Error(errors::kDeltaLogCorrupt, "protocol has reader version 3 but no readerFeatures");
    }
    for (const std::string& feature : *protocol.reader_features) {
      if (feature == "timestampNtz" || feature == "vacuumProtocolCheck" || feature == "columnMapping" ||
          feature == "deletionVectors" || feature == "v2Checkpoint") {
        continue;
      }
      if (feature == "typeWidening" || feature == "typeWidening-preview") {
        SLUICE_RETURN_IF_ERROR(CheckTypeChanges(metadata));
        continue;
      }
      return Unsupported(feature, "");
    }
  }
  return Status::OK();
}

Status CheckWriteSupport(const Protocol& protocol, const Metadata& metadata) {
  SLUICE_RETURN_IF_ERROR(CheckReadSupport(protocol, metadata));
  int writer = protocol.min_writer_version;
  if (writer < 1 || writer > 7) {
    return Status::Error(errors::kDeltaProtocolUnsupported,
                         fmt::format("the table requires writer version {}; sluice writes versions 1 to 7", writer));
  }
  if (writer == 7) {
    if (!protocol.writer_features) {
      return Status::Error(errors::kDeltaLogCorrupt, "protocol has writer version 7 but no writerFeatures");
    }
    for (const std::string& feature : *protocol.writer_features) {
      SLUICE_RETURN_IF_ERROR(CheckWriterFeature(feature, metadata));
    }
    return Status::OK();
  }
  for (const auto& [version, feature] : kLegacyWriterFeatures) {
    if (writer >= version) SLUICE_RETURN_IF_ERROR(CheckWriterFeature(feature, metadata));
  }
  return Status::OK();
}

bool TracksRowIds(const Protocol& protocol) { return protocol.min_writer_version == 7 && Listed(protocol.writer_features, "rowTracking"); }

bool RecordsTypeChanges(const std::string& schema_string) {
  return SchemaMetadataMentions(schema_string, "delta.typeChanges");
}

bool ContainsTimestampNtz(const DataType& type) {
  switch (type.id()) {
    case TypeId::kTimestampNtz: return true;
    case TypeId::kStruct:
      return std::any_of(type.fields().begin(), type.fields().end(),
                         [](const Field& field) { return ContainsTimestampNtz(*field.type); });
    case TypeId::kArray: return ContainsTimestampNtz(*type.element_type());
    case TypeId::kMap: return ContainsTimestampNtz(*type.key_type()) || ContainsTimestampNtz(*type.value_type());
    default: return false;
  }
}

Protocol ProtocolForNewTable(const DataType& schema, const Metadata& metadata) {
  std::vector<std::string> features = FeaturesInUse(schema, metadata);
  const bool row_tracking = ConfigurationIs(metadata, kEnableRowTracking, "true");
  if (features.empty() && !row_tracking) return Protocol{};
  std::vector<std::string> writer_features = features;
  for (std::string& feature : WriterFeaturesInUse(schema, metadata)) writer_features.push_back(std::move(feature));
  if (row_tracking) {
    writer_features.push_back("domainMetadata");
    writer_features.push_back("rowTracking");
  }
  if (features.empty()) return Protocol{1, 7, std::nullopt, writer_features};
  return Protocol{3, 7, features, writer_features};
}

Result<std::optional<Protocol>> ProtocolForEvolvedSchema(const Protocol& current, const DataType& schema,
                                                         const Metadata& metadata) {
  std::vector<std::string> needed = FeaturesInUse(schema, metadata);
  const std::vector<std::string> writers_need = WriterFeaturesInUse(schema, metadata);
  if (std::all_of(needed.begin(), needed.end(), [&](const std::string& f) { return ProtocolHas(current, f); }) &&
      std::all_of(writers_need.begin(), writers_need.end(), [&](const std::string& f) { return WriterHas(current, f); })) {
    return std::optional<Protocol>();
  }
  if (current.min_reader_version > 3 || current.min_writer_version > 7) {
    return Status::Error(errors::kDeltaProtocolUnsupported,
                         fmt::format("the evolved schema needs the table features {}; upgrade the table's protocol "
                                     "to reader 3 / writer 7 first",
                                     fmt::join(needed, ", ")));
  }
  // Table features from here on: the legacy versions' implied features become listed ones.
  Protocol upgraded = current;
  if (current.min_reader_version < 3) {
    upgraded.min_reader_version = 3;
    upgraded.reader_features = std::vector<std::string>{};
    if (current.min_reader_version >= 2) upgraded.reader_features->push_back("columnMapping");
  }
  if (current.min_writer_version < 7) {
    upgraded.min_writer_version = 7;
    upgraded.writer_features = std::vector<std::string>{};
    for (const auto& [version, feature] : kLegacyWriterFeatures) {
      if (current.min_writer_version >= version) upgraded.writer_features->emplace_back(feature);
    }
  }
  for (const std::string& feature : needed) {
    if (!Listed(upgraded.reader_features, feature)) upgraded.reader_features->push_back(feature);
    if (!Listed(upgraded.writer_features, feature)) upgraded.writer_features->push_back(feature);
  }
  for (const std::string& feature : writers_need) {
    if (!Listed(upgraded.writer_features, feature)) upgraded.writer_features->push_back(feature);
  }
  return std::optional<Protocol>(std::move(upgraded));
}

}  // namespace sluice::delta
