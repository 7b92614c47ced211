// The `kafka` streaming source: records of Kafka topics, read by offset range through librdkafka.
// See docs/streams.md ("Kafka source") for every option and its default.
//
// Subscription: exactly one of `subscribe` (comma-separated topic names), `subscribe_pattern` (a
// regular expression that must match a whole topic name; topics starting with "__" are internal
// and never match) or `assign` (JSON {"topic":[0,1]}). Topics and partitions that appear while
// the query runs and match the subscription are discovered when a batch is planned and are read
// from their earliest offset.
//
// Offsets: JSON {"topic":{"0":42,"1":17}}, the next offset to read in each partition, with topics
// and partitions in sorted order (equal positions give equal text). A partition missing from a
// start offset starts at 0. Offsets live only in the query's checkpoint: the source never joins a
// consumer group and never commits offsets to Kafka (`enable.auto.commit=false`). The initial
// position (`starting_offsets` resolved against the cluster) is kept in the source's state
// directory on the first run, so a restart before the first batch starts at the same place.
//
// Rows: key (binary), value (binary), topic (string), partition (integer), offset (long),
// timestamp (timestamp), headers (array<struct<key:string,value:binary>>). One Read() returns one
// batch; within it the rows of each partition are in offset order, partitions interleaved as
// they arrive.
//
// Between batches: a batch that leaves records behind (a `max_offsets_per_trigger` limit) keeps
// its partitions assigned, so the client goes on prefetching while the batch is written, and the
// records it read beyond the batch's end are copied and held (at most 16 MB) for the next one. The
// next Read() uses them only when it starts exactly where the previous one ended on the same
// partitions; any other range (a replay after a restart, a new partition, a skip after data
// loss) assigns its partitions afresh. A batch that reads every partition to its end unassigns
// them, so an idle query does not poll the brokers.
//
// Authentication: SASL PLAIN and SCRAM with `user` and `password`, OAUTHBEARER with tokens the
// source fetches from an OIDC token endpoint (client credentials grant) on librdkafka's background
// thread and refreshes before they expire, TLS and mutual TLS from PEM files or a PKCS#12 keystore.
//
// Errors: INVALID_OPTIONS for bad configuration (before anything connects), KAFKA_AUTHENTICATION_FAILED
// as soon as the client fails to authenticate (SASL, TLS, no OAUTHBEARER token), KAFKA_REQUEST_FAILED
// when the cluster cannot be reached within `request_timeout` (reconnections, a restarting broker's
// unknown partitions and leaders are waited through) or answers with an error, KAFKA_DATA_LOSS when offsets to
// read have vanished (retention, a recreated topic) and `fail_on_data_loss` is true; when false,
// the source warns in the log and skips ahead. Not thread-safe (the engine calls it from the
// query's thread).
#pragma once

#include "sluice/engine/registry.h"

namespace sluice::connectors {

// Registers the `kafka` source format with `registry`.
Status RegisterKafkaSource(engine::Registry* registry);

}  // namespace sluice::connectors
