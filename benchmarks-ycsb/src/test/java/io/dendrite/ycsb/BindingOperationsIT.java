package io.dendrite.ycsb;

import static org.assertj.core.api.Assertions.assertThat;

import io.dendrite.testsupport.MemcachedAddress;
import io.dendrite.testsupport.MongoTestDatabase;
import io.dendrite.testsupport.MySqlTestDatabase;
import io.dendrite.testsupport.RealServers;
import io.dendrite.testsupport.ZooKeeperAddress;
import io.dendrite.testsupport.cache.EmbeddedIqServers;
import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.Vector;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import site.ycsb.ByteIterator;
import site.ycsb.DB;
import site.ycsb.Status;
import site.ycsb.StringByteIterator;

/**
 * Each binding's five operations, called directly as YCSB calls them, against the real servers: what is written
 * is read back (through the cache, twice, so the second read is a hit), deletes (which YCSB's core workload never
 * issues) remove the record from reads and scans, and the last cleanup writes the stats file.
 */
@ExtendWith(RealServers.class)
class BindingOperationsIT {
  private static final String TABLE = "usertable";

  @TempDir Path directory;

  @Test
  void mysqlAlone(MySqlTestDatabase database) throws Exception {
    exercise(new MySqlClient(), Map.of(RecordStore.MYSQL_URL, database.jdbcUrl()));
  }

  @Test
  void mongoDbAlone(MongoTestDatabase database) throws Exception {
    exercise(
        new MongoDbClient(),
        Map.of(
            RecordStore.MONGODB_URL,
            database.connectionString(),
            RecordStore.MONGODB_DATABASE,
            database.name()));
  }

  @Test
  void dendriteOverMySqlEveryPolicyAndBeta(MySqlTestDatabase database) throws Exception {
    for (String policy : List.of("write-around", "write-through", "write-back")) {
      for (String beta : List.of("1", "0")) {
        try (EmbeddedIqServers cache = EmbeddedIqServers.start(1)) {
          exercise(
              new DendriteClient(),
              Map.of(
                  RecordStore.MYSQL_URL,
                  database.jdbcUrl(),
                  DendriteBackend.POLICY,
                  policy,
                  DendriteBackend.BETA,
                  beta,
                  DendriteBackend.SERVERS,
                  cache.addresses()));
        }
      }
    }
  }

  /** The binding over a service of processes (here one), for every policy: ranges owned through ZooKeeper. */
  @Test
  void dendriteOverManyProcessesEveryPolicy(MySqlTestDatabase database, ZooKeeperAddress zk)
      throws Exception {
    for (String policy : List.of("write-around", "write-through", "write-back")) {
      try (EmbeddedIqServers cache = EmbeddedIqServers.start(1)) {
        exercise(
            new DendriteClient(),
            Map.of(
                RecordStore.MYSQL_URL,
                database.jdbcUrl(),
                DendriteBackend.POLICY,
                policy,
                DendriteBackend.SERVERS,
                cache.addresses(),
                PartitionedBackend.ZOOKEEPER,
                zk.connectString(),
                PartitionedBackend.SERVICE,
                zk.service() + "-" + policy,
                PartitionedBackend.RANGES,
                "3"));
      }
    }
  }

  /**
   * Write-back as the benchmark runs it: the scans an update touches stay near hits (the update keeps them current
   * in the near cache alone), and nothing stale is read.
   */
  @Test
  void writeBackUpdatesKeepTheScansTheyTouchNearHits(MySqlTestDatabase database) throws Exception {
    try (EmbeddedIqServers cache = EmbeddedIqServers.start(2)) {
      DB db = new DendriteClient();
      Path statsFile =
          start(
              db,
              Map.of(
                  RecordStore.MYSQL_URL,
                  database.jdbcUrl(),
                  DendriteBackend.POLICY,
                  "write-back",
                  DendriteBackend.SERVERS,
                  cache.addresses()));
      try {
        for (int i = 1; i <= 9; i++) {
          assertThat(db.insert(TABLE, "user00" + i, values("field0", "a" + i, "field1", "b" + i)))
              .isEqualTo(Status.OK);
        }
        scan(db, "user001", 5);
        scan(db, "user003", 5);
        for (int version = 0; version < 5; version++) {
          assertThat(db.update(TABLE, "user004", values("field1", "v" + version)))
              .isEqualTo(Status.OK);
          assertThat(scan(db, "user001", 5))
              .extracting(row -> row.get("field1"))
              .contains("v" + version);
          assertThat(scan(db, "user003", 5))
              .extracting(row -> row.get("field1"))
              .contains("v" + version);
        }
      } finally {
        db.cleanup();
      }
      Properties stats = stats(statsFile);
      assertThat(stats).containsEntry("anomalies", "0").containsEntry("ops.SCAN", "12");
      assertThat(Long.parseLong(stats.getProperty("dendrite.entriesMovedToNearCache")))
          .isEqualTo(2);
      assertThat(Long.parseLong(stats.getProperty("dendrite.nearHits")))
          .as("every scan after an update, but the first two")
          .isGreaterThanOrEqualTo(8);
    }
  }

