package io.dendrite.ycsb;

import static io.dendrite.ycsb.YcsbRun.with;
import static org.assertj.core.api.Assertions.assertThat;

import io.dendrite.testsupport.MemcachedAddress;
import io.dendrite.testsupport.MySqlTestDatabase;
import io.dendrite.testsupport.RealServers;
import io.dendrite.testsupport.cache.EmbeddedIqServers;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The stale-read count on a hot-key workload (8 threads reading and updating 5 records): look-aside memcached without
 * leases must show stale reads (the checker's negative control: if it shows none, the check is broken), Dendrite
 * none under any write policy, on the same workload against the same database.
 */
@ExtendWith(RealServers.class)
class StaleReadsIT {
  private static final int ROUNDS = 3;

  @TempDir Path directory;

  @Test
  void lookasideReadsStaleValuesDendriteDoesNot(
      MySqlTestDatabase database, MemcachedAddress memcached) throws Exception {
    Map<String, String> mysql =
        Map.of(RecordStore.MYSQL_URL, database.jdbcUrl(), "recordcount", "5", "fieldcount", "2");
    YcsbRun.run(directory, true, MySqlClient.class, 1, mysql).assertOnlyOk(false);

    // The race needs a reader's miss to straddle a writer's commit and delete: usually many times a
    // second, but a loaded machine may take longer, so the control gets a few rounds before it is
    // declared broken.
    long lookasideStale = 0;
    for (int round = 0; round < ROUNDS && lookasideStale == 0; round++) {
      YcsbRun lookaside =
          YcsbRun.run(
              directory,
              false,
              MemcachedLookasideClient.class,
              8,
              with(
                  mysql,
                  hotKeys(),
                  Map.of(
                      LookasideBackend.SERVERS,
                      memcached.hostAndPort(),
                      LookasideBackend.KEY_PREFIX,
                      memcached.keyPrefix() + round + ":")));
      lookaside.assertOnlyOk(false);
      lookasideStale = lookaside.stat("anomalies");
      System.out.printf(
          "look-aside round %d: %d stale of %d checked row reads%n",
          round, lookasideStale, lookaside.stat("rowReadsChecked"));
    }
    assertThat(lookasideStale)
        .as("stale reads through look-aside memcached without leases")
        .isPositive();

    for (String policy : new String[] {"write-around", "write-through", "write-back"}) {
      try (EmbeddedIqServers cache = EmbeddedIqServers.start(1)) {
        YcsbRun dendrite =
            YcsbRun.run(
                directory,
                false,
                DendriteClient.class,
                8,
                with(
                    mysql,
                    hotKeys(),
                    Map.of(
                        DendriteBackend.POLICY,
                        policy,
                        DendriteBackend.SERVERS,
                        cache.addresses())));
        dendrite.assertOnlyOk(false);
        System.out.printf(
            "dendrite %s: %d stale of %d checked row reads%n",
            policy, dendrite.stat("anomalies"), dendrite.stat("rowReadsChecked"));
        assertThat(dendrite.stat("rowReadsChecked")).isPositive();
        assertThat(dendrite.stat("anomalies"))
            .as("stale reads through Dendrite %s", policy)
            .isZero();
      }
    }
  }

  /** 2 000 operations, half reads, half updates of every field, uniformly over the 5 records. */
  private static Map<String, String> hotKeys() {
    return Map.of(
        "operationcount",
        "2000",
        "readproportion",
        "0.5",
        "updateproportion",
        "0.5",
        "scanproportion",
        "0",
        "insertproportion",
        "0",
        "requestdistribution",
        "uniform",
        "writeallfields",
        "true");
  }
}
