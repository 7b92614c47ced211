// A stream part's `schema_registry` block: which subject and version it reads, and the decoder
// made from what the registry holds for them.
#include <charconv>

#include <fmt/format.h>

#include "sluice/core/error_classes.h"
#include "sluice/formats/registry_decoder.h"

namespace sluice::formats {
namespace {

Status Invalid(std::string message) { return Status::Error(errors::kInvalidOptions, "schema_registry: " + message); }

std::string_view FormatName(SchemaFormat format) {
  switch (format) {
    case SchemaFormat::kJson: return "json";
    case SchemaFormat::kAvro: return "avro";
    case SchemaFormat::kProtobuf: return "protobuf";
    case SchemaFormat::kBinary: return "binary";
  }
  return "?";
}

}  // namespace

Result<RegistrySubject> RegistrySubjectOf(const DecoderSpec& spec, std::string_view topic, bool is_key) {
  SLUICE_ASSIGN_OR_RETURN(ValidatedOptions options,
                          ValidateOptions("schema_registry", SchemaRegistryOptionSpecs(), spec.registry_options));
  RegistrySubject subject;
  subject.config = SchemaRegistryConfigFromOptions(options);
  if (!subject.config.url.starts_with("http://") && !subject.config.url.starts_with("https://")) {
    return Invalid("url '" + subject.config.url + "' must start with http:// or https://");
  }
  const std::string& format = options.GetString("format");
  subject.format = format == "protobuf" ? SchemaFormat::kProtobuf
                   : format == "json"   ? SchemaFormat::kJson
                                        : SchemaFormat::kAvro;
  subject.message_name = spec.message_name;
  subject.refresh_interval = options.GetDuration("schema_refresh_interval");

  const std::string& version = options.GetString("version");
  if (version != "latest") {
    auto [end, error] = std::from_chars(version.data(), version.data() + version.size(), subject.version);
    if (error != std::errc() || end != version.data() + version.size() || subject.version < 1) {
      return Invalid("version '" + version + "' is neither latest nor a version number (1, 2, ...)");
    }
  }

  if (options.Has("subject")) {
    subject.subject = options.GetString("subject");
    return subject;
  }
  const std::string& strategy_name = options.GetString("subject_name_strategy");
  SubjectNameStrategy strategy = strategy_name == "RecordNameStrategy"        ? SubjectNameStrategy::kRecordName
                                 : strategy_name == "TopicRecordNameStrategy" ? SubjectNameStrategy::kTopicRecordName
                                                                              : SubjectNameStrategy::kTopicName;
  std::string record_name = options.Has("record_name") ? options.GetString("record_name") : std::string();
  if (strategy != SubjectNameStrategy::kTopicName && record_name.empty()) {
    return Invalid(strategy_name + " needs record_name (the record's full name)");
  }
  if (strategy != SubjectNameStrategy::kRecordName && topic.empty()) {
    return Invalid(strategy_name + " names the subject after the topic, but the stream reads several topics "
                   "(or a pattern); give the subject with the subject option");
  }
  subject.subject = SubjectName(strategy, topic, record_name, is_key);
  if (subject.message_name.empty() && subject.format == SchemaFormat::kProtobuf) subject.message_name = record_name;
  return subject;
}

Result<SubjectDecoder> MakeSubjectDecoder(std::shared_ptr<SchemaRegistryClient> client, const RegistrySubject& subject) {
  SubjectDecoder made;
  if (subject.version == 0) {
    SLUICE_ASSIGN_OR_RETURN(made.reader, client->GetLatest(subject.subject));
  } else {
    SLUICE_ASSIGN_OR_RETURN(made.reader, client->GetVersion(subject.subject, subject.version));
  }
  if (made.reader->format != subject.format) {
    return Invalid(fmt::format("subject {} holds a schema of format {}, but the stream declares format {}",
                               subject.subject, FormatName(made.reader->format), FormatName(subject.format)));
  }
  Result<std::unique_ptr<Decoder>> decoder = MakeRegistryDecoder(std::move(client), made.reader, subject.message_name);
  if (!decoder.ok()) {
    return decoder.status().WithContext(fmt::format("subject {} version {}", subject.subject, made.reader->version));
  }
  made.decoder = std::move(decoder).value();
  return made;
}

}  // namespace sluice::formats
