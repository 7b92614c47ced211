"""The Python package on S3: moto's S3 server (`moto_server`, a process of its own) on loopback is the store; a
session whose warehouse and storage are s3:// URIs writes, streams into, changes and reads Delta
tables there, with checkpoints there too; delta-rs reads what it wrote."""
import os
import socket
import subprocess
import sys
import time
import urllib.request
import uuid

import pyarrow as pa
import pytest
from deltalake import DeltaTable as DeltaRsTable

import sluice

ENVIRONMENT = {"AWS_ACCESS_KEY_ID": "test-key", "AWS_SECRET_ACCESS_KEY": "test-secret", "AWS_REGION": "us-east-1",
               "AWS_EC2_METADATA_DISABLED": "true", "AWS_ALLOW_HTTP": "true"}


@pytest.fixture(scope="module")
def endpoint(tmp_path_factory):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    log = open(tmp_path_factory.mktemp("moto") / "moto.log", "wb")
    server = subprocess.Popen([os.path.join(os.path.dirname(sys.executable), "moto_server"), "-H", "127.0.0.1",
                               "-p", str(port)], stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            urllib.request.urlopen(url + "/", timeout=1)
            break
        except urllib.error.HTTPError:
            break  # it answers
        except OSError:
            time.sleep(0.1)
    saved = {k: os.environ.get(k) for k in [*ENVIRONMENT, "AWS_ENDPOINT_URL"]}
    os.environ.update(ENVIRONMENT, AWS_ENDPOINT_URL=url)
    yield url
    server.kill()
    server.wait()
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


@pytest.fixture
def bucket(endpoint):
    name = f"py-{uuid.uuid4().hex[:12]}"
    urllib.request.urlopen(urllib.request.Request(f"{endpoint}/{name}", method="PUT")).read()
    return f"s3://{name}"


def test_tables_and_streams_on_s3(bucket, endpoint):
    spark = sluice.Session(warehouse=f"{bucket}/warehouse", storage=f"{bucket}/storage")
    spark.createDataFrame(pa.table({"id": pa.array([1, 2, 3], pa.int64()),
                                    "kind": pa.array(["a", "b", "a"], pa.large_string())})).write.saveAsTable("main.s.t")
    assert spark.warehouse == f"{bucket}/warehouse"
    # A stream from that table into another, its checkpoint in the bucket too.
    query = (spark.readStream.format("delta").table("main.s.t").where("kind = 'a'").writeStream.format("delta")
             .option("checkpointLocation", f"{bucket}/checkpoints/copy").trigger(once=True).toTable("main.s.copy"))
    query.awaitTermination()
    assert sorted(r.id for r in spark.table("main.s.copy").collect()) == [1, 3]

    table = sluice.DeltaTable.forName(spark, "main.s.t")
    table.update("id = 2", {"kind": "'z'"})
    assert sorted(tuple(r) for r in spark.table("main.s.t").collect()) == [(1, "a"), (2, "z"), (3, "a")]
    assert table.history().count() == 2

    # delta-rs, an independent reader, reads both tables from the store.
    options = dict(ENVIRONMENT, AWS_ENDPOINT_URL=endpoint)
    rows = DeltaRsTable(f"{bucket}/warehouse/main/s/t", storage_options=options).to_pyarrow_table().to_pylist()
    assert sorted((r["id"], r["kind"]) for r in rows) == [(1, "a"), (2, "z"), (3, "a")]
    assert DeltaRsTable(f"{bucket}/warehouse/main/s/copy", storage_options=options).version() >= 0

    # The same path through the DataFrame writer and reader, and a wrong URI by class.
    spark.range(0, 5).write.format("delta").mode("overwrite").save(f"{bucket}/plain")
    assert sorted(r.id for r in spark.read.format("delta").load(f"{bucket}/plain").collect()) == list(range(5))
    with pytest.raises(sluice.SluiceError) as refused:
        spark.read.format("delta").load("s3://Not_A_Bucket/x").collect()
    assert refused.value.error_class == "INVALID_STORAGE_URI"
