package io.dendrite.demo;

import io.dendrite.core.CacheUpdate;
import io.dendrite.core.Dendrite;
import io.dendrite.core.DendriteMetrics;
import io.dendrite.core.DomainType;
import io.dendrite.core.RangeCache;
import io.dendrite.core.RowCodec;
import io.dendrite.core.WritePolicy;
import io.dendrite.iq.client.IqClient;
import io.dendrite.iq.server.IqServer;
import io.dendrite.iq.server.IqServerConfig;
import java.nio.ByteBuffer;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.HdrHistogram.Histogram;

/**
 * dev/demo: starts an embedded IQ server, loads a table into MariaDB (from {@code dev/services}, or H2
 * in MySQL mode when none answers), then runs range gets and updates through Dendrite next to the same
 * range selects on the database alone, and prints hits, misses, round trips and latencies.
 */
public final class Demo {
  private static final String DEV_SERVICES_URL =
      "jdbc:mysql://127.0.0.1:13306/dendrite?user=dendrite&password=dendrite-password";
  private static final int ROWS = 10_000;
  private static final int OPERATIONS = 20_000;
  private static final int SCAN_LENGTH = 5;

  /** Latencies kept to within 0.1 % of their value (three significant digits). */
  private static final int SIGNIFICANT_DIGITS = 3;

  /** A row of the demo table: {@code id} is the range attribute. */
  record Score(int id, long points) {}

  private static final RowCodec<Integer, Score> CODEC =
      new RowCodec<>() {
        @Override
        public Integer attributeOf(Score row) {
          return row.id();
        }

        @Override
        public Object identityOf(Score row) {
          return row.id();
        }

        @Override
        public byte[] encode(Score row) {
          return ByteBuffer.allocate(12).putInt(row.id()).putLong(row.points()).array();
        }

        @Override
        public Score decode(byte[] bytes) {
          ByteBuffer buffer = ByteBuffer.wrap(bytes);
          return new Score(buffer.getInt(), buffer.getLong());
        }
      };

  private Demo() {}

  public static void main(String[] args) throws Exception {
    try (Connection db = openDatabase();
        IqServer server = IqServer.start(IqServerConfig.builder().port(0).build());
        IqClient cache = IqClient.builder().servers("127.0.0.1:" + server.port()).build();
        RangeCache<Integer, Score> dendrite =
            Dendrite.builder(DomainType.INTEGER, CODEC)
                .collection("demo_scores")
                .domain("id")
                .range(0, ROWS - 1)
                .cache(cache)
                .writePolicy(WritePolicy.WRITE_THROUGH)
                .maxSharedFraction(1.0)
                .buildRangeCache()) {
      System.out.printf("IQ server: embedded on 127.0.0.1:%d%n", server.port());
      load(db);
      System.out.printf(
          "Loaded %,d rows. Running %,d operations: 90%% range gets of %d rows over a hot set, 10%% updates.%n%n",
          ROWS, OPERATIONS, SCAN_LENGTH);

      Histogram alone = new Histogram(SIGNIFICANT_DIGITS);
      Histogram nearHits = new Histogram(SIGNIFICANT_DIGITS);
      Histogram serverHits = new Histogram(SIGNIFICANT_DIGITS);
      Histogram misses = new Histogram(SIGNIFICANT_DIGITS);
      Histogram updates = new Histogram(SIGNIFICANT_DIGITS);
      Random random = new Random(42);
      for (int i = 0; i < OPERATIONS; i++) {
        int lowerBound = hotLowerBound(random);
        int upperBound = lowerBound + SCAN_LENGTH - 1;
        if (random.nextInt(10) == 0) {
          Score changed = new Score(lowerBound, random.nextInt(1_000_000));
          long start = System.nanoTime();
          dendrite.write(
              changed.id(), changed.id(), changed, row -> write(db, row), replacing(changed));
          updates.recordValue(System.nanoTime() - start);
          continue;
        }
        DendriteMetrics before = dendrite.metrics();
        long start = System.nanoTime();
        List<Score> result = dendrite.get(lowerBound, upperBound, (lb, ub) -> range(db, lb, ub));
        long elapsed = System.nanoTime() - start;
        DendriteMetrics after = dendrite.metrics();
        (after.misses() > before.misses()
                ? misses
                : after.nearHits() > before.nearHits() ? nearHits : serverHits)
            .recordValue(elapsed);
        if (result.size() != SCAN_LENGTH) {
          throw new IllegalStateException("expected " + SCAN_LENGTH + " rows, got " + result);
        }
        start = System.nanoTime();
        range(db, lowerBound, upperBound);
        alone.recordValue(System.nanoTime() - start);
      }

      DendriteMetrics metrics = dendrite.metrics();
      System.out.printf(
          "gets %,d: hits %,d (%,d from the near cache in this process, %,d from the IQ server),"
              + " misses %,d (hit rate %.1f%%); updates %,d%n",
          metrics.gets(),
          metrics.hits(),
          metrics.nearHits(),
          metrics.hits() - metrics.nearHits(),
          metrics.misses(),
          100.0 * metrics.hits() / Math.max(1, metrics.gets()),
          metrics.writes());
      System.out.printf(
          "cache round trips: %.2f per hit, %.2f per miss, %.2f per update%n%n",
          metrics.roundTripsPerHit(), metrics.roundTripsPerMiss(), metrics.roundTripsPerWrite());
      System.out.printf("%-28s %10s %10s %10s%n", "latency (microseconds)", "p50", "p99", "count");
      print("range select, database alone", alone);
      print("Dendrite get, near hit", nearHits);
      print("Dendrite get, server hit", serverHits);
      print("Dendrite get, miss", misses);
      print("Dendrite update (w-through)", updates);
    }
  }

