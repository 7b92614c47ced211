// The shared Kafka mock cluster of integration tests: one 3-broker cluster per test binary,
// started lazily on first use and stopped at process exit.
//
// Each test creates its own topic (CreateTestTopic), so tests never see each other's records.
// Thread-safe.
#pragma once

#include <string>

#include "sluice/connectors/embedded_kafka.h"
#include "sluice/core/status.h"

namespace sluice::connectors::testing {

// The shared cluster, started on first call. A failed start is remembered and returned again.
Result<EmbeddedKafka*> SharedKafka();

// Creates a topic named `test_topic_<n>` with `partitions` partitions on the shared cluster and
// returns its name.
Result<std::string> CreateTestTopic(int partitions);

}  // namespace sluice::connectors::testing
