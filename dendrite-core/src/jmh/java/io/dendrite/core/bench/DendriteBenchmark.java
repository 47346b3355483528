package io.dendrite.core.bench;

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
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Latency of a get hit, a get miss and an update through Dendrite, with an embedded IQ server on
 * loopback and an in-memory H2 table (so the numbers are Dendrite's and the cache's, not a disk's).
 * Cache round trips per operation are printed at the end of each trial.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(1)
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 3, time = 2)
public class DendriteBenchmark {
  private static final int ROWS = 10_000;
  private static final int SCAN = 5;

  @Param({"WRITE_AROUND", "WRITE_THROUGH"})
  public WritePolicy policy;

  /** With the near cache (the default), a hit is answered from this process's heap; without it, by the server. */
  @Param({"true", "false"})
  public boolean nearCache;

  private IqServer server;
  private IqClient cache;
  private Connection db;
  private RangeCache<Integer, long[]> dendrite;
  private final AtomicLong missCounter = new AtomicLong();

  private static final RowCodec<Integer, long[]> ROW =
      new RowCodec<>() {
        @Override
        public Integer attributeOf(long[] row) {
          return (int) row[0];
        }

        @Override
        public Object identityOf(long[] row) {
          return row[0];
        }

        @Override
        public byte[] encode(long[] row) {
          return ByteBuffer.allocate(16).putLong(row[0]).putLong(row[1]).array();
        }

        @Override
        public long[] decode(byte[] bytes) {
          ByteBuffer buffer = ByteBuffer.wrap(bytes);
          return new long[] {buffer.getLong(), buffer.getLong()};
        }
      };

  @Setup(Level.Trial)
  public void start() throws SQLException {
    server = IqServer.start(IqServerConfig.builder().port(0).memoryBytes(512L << 20).build());
    cache = IqClient.builder().servers("127.0.0.1:" + server.port()).build();
    db = DriverManager.getConnection("jdbc:h2:mem:bench;MODE=MySQL");
    try (Statement statement = db.createStatement()) {
      statement.execute("CREATE TABLE t (id INT PRIMARY KEY, v BIGINT)");
      statement.execute("INSERT INTO t SELECT X, 0 FROM SYSTEM_RANGE(0, " + (ROWS - 1) + ")");
    }
    dendrite =
        Dendrite.builder(DomainType.INTEGER, ROW)
            .collection("bench")
            .domain("id")
            .cache(cache)
            .writePolicy(policy)
            .nearCache(nearCache)
            .buildRangeCache();
    for (int lowerBound = 0; lowerBound + SCAN <= ROWS; lowerBound += SCAN) {
      dendrite.get(
          lowerBound, lowerBound + SCAN - 1, this::select); // warm: every aligned interval cached
    }
  }

  @TearDown(Level.Trial)
  public void stop() throws SQLException {
    DendriteMetrics metrics = dendrite.metrics();
    System.out.printf(
        "%n[%s, near cache %s] cache round trips: %.2f per hit, %.2f per miss, %.2f per update; near hits %d%n",
        policy,
        nearCache,
        metrics.roundTripsPerHit(),
        metrics.roundTripsPerMiss(),
        metrics.roundTripsPerWrite(),
        metrics.nearHits());
    dendrite.close();
    cache.close();
    server.close();
    db.close();
  }

  /** A cached aligned interval of five rows; sampled, so that the report has percentiles (p50 is the target). */
  @Benchmark
  @BenchmarkMode(Mode.SampleTime)
  public List<long[]> getHit() {
    int lowerBound = ThreadLocalRandom.current().nextInt(ROWS / SCAN) * SCAN;
    return dendrite.get(lowerBound, lowerBound + SCAN - 1, this::select);
  }

  /** An interval never asked before: I lease, Shared lease, query, log record, fill, PrInT insert. */
  @Benchmark
  public List<long[]> getMiss() {
    long n = missCounter.getAndIncrement();
    int lowerBound = (int) (n % (ROWS - SCAN));
    int upperBound = lowerBound + 1 + (int) (n / (ROWS - SCAN)) % 3;
    return dendrite.get(lowerBound, upperBound, this::select);
  }

  /** A point update inside a cached aligned interval: one cached entry to delete or refresh. */
  @Benchmark
  public void update() {
    int id = ThreadLocalRandom.current().nextInt(ROWS);
    long value = ThreadLocalRandom.current().nextLong();
    dendrite.write(
        id,
        id,
        new long[] {id, value},
        this::write,
        (interval, cached) ->
            cached.stream().map(row -> row[0] == id ? new long[] {id, value} : row).toList());
  }

  private List<long[]> select(int lowerBound, int upperBound) throws SQLException {
    try (PreparedStatement select =
        db.prepareStatement("SELECT id, v FROM t WHERE id BETWEEN ? AND ? ORDER BY id")) {
      select.setInt(1, lowerBound);
      select.setInt(2, upperBound);
      List<long[]> rows = new ArrayList<>();
      try (ResultSet result = select.executeQuery()) {
        while (result.next()) {
          rows.add(new long[] {result.getLong(1), result.getLong(2)});
        }
      }
      return rows;
    }
  }

  private void write(long[] row) throws SQLException {
    try (PreparedStatement update = db.prepareStatement("UPDATE t SET v = ? WHERE id = ?")) {
      update.setLong(1, row[1]);
      update.setInt(2, (int) row[0]);
      update.executeUpdate();
    }
  }
}