  @Test
  void dendriteOverMongoDb(MongoTestDatabase database) throws Exception {
    try (EmbeddedIqServers cache = EmbeddedIqServers.start(1)) {
      exercise(
          new DendriteClient(),
          Map.of(
              RecordStore.MONGODB_URL,
              database.connectionString(),
              RecordStore.MONGODB_DATABASE,
              database.name(),
              DendriteBackend.DB,
              "mongodb",
              DendriteBackend.POLICY,
              "write-back",
              DendriteBackend.SERVERS,
              cache.addresses()));
    }
  }

  @Test
  void tardisOverMySql(MySqlTestDatabase database) throws Exception {
    try (EmbeddedIqServers cache = EmbeddedIqServers.start(1)) {
      exercise(
          new TardisClient(),
          Map.of(
              RecordStore.MYSQL_URL,
              database.jdbcUrl(),
              DendriteBackend.SERVERS,
              cache.addresses(),
              TardisBackend.TECHNIQUE,
              "DIS",
              // A scan reads the documents of its range by key: YCSB's keys for these numbers.
              "zeropadding",
              "3",
              InstrumentedDB.VERIFY_DATABASE,
              "true",
              "recordcount",
              "4"));
    }
  }

  /** The control of the read-back: an acknowledged write undone behind the binding's back is found. */
  @Test
  void theReadBackAfterTheRunFindsAnAcknowledgedWriteTheDatabaseLost(MySqlTestDatabase database)
      throws Exception {
    Path statsFile = Files.createTempFile(directory, "stats", ".properties");
    Properties properties = new Properties();
    properties.putAll(
        Map.of(
            RecordStore.MYSQL_URL,
            database.jdbcUrl(),
            "fieldcount",
            "2",
            "recordcount",
            "3",
            InstrumentedDB.VERIFY_DATABASE,
            "true",
            InstrumentedDB.STATS_FILE,
            statsFile.toString()));
    DB db = new MySqlClient();
    db.setProperties(properties);
    db.init();
    try {
      assertThat(db.insert(TABLE, "user1", values("field0", "old", "field1", "x")))
          .isEqualTo(Status.OK);
      assertThat(db.insert(TABLE, "user2", values("field0", "kept", "field1", "y")))
          .isEqualTo(Status.OK);
      assertThat(db.update(TABLE, "user1", values("field0", "acknowledged"))).isEqualTo(Status.OK);
      try (Connection connection = database.connect();
          Statement statement = connection.createStatement()) {
        statement.execute("UPDATE " + TABLE + " SET FIELD0 = 'old' WHERE YCSB_KEY = 'user1'");
      }
    } finally {
      db.cleanup();
    }
    Properties stats = stats(statsFile);
    assertThat(stats)
        .containsEntry("verify.recordsChecked", "2")
        .containsEntry("verify.lostWrites", "1")
        .containsEntry("anomalies", "0");
  }

  @Test
  void memcachedLookaside(MySqlTestDatabase database, MemcachedAddress memcached) throws Exception {
    exercise(
        new MemcachedLookasideClient(),
        Map.of(
            RecordStore.MYSQL_URL,
            database.jdbcUrl(),
            LookasideBackend.SERVERS,
            memcached.hostAndPort(),
            LookasideBackend.KEY_PREFIX,
            memcached.keyPrefix()));
  }

  /** Initializes {@code db} with {@code settings}, two fields per record and a stats file, which it returns. */
  private Path start(DB db, Map<String, String> settings) throws Exception {
    Path statsFile = Files.createTempFile(directory, "stats", ".properties");
    Properties properties = new Properties();
    properties.putAll(settings);
    properties.setProperty("fieldcount", "2");
    properties.setProperty(InstrumentedDB.STATS_FILE, statsFile.toString());
    db.setProperties(properties);
    db.init();
    return statsFile;
  }

