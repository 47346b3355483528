package io.dendrite.ycsb;

import static io.dendrite.ycsb.YcsbRun.with;
import static org.assertj.core.api.Assertions.assertThat;

import io.dendrite.testsupport.MemcachedAddress;
import io.dendrite.testsupport.MongoTestDatabase;
import io.dendrite.testsupport.MySqlTestDatabase;
import io.dendrite.testsupport.RealServers;
import io.dendrite.testsupport.cache.EmbeddedIqServers;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every binding through YCSB's own Client against the real servers: load 1 000 records, then a few seconds of a
 * mix of reads, updates, short scans and inserts; YCSB's status counts and the binding's stats file must agree.
 */
@ExtendWith(RealServers.class)
class YcsbClientIT {
  private static final int RECORDS = 1_000;

  /**
   * The MongoDB-wire server (FerretDB on SQLite) loads a few dozen records a second and does not push range
   * filters down: a scan reads every document. 1 000 records made this one test four minutes of `dev/test`;
   * 200 still give every operation of the mix, zipfian keys and inserts past the loaded ones.
   */
  private static final int MONGO_RECORDS = 200;

  @TempDir Path directory;

  @Test
  void mysqlAloneDendriteAndLookasideOverMySql(
      MySqlTestDatabase database, MemcachedAddress memcached) throws Exception {
    Map<String, String> mysql = Map.of(RecordStore.MYSQL_URL, database.jdbcUrl());
    YcsbRun load =
        YcsbRun.run(
            directory,
            true,
            MySqlClient.class,
            4,
            with(mysql, Map.of("recordcount", "" + RECORDS)));
    assertThat(load.returned("INSERT", "OK")).isEqualTo(RECORDS);
    assertThat(load.stat("ops.INSERT")).isEqualTo(RECORDS);
    load.assertOnlyOk(false);

    assertMixRan(
        YcsbRun.run(directory, false, MySqlClient.class, 4, with(mysql, mix(RECORDS, 1_000))),
        false);
    for (String policy : new String[] {"write-around", "write-through", "write-back"}) {
      try (EmbeddedIqServers cache = EmbeddedIqServers.start(1)) {
        YcsbRun run =
            YcsbRun.run(
                directory,
                false,
                DendriteClient.class,
                4,
                with(
                    mysql,
                    mix(RECORDS, 1_000),
                    Map.of(
                        DendriteBackend.POLICY,
                        policy,
                        DendriteBackend.SERVERS,
                        cache.addresses())));
        assertMixRan(run, true);
        assertThat(run.stat("anomalies")).as("stale reads through Dendrite %s", policy).isZero();
        if (policy.equals("write-back")) {
          assertThat(run.stat("writeback.drained") + run.stat("writeback.pendingAtEnd"))
              .as("buffered writes")
              .isPositive();
        }
      }
    }
    assertMixRan(
        YcsbRun.run(
            directory,
            false,
            MemcachedLookasideClient.class,
            4,
            with(
                mysql,
                mix(RECORDS, 1_000),
                Map.of(
                    LookasideBackend.SERVERS,
                    memcached.hostAndPort(),
                    LookasideBackend.KEY_PREFIX,
                    memcached.keyPrefix()))),
        true);
  }

  @Test
  void mongoDbAloneAndDendriteOverMongoDb(MongoTestDatabase database) throws Exception {
    Map<String, String> mongo =
        Map.of(
            RecordStore.MONGODB_URL,
            database.connectionString(),
            RecordStore.MONGODB_DATABASE,
            database.name());
    YcsbRun load =
        YcsbRun.run(
            directory,
            true,
            MongoDbClient.class,
            4,
            with(mongo, Map.of("recordcount", "" + MONGO_RECORDS)));
    assertThat(load.returned("INSERT", "OK")).isEqualTo(MONGO_RECORDS);
    load.assertOnlyOk(false);

    assertMixRan(
        YcsbRun.run(directory, false, MongoDbClient.class, 4, with(mongo, mix(MONGO_RECORDS, 200))),
        false);
    try (EmbeddedIqServers cache = EmbeddedIqServers.start(1)) {
      YcsbRun run =
          YcsbRun.run(
              directory,
              false,
              DendriteClient.class,
              4,
              with(
                  mongo,
                  mix(MONGO_RECORDS, 200),
                  Map.of(
                      DendriteBackend.DB,
                      "mongodb",
                      DendriteBackend.POLICY,
                      "write-through",
                      DendriteBackend.SERVERS,
                      cache.addresses())));
      assertMixRan(run, true);
      assertThat(run.stat("anomalies")).isZero();
    }
  }

  /**
   * {@code operations} reads, updates (of every field, so that the stale-read check has written fields to check),
   * scans of 1..5 records and inserts of new records. A count, not a time: a loaded machine makes the test slower,
   * not emptier.
   */
  private static Map<String, String> mix(int records, int operations) {
    return Map.of(
        "recordcount",
        "" + records,
        "operationcount",
        "" + operations,
        "readproportion",
        "0.45",
        "updateproportion",
        "0.35",
        "scanproportion",
        "0.15",
        "insertproportion",
        "0.05",
        "maxscanlength",
        "5",
        "requestdistribution",
        "zipfian",
        "writeallfields",
        "true");
  }

  private static void assertMixRan(YcsbRun run, boolean caches) {
    run.assertOnlyOk(false);
    for (String operation : new String[] {"READ", "UPDATE", "SCAN", "INSERT"}) {
      assertThat(run.returned(operation, "OK"))
          .as("%s OK in YCSB's output:\n%s", operation, run.output)
          .isPositive();
      assertThat(run.stat("ops." + operation))
          .as("the binding counted what YCSB counted, %s", operation)
          .isEqualTo(run.operations(operation));
      assertThat(run.stat("errors." + operation)).isZero();
      assertThat(run.stat("dbTrips." + operation) + run.stat("cacheTrips." + operation))
          .isPositive();
    }
    boolean writeBack = run.stats.containsKey("writeback.drained");
    assertThat(run.stat("dbTrips.UPDATE"))
        .as("updates call the database now, unless they are buffered")
        .isEqualTo(writeBack ? 0 : run.stat("ops.UPDATE"));
    if (caches) {
      assertThat(run.stat("cacheTrips.READ")).isGreaterThanOrEqualTo(run.stat("ops.READ"));
      assertThat(run.stat("dbTrips.READ"))
          .as("some reads were answered by the cache")
          .isLessThan(run.stat("ops.READ"));
    } else {
      assertThat(run.stat("cacheTrips.READ") + run.stat("cacheTrips.UPDATE")).isZero();
      assertThat(run.stat("dbTrips.READ")).isEqualTo(run.stat("ops.READ"));
    }
    assertThat(run.stat("rowReadsChecked"))
        .as("reads checked for staleness; stats %s", run.stats)
        .isPositive();
    System.out.printf(
        "%s: %.0f ops/s, %s row reads checked, %s stale%n",
        run.stats.getProperty("binding"),
        run.result.throughput(),
        run.stat("rowReadsChecked"),
        run.stat("anomalies"));
  }
}
