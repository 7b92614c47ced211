"""The job test_crash.py kills: a foreachBatch query writing each batch into two Delta tables,
idempotently by batch id."""
import sys
import time

import sluice

warehouse, storage, checkpoint = sys.argv[1:4]
spark = sluice.Session(warehouse=warehouse, storage=storage)


def two_tables(batch_df, batch_id):
    batch_df.write.format("delta").mode("append").option("txnAppId", "job-a").option("txnVersion", batch_id) \
        .saveAsTable("main.out.a")
    time.sleep(0.05)  # a kill between the two writes is likely, not rare
    batch_df.write.format("delta").mode("append").option("txnAppId", "job-b").option("txnVersion", batch_id) \
        .saveAsTable("main.out.b")
    time.sleep(0.05)


query = (spark.readStream.format("delta").option("maxFilesPerTrigger", 1).table("main.src.events")
         .writeStream.foreachBatch(two_tables).option("checkpointLocation", checkpoint)
         .trigger(availableNow=True).start())
query.awaitTermination()