  private void exercise(DB db, Map<String, String> settings) throws Exception {
    Path statsFile = start(db, settings);
    try {
      for (int i = 1; i <= 3; i++) {
        assertThat(db.insert(TABLE, "user00" + i, values("field0", "a" + i, "field1", "b" + i)))
            .isEqualTo(Status.OK);
      }
      assertThat(read(db, "user002")).containsEntry("field0", "a2").containsEntry("field1", "b2");
      assertThat(scan(db, "user001", 3))
          .extracting(row -> row.get("field0"))
          .containsExactly("a1", "a2", "a3");

      assertThat(db.update(TABLE, "user002", values("field1", "changed"))).isEqualTo(Status.OK);
      assertThat(read(db, "user002"))
          .containsEntry("field0", "a2")
          .containsEntry("field1", "changed");
      assertThat(read(db, "user002")).as("again, now cached").containsEntry("field1", "changed");
      assertThat(scan(db, "user002", 1))
          .extracting(row -> row.get("field1"))
          .containsExactly("changed");

      assertThat(db.delete(TABLE, "user002")).isEqualTo(Status.OK);
      assertThat(db.read(TABLE, "user002", null, new HashMap<>())).isEqualTo(Status.NOT_FOUND);
      assertThat(scan(db, "user001", 3))
          .extracting(row -> row.get("field0"))
          .containsExactly("a1", "a3");

      Map<String, ByteIterator> oneField = new HashMap<>();
      assertThat(db.read(TABLE, "user003", Set.of("field1"), oneField)).isEqualTo(Status.OK);
      assertThat(oneField).containsOnlyKeys("field1");
      assertThat(db.read(TABLE, "no-number", null, new HashMap<>())).isEqualTo(Status.BAD_REQUEST);
      assertThat(db.read("othertable", "user001", null, new HashMap<>()))
          .isEqualTo(Status.BAD_REQUEST);
    } finally {
      db.cleanup();
    }
    Properties stats = stats(statsFile);
    assertThat(stats)
        .containsEntry("ops.INSERT", "3")
        .containsEntry("ops.DELETE", "1")
        .containsEntry("ops.UPDATE", "1")
        .containsEntry("ops.SCAN", "3")
        .containsEntry("errors.READ", "2")
        .containsEntry("anomalies", "0");
    boolean writeBack = "write-back".equals(settings.get(DendriteBackend.POLICY));
    if (!settings.containsKey(PartitionedBackend.ZOOKEEPER)) {
      // The service binding does not count its statements per YCSB thread (dbTrips stay 0).
      assertThat(Long.parseLong(stats.getProperty("dbTrips.DELETE")))
          .as("a buffered delete reaches the database later")
          .isEqualTo(writeBack ? 0 : 1);
    }
    if (writeBack) {
      assertThat(stats).containsKeys("writeback.pendingAtEnd", "writeback.drained");
    }
    if (settings.containsKey(InstrumentedDB.VERIFY_DATABASE)) {
      assertThat(stats)
          .containsEntry("verify.recordsChecked", "2")
          .containsEntry("verify.lostWrites", "0")
          .containsEntry("tardis.technique", "DIS")
          .containsEntry("tardis.bufferedAtEnd", "0");
    }
    assertThat(Long.parseLong(stats.getProperty("rowReadsChecked"))).isPositive();
  }

  private static Properties stats(Path file) throws IOException {
    Properties stats = new Properties();
    try (Reader reader = Files.newBufferedReader(file)) {
      stats.load(reader);
    }
    return stats;
  }

  private static Map<String, String> read(DB db, String key) {
    Map<String, ByteIterator> result = new HashMap<>();
    assertThat(db.read(TABLE, key, null, result)).isEqualTo(Status.OK);
    return StringByteIterator.getStringMap(result);
  }

  private static List<Map<String, String>> scan(DB db, String key, int count) {
    Vector<HashMap<String, ByteIterator>> result = new Vector<>();
    assertThat(db.scan(TABLE, key, count, null, result)).isEqualTo(Status.OK);
    return result.stream().map(StringByteIterator::getStringMap).toList();
  }

  private static Map<String, ByteIterator> values(String... fieldsAndValues) {
    Map<String, ByteIterator> values = new HashMap<>();
    for (int i = 0; i < fieldsAndValues.length; i += 2) {
      values.put(fieldsAndValues[i], new StringByteIterator(fieldsAndValues[i + 1]));
    }
    return values;
  }
}