  /** 80% of gets fall on the first 5% of the table, so the cache warms up within the run. */
  private static int hotLowerBound(Random random) {
    int span = random.nextInt(10) < 8 ? ROWS / 20 : ROWS;
    return random.nextInt(span - SCAN_LENGTH);
  }

  private static Connection openDatabase() throws SQLException {
    String url = System.getenv().getOrDefault("DENDRITE_MYSQL_URL", DEV_SERVICES_URL);
    try {
      Connection connection = DriverManager.getConnection(url);
      System.out.println(
          "Database: MariaDB/MySQL at " + url.replaceAll("password=[^&]*", "password=***"));
      return connection;
    } catch (SQLException unavailable) {
      System.out.println(
          "Database: H2 in MySQL mode, in this JVM's memory (no MariaDB answered at "
              + url.replaceAll("\\?.*", "")
              + "; `dev/services start mariadb` starts one). A select here costs no network"
              + " round trip and no other process's CPU, which a real database a network hop away"
              + " does: the database-alone column is far faster than it would be, and so is"
              + " every miss; Dendrite's hits cost the same either way.");
      return DriverManager.getConnection("jdbc:h2:mem:demo;MODE=MySQL;DB_CLOSE_DELAY=-1");
    }
  }

  private static void load(Connection db) throws SQLException {
    try (Statement statement = db.createStatement()) {
      statement.execute("DROP TABLE IF EXISTS demo_scores");
      statement.execute("CREATE TABLE demo_scores (id INT PRIMARY KEY, points BIGINT NOT NULL)");
    }
    try (PreparedStatement insert = db.prepareStatement("INSERT INTO demo_scores VALUES (?, ?)")) {
      for (int id = 0; id < ROWS; id++) {
        insert.setInt(1, id);
        insert.setLong(2, id * 10L);
        insert.addBatch();
      }
      insert.executeBatch();
    }
  }

  private static List<Score> range(Connection db, int lowerBound, int upperBound)
      throws SQLException {
    try (PreparedStatement select =
        db.prepareStatement(
            "SELECT id, points FROM demo_scores WHERE id BETWEEN ? AND ? ORDER BY id")) {
      select.setInt(1, lowerBound);
      select.setInt(2, upperBound);
      List<Score> rows = new ArrayList<>();
      try (ResultSet result = select.executeQuery()) {
        while (result.next()) {
          rows.add(new Score(result.getInt(1), result.getLong(2)));
        }
      }
      return rows;
    }
  }

  private static void write(Connection db, Score row) throws SQLException {
    try (PreparedStatement update =
        db.prepareStatement("UPDATE demo_scores SET points = ? WHERE id = ?")) {
      update.setLong(1, row.points());
      update.setInt(2, row.id());
      update.executeUpdate();
    }
  }

  private static CacheUpdate<Integer, Score> replacing(Score changed) {
    return (interval, cached) ->
        cached.stream().map(row -> row.id() == changed.id() ? changed : row).toList();
  }

  /** One row of the latency table: p50 and p99 in microseconds of {@code nanos}, and how many there were. */
  private static void print(String label, Histogram nanos) {
    System.out.printf(
        "%-28s %10.0f %10.0f %10d%n",
        label,
        nanos.getValueAtPercentile(50) / 1_000.0,
        nanos.getValueAtPercentile(99) / 1_000.0,
        nanos.getTotalCount());
  }
}
