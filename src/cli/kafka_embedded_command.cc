// `sluice kafka-embedded`: librdkafka's mock cluster in the foreground, for trying sluice or
// another Kafka client without a broker.
#include <CLI/CLI.hpp>

#include <charconv>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/termination_signals.h"
#include "sluice/connectors/embedded_kafka.h"
#include "sluice/core/error_classes.h"

namespace sluice::cli {
namespace {

struct KafkaEmbeddedOptions {
  int brokers = 1;
  std::vector<std::string> topics;
};

struct TopicSpec {
  std::string name;
  int partitions = 1;
};

// "name:partitions", or "name" for one partition.
Result<TopicSpec> ParseTopicSpec(const std::string& text) {
  TopicSpec spec;
  size_t colon = text.rfind(':');
  spec.name = text.substr(0, colon);
  if (colon != std::string::npos) {
    const char* begin = text.data() + colon + 1;
    const char* end = text.data() + text.size();
    auto [ptr, ec] = std::from_chars(begin, end, spec.partitions);
    if (ec != std::errc() || ptr != end || spec.partitions < 1) {
      return Status::Error(errors::kInvalidArgument,
                           fmt::format("--topic {}: the partition count after ':' must be a positive integer", text));
    }
  }
  if (spec.name.empty()) {
    return Status::Error(errors::kInvalidArgument, fmt::format("--topic {}: the topic needs a name", text));
  }
  return spec;
}

Status Run(const KafkaEmbeddedOptions& options) {
  std::vector<TopicSpec> topics;
  for (const std::string& text : options.topics) {
    SLUICE_ASSIGN_OR_RETURN(TopicSpec spec, ParseTopicSpec(text));
    topics.push_back(std::move(spec));
  }
  // Before librdkafka starts its threads, so they inherit the blocked mask.
  BlockTerminationSignals();
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<connectors::EmbeddedKafka> kafka,
                          connectors::EmbeddedKafka::Start(options.brokers));
  for (const TopicSpec& topic : topics) SLUICE_RETURN_IF_ERROR(kafka->CreateTopic(topic.name, topic.partitions));

  std::printf("%s\n", kafka->bootstrap_servers().c_str());
  std::fflush(stdout);
  std::string topic_list;
  for (const TopicSpec& topic : topics) {
    topic_list += fmt::format("{}{} ({} partition{})", topic_list.empty() ? "" : ", ", topic.name, topic.partitions,
                              topic.partitions == 1 ? "" : "s");
  }
  std::fprintf(stderr, "embedded Kafka: %d broker%s, topics: %s. Stop with Ctrl-C.\n", options.brokers,
               options.brokers == 1 ? "" : "s", topic_list.empty() ? "none (created on first use)" : topic_list.c_str());
  int signal_number = WaitForTerminationSignal();
  kafka.reset();
  std::fprintf(stderr, "embedded Kafka stopped (signal %d)\n", signal_number);
  return Status::OK();
}

}  // namespace

void RegisterKafkaEmbeddedCommand(CLI::App& app) {
  auto options = std::make_shared<KafkaEmbeddedOptions>();
  CLI::App* command = app.add_subcommand(
      "kafka-embedded", "Run an in-memory Kafka cluster (librdkafka's mock brokers) until Ctrl-C; prints the "
                        "bootstrap servers on the first line");
  command->add_option("--brokers", options->brokers, "Number of brokers")->check(CLI::Range(1, 64))->capture_default_str();
  command->add_option("--topic", options->topics, "Topic to create, as name:partitions (repeatable)");
  command->callback([options] {
    Status status = Run(*options);
    if (!status.ok()) {
      std::fprintf(stderr, "sluice kafka-embedded: %s\n", status.ToString().c_str());
      throw CLI::RuntimeError(1);
    }
  });
}

}  // namespace sluice::cli
