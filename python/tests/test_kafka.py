"""Kafka through the API, against sluice's embedded Kafka (librdkafka's mock cluster; the real
broker's behaviour is the C++ integration tests' concern), records produced by an independent
client (confluent-kafka): a batch read, and a stream decoded in select and handed to a Python
function, resumed from its checkpoint."""
import json
import signal
import subprocess
import sys

import pytest
from confluent_kafka import Producer

import sluice


@pytest.fixture(scope="module")
def kafka():
    server = subprocess.Popen([sys.executable, "-m", "sluice", "kafka-embedded", "--topic", "events:2"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    bootstrap = server.stdout.readline().strip()
    if not bootstrap:
        server.wait(30)
        pytest.fail("the embedded Kafka did not start: " + server.stderr.read())
    yield bootstrap
    server.send_signal(signal.SIGTERM)
    server.wait(60)


def produce(bootstrap, values):
    producer = Producer({"bootstrap.servers": bootstrap})
    for value in values:
        producer.produce("events", key=str(value["id"] % 2).encode(), value=json.dumps(value).encode(),
                         partition=value["id"] % 2)
    assert producer.flush(30) == 0


def test_a_batch_read_and_a_stream_into_python(spark, kafka, tmp_path):
    produce(kafka, [{"id": i, "kind": "order"} for i in range(10)])
    records = spark.read.format("kafka").option("bootstrap_servers", kafka).option("subscribe", "events") \
        .option("starting_offsets", "earliest").load()
    assert {"key", "value", "topic", "partition", "offset"} <= set(records.columns)
    assert sorted(json.loads(r.value)["id"] for r in records.collect()) == list(range(10))

    seen = []

    def handle(batch_df, batch_id):
        seen.extend((r.partition, json.loads(r.v)["id"]) for r in batch_df.collect())

    def run():
        (spark.readStream.format("kafka").option("bootstrap_servers", kafka).option("subscribe", "events")
         .option("starting_offsets", "earliest").load()
         .selectExpr("partition", "CAST(value AS STRING) AS v")
         .writeStream.foreachBatch(handle).option("checkpointLocation", str(tmp_path / "c"))
         .trigger(availableNow=True).start().awaitTermination())

    run()
    produce(kafka, [{"id": i, "kind": "order"} for i in range(10, 14)])
    run()
    # Every record once, each partition in its order.
    for partition in (0, 1):
        ids = [i for p, i in seen if p == partition]
        assert ids == [i for i in range(14) if i % 2 == partition]


def test_wrong_kafka_options_fail_before_reading(spark, kafka):
    with pytest.raises(sluice.SluiceError) as error:
        spark.read.format("kafka").option("bootstrap_servers", kafka).option("subscribe", "events") \
            .option("starting_offset", "earliest").load()
    assert "starting_offset" in error.value.message
