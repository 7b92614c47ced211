"""The Python package on object stores: moto's S3 server (`moto_server`) and Azurite (`azurite-blob`, Azure Blob
Storage), each a process of its own on loopback; a session whose warehouse and storage are s3:// or az:// URIs
writes, streams into, changes and reads Delta tables there, with checkpoints there too; delta-rs reads what it
wrote."""
import base64
import datetime
import hashlib
import hmac
import os
import pathlib
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


AZURE_ACCOUNT = "devstoreaccount1"
# The emulator's published development key.
AZURE_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def serve(command, url, log_path):
    """Starts a server and waits until `url` answers with any HTTP status."""
    server = subprocess.Popen(command, stdout=open(log_path, "wb"), stderr=subprocess.STDOUT)
    for _ in range(300):
        try:
            urllib.request.urlopen(url, timeout=1)
            break
        except urllib.error.HTTPError:
            break  # it answers
        except OSError:
            time.sleep(0.1)
    return server


def set_environment(values):
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    return saved


def restore_environment(saved):
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


@pytest.fixture(scope="module")
def s3_endpoint(tmp_path_factory):
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    server = serve([os.path.join(os.path.dirname(sys.executable), "moto_server"), "-H", "127.0.0.1", "-p", str(port)],
                   url + "/", tmp_path_factory.mktemp("moto") / "moto.log")
    saved = set_environment(dict(ENVIRONMENT, AWS_ENDPOINT_URL=url))
    yield url
    server.kill()
    server.wait()
    restore_environment(saved)


@pytest.fixture(scope="module")
def azure_endpoint(tmp_path_factory):
    port = free_port()
    url = f"http://127.0.0.1:{port}/{AZURE_ACCOUNT}"
    azurite = pathlib.Path(__file__).resolve().parents[2] / "tests/tools/node_modules/.bin/azurite-blob"
    server = serve([str(azurite), "--blobHost", "127.0.0.1", "--blobPort", str(port), "--inMemoryPersistence",
                    "--disableTelemetry", "--silent"], url, tmp_path_factory.mktemp("azurite") / "azurite.log")
    saved = set_environment({
        "AZURE_STORAGE_CONNECTION_STRING":
            f"DefaultEndpointsProtocol=http;AccountName={AZURE_ACCOUNT};AccountKey={AZURE_KEY};BlobEndpoint={url};",
        # delta-rs finds the emulator by this variable only.
        "AZURITE_BLOB_STORAGE_URL": f"http://127.0.0.1:{port}",
    })
    yield url
    server.kill()
    server.wait()
    restore_environment(saved)


def create_container(endpoint, name):
    """Create Container, signed with Shared Key as the service's documentation lays it out."""
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%a, %d %b %Y %H:%M:%S GMT")
    headers = {"x-ms-date": date, "x-ms-version": "2021-08-06", "Content-Type": "application/octet-stream"}
    to_sign = ("PUT\n\n\n\n\napplication/octet-stream\n\n\n\n\n\n\n"
               f"x-ms-date:{date}\nx-ms-version:2021-08-06\n/{AZURE_ACCOUNT}/{AZURE_ACCOUNT}/{name}\nrestype:container")
    signature = hmac.new(base64.b64decode(AZURE_KEY), to_sign.encode(), hashlib.sha256).digest()
    headers["Authorization"] = f"SharedKey {AZURE_ACCOUNT}:{base64.b64encode(signature).decode()}"
    request = urllib.request.Request(f"{endpoint}/{name}?restype=container", data=b"", method="PUT", headers=headers)
    urllib.request.urlopen(request).read()


@pytest.fixture(params=["s3", "azure"])
def store(request):
    """The root of a fresh bucket or container, and the storage options delta-rs needs to read it."""
    name = f"py-{uuid.uuid4().hex[:12]}"
    if request.param == "s3":
        endpoint = request.getfixturevalue("s3_endpoint")
        urllib.request.urlopen(urllib.request.Request(f"{endpoint}/{name}", method="PUT")).read()
        return f"s3://{name}", dict(ENVIRONMENT, AWS_ENDPOINT_URL=endpoint)
    endpoint = request.getfixturevalue("azure_endpoint")
    create_container(endpoint, name)
    return f"az://{name}", {"account_name": AZURE_ACCOUNT, "account_key": AZURE_KEY, "use_emulator": "true"}


def test_tables_and_streams_on_object_stores(store):
    bucket, options = store
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
    rows = DeltaRsTable(f"{bucket}/warehouse/main/s/t", storage_options=options).to_pyarrow_table().to_pylist()
    assert sorted((r["id"], r["kind"]) for r in rows) == [(1, "a"), (2, "z"), (3, "a")]
    assert DeltaRsTable(f"{bucket}/warehouse/main/s/copy", storage_options=options).version() >= 0

    # The same path through the DataFrame writer and reader, and a wrong URI by class.
    spark.range(0, 5).write.format("delta").mode("overwrite").save(f"{bucket}/plain")
    assert sorted(r.id for r in spark.read.format("delta").load(f"{bucket}/plain").collect()) == list(range(5))
    with pytest.raises(sluice.SluiceError) as refused:
        spark.read.format("delta").load("s3://Not_A_Bucket/x").collect()
    assert refused.value.error_class == "INVALID_STORAGE_URI"
