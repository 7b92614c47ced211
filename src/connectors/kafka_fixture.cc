#include "sluice/connectors/testing/kafka_fixture.h"

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>

#include <fmt/format.h>

namespace sluice::connectors::testing {
namespace {

class SharedCluster {
 public:
  Result<EmbeddedKafka*> Get() {
    std::lock_guard<std::mutex> lock(mu_);
    if (!start_status_) {
      auto started = EmbeddedKafka::Start(3);
      start_status_ = started.status();
      if (started.ok()) cluster_ = std::move(started).value();
    }
    if (!start_status_->ok()) return *start_status_;
    return cluster_.get();
  }

 private:
  std::mutex mu_;
  std::unique_ptr<EmbeddedKafka> cluster_;
  std::optional<Status> start_status_;
};

std::atomic<int> next_topic{0};

}  // namespace

Result<EmbeddedKafka*> SharedKafka() {
  static SharedCluster cluster;
  return cluster.Get();
}

Result<std::string> CreateTestTopic(int partitions) {
  SLUICE_ASSIGN_OR_RETURN(EmbeddedKafka * kafka, SharedKafka());
  std::string name = fmt::format("test_topic_{}", next_topic++);
  SLUICE_RETURN_IF_ERROR(kafka->CreateTopic(name, partitions));
  return name;
}

}  // namespace sluice::connectors::testing
