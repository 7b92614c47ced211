// Debezium's embedded engine reading a PostgreSQL table's changes (pgoutput) into JSON written to
// nowhere: the peer bench/change_feed_bench.sh measures beside `sluice cdf`.
//
//   java -cp 'jars/*:classes' DebeziumToNull CONNINFO_PORT USER WORK_DIR TARGET
//
// Streams public.bench from the slot bench_dbz (created by the first run, which the bench stops
// once the slot exists; TARGET 0 waits forever). A run with TARGET > 0 returns once it has
// serialized TARGET change events, printing "events N seconds S first_to_last F": S from the
// engine's start, F from the first event to the last. Offsets live in WORK_DIR.
import io.debezium.engine.ChangeEvent;
import io.debezium.engine.DebeziumEngine;
import io.debezium.engine.format.Json;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

public final class DebeziumToNull {
  public static void main(String[] args) throws Exception {
    final String port = args[0];
    final String user = args[1];
    final String work = args[2];
    final long target = Long.parseLong(args[3]);

    Properties props = new Properties();
    props.setProperty("name", "bench");
    props.setProperty("connector.class", "io.debezium.connector.postgresql.PostgresConnector");
    props.setProperty("offset.storage", "org.apache.kafka.connect.storage.FileOffsetBackingStore");
    props.setProperty("offset.storage.file.filename", work + "/offsets.dat");
    props.setProperty("offset.flush.interval.ms", "1000");
    props.setProperty("database.hostname", "127.0.0.1");
    props.setProperty("database.port", port);
    props.setProperty("database.user", user);
    props.setProperty("database.password", "");
    props.setProperty("database.dbname", "postgres");
    props.setProperty("topic.prefix", "bench");
    props.setProperty("plugin.name", "pgoutput");
    props.setProperty("slot.name", "bench_dbz");
    props.setProperty("publication.name", "bench_dbz");
    props.setProperty("publication.autocreate.mode", "filtered");
    props.setProperty("table.include.list", "public.bench");
    props.setProperty("snapshot.mode", "no_data");
    // Debezium's lighter JSON (no schema in every event), its best case.
    props.setProperty("converter.schemas.enable", "false");

    final OutputStream nowhere = OutputStream.nullOutputStream();
    final CountDownLatch done = new CountDownLatch(1);
    final long[] count = {0};
    final long[] first = {0};
    final long start = System.nanoTime();
    DebeziumEngine<ChangeEvent<String, String>> engine = DebeziumEngine.create(Json.class)
        .using(props)
        .notifying((records, committer) -> {
          for (ChangeEvent<String, String> record : records) {
            if (record.value() != null) {
              if (count[0]++ == 0) first[0] = System.nanoTime();
              try {
                nowhere.write(record.value().getBytes(StandardCharsets.UTF_8));
              } catch (IOException e) {
                throw new UncheckedIOException(e);
              }
            }
            committer.markProcessed(record);
          }
          committer.markBatchFinished();
          if (target > 0 && count[0] >= target) done.countDown();
        })
        .using((success, message, error) -> {
          if (!success) {
            System.err.println("debezium: " + message + (error != null ? ": " + error : ""));
            done.countDown();
          }
        })
        .build();
    ExecutorService executor = Executors.newSingleThreadExecutor();
    executor.execute(engine);
    done.await();
    final long end = System.nanoTime();
    System.out.printf("events %d seconds %.3f first_to_last %.3f%n", count[0], (end - start) / 1e9,
                      (end - first[0]) / 1e9);
    engine.close();
    executor.shutdown();
    System.exit(count[0] >= target ? 0 : 1);
  }
}
