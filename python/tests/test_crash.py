"""kill -9 at random moments of a Python foreachBatch query writing two Delta tables with txn
options, 30 times, then a run to the end: every source row once in each table."""
import os
import random
import signal
import subprocess
import sys
import time

import pyarrow as pa

HERE = os.path.dirname(os.path.abspath(__file__))


def test_every_row_once_in_each_table_after_thirty_kills(spark, tmp_path):
    commits, rows = 120, 5
    for c in range(commits):
        spark.createDataFrame(pa.table({"id": pa.array(range(c * rows, (c + 1) * rows), pa.int64())})) \
            .write.mode("append").saveAsTable("main.src.events")
    command = [sys.executable, os.path.join(HERE, "crash_job.py"), spark.warehouse, spark.storage,
               str(tmp_path / "checkpoint")]
    generator = random.Random(20261204)
    killed = 0
    for _ in range(30):
        job = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        time.sleep(generator.uniform(0.3, 1.0))
        if job.poll() is None:
            job.send_signal(signal.SIGKILL)
            killed += 1
        job.wait()
    final = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert final.returncode == 0, final.stderr
    assert killed >= 10, "the job ended before most kills: the test proved little"
    expected = list(range(commits * rows))
    for table in ("main.out.a", "main.out.b"):
        ids = sorted(r.id for r in spark.table(table).collect())
        assert ids == expected, (table, len(ids))
