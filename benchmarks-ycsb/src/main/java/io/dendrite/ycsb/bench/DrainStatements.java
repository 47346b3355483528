package io.dendrite.ycsb.bench;

import io.dendrite.iq.bench.ProcCpu;
import io.dendrite.store.mysql.MySqlStore;
import io.dendrite.writeback.change.Change;
import io.dendrite.writeback.change.ChangeSequence;
import io.dendrite.writeback.change.EntityChanges;
import io.dendrite.writeback.change.EntityKey;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/**
 * {@code dev/bench --drain-statements [batches]}: what one drained row costs the client and the database with
 * each driver {@link MySqlStore} takes, side by side in one run (rounds alternate the drivers, so a busy machine
 * slows both alike). Each batch is what a YCSB write-back drain applies: 64 distinct rows, each one {@code UPDATE}
 * of ten 100-byte text columns, in one transaction through {@link MySqlStore#apply}. Client CPU is the calling
 * thread's (the drivers do a batch's work there); database CPU is that of the MariaDB threads serving the
 * store's connections (MariaDB's {@code PROCESSLIST.TID}, read in {@code /proc}), so other clients of the same
 * server do not count, and neither does InnoDB's background work (page flushing, purge), alike for both drivers.
 */
@Command(
    mixinStandardHelpOptions = true,
    name = "dev/bench --drain-statements",
    description = "One drained row's client and database CPU with each MySQL driver, side by side.")
public final class DrainStatements implements Callable<Integer> {
  private static final String TABLE = "drain_statements";
  private static final int ROWS = 20_000;
  private static final int BATCH = 64;
  private static final int FIELDS = 10;
  private static final int ROUNDS = 3;
  private static final int WARMUP_BATCHES = 10;

  @Parameters(
      paramLabel = "batches",
      arity = "0..1",
      defaultValue = "100",
      description = "batches per measurement (default ${DEFAULT-VALUE})")
  private int batches;

  private DrainStatements() {}

  public static void main(String[] argv) {
    System.exit(new CommandLine(new DrainStatements()).execute(argv));
  }

  @Override
  public Integer call() throws Exception {
    String url = System.getenv("DENDRITE_MYSQL_URL");
    if (url == null) {
      throw new IllegalStateException("DENDRITE_MYSQL_URL is not set (dev/services env prints it)");
    }
    Path pidFile =
        Path.of(
            System.getenv().getOrDefault("DENDRITE_SERVICES_DIR", "target/services"),
            "mariadb",
            "mariadbd.pid");
    long databasePid = Long.parseLong(Files.readString(pidFile).strip());
    long ticksPerSecond = ProcCpu.clockTicksPerSecond().orElse(100);
    createTable(url);
    try (Connection monitor = DriverManager.getConnection(url)) {
      run(url, batches, monitor, databasePid, ticksPerSecond);
    }
    return CommandLine.ExitCode.OK;
  }

  private static void run(
      String url, int batches, Connection monitor, long databasePid, long ticksPerSecond)
      throws SQLException {
    List<String> drivers = List.of("connector-j", "mariadb");
    System.out.printf(
        "%d rows per batch, %d batches per measurement, %d rounds%n", BATCH, batches, ROUNDS);
    System.out.println(
        "| round | driver | client CPU µs/row | database CPU µs/row | wall µs/row |");
    System.out.println("|---:|---|---:|---:|---:|");
    Random random = new Random(1);
    for (int round = 1; round <= ROUNDS; round++) {
      for (String driver : drivers) {
        String driverUrl = BenchMain.mysqlUrl(url, driver);
        try (MySqlStore store = MySqlStore.open(driverUrl, 1, Duration.ofSeconds(30))) {
          for (int i = 0; i < WARMUP_BATCHES; i++) {
            store.apply(batch(random));
          }
          long databaseBefore = storeThreadTicks(monitor, databasePid);
          Measured measured = measure(store, random, batches);
          long databaseTicks = storeThreadTicks(monitor, databasePid) - databaseBefore;
          double rows = (double) batches * BATCH;
          System.out.printf(
              "| %d | %s | %.1f | %.1f | %.1f |%n",
              round,
              driver.equals("connector-j") ? "Connector/J, rewritten batch" : "MariaDB, bulk",
              measured.clientNanos / 1000.0 / rows,
              databaseTicks * 1_000_000.0 / ticksPerSecond / rows,
              measured.wallNanos / 1000.0 / rows);
        }
      }
    }
  }

  private record Measured(long clientNanos, long wallNanos) {}

  private static Measured measure(MySqlStore store, Random random, int batches) {
    ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    long client = 0;
    long wall = 0;
    for (int i = 0; i < batches; i++) {
      List<EntityChanges> batch = batch(random);
      long cpuBefore = threads.getCurrentThreadCpuTime();
      long wallBefore = System.nanoTime();
      store.apply(batch);
      wall += System.nanoTime() - wallBefore;
      client += threads.getCurrentThreadCpuTime() - cpuBefore;
    }
    return new Measured(client, wall);
  }

  /**
   * CPU ticks of the MariaDB threads serving this database's connections other than {@code monitor}: the store's
   * pool, as nothing else connects to the benchmark's database meanwhile.
   */
  private static long storeThreadTicks(Connection monitor, long databasePid) throws SQLException {
    long ticks = 0;
    try (PreparedStatement threads =
            monitor.prepareStatement(
                "SELECT TID FROM information_schema.PROCESSLIST"
                    + " WHERE DB = DATABASE() AND ID <> CONNECTION_ID()");
        ResultSet rows = threads.executeQuery()) {
      while (rows.next()) {
        long thread = rows.getLong(1);
        ticks +=
            ProcCpu.threadTicks(databasePid, thread)
                .orElseThrow(
                    () ->
                        new IllegalStateException(
                            "cannot read the CPU of MariaDB's thread " + thread));
      }
    }
    return ticks;
  }

  private static List<EntityChanges> batch(Random random) {
    Set<Integer> keys = new LinkedHashSet<>();
    while (keys.size() < BATCH) {
      keys.add(random.nextInt(ROWS));
    }
    List<EntityChanges> batch = new ArrayList<>();
    for (int key : keys) {
      List<Change> sets = new ArrayList<>();
      for (int f = 0; f < FIELDS; f++) {
        sets.add(Change.set("f" + f, text(random)));
      }
      batch.add(new EntityChanges(new EntityKey(TABLE, "user" + key), new ChangeSequence(sets)));
    }
    return batch;
  }

  private static String text(Random random) {
    char[] chars = new char[100];
    for (int i = 0; i < chars.length; i++) {
      chars[i] = (char) ('a' + random.nextInt(26));
    }
    return new String(chars);
  }

  private static void createTable(String url) throws SQLException {
    try (Connection connection = DriverManager.getConnection(url);
        Statement statement = connection.createStatement()) {
      statement.execute("DROP TABLE IF EXISTS " + TABLE);
      StringBuilder ddl =
          new StringBuilder("CREATE TABLE " + TABLE + " (k VARCHAR(255) NOT NULL PRIMARY KEY");
      for (int f = 0; f < FIELDS; f++) {
        ddl.append(", f").append(f).append(" TEXT");
      }
      statement.execute(ddl.append(")").toString());
      try (PreparedStatement insert =
          connection.prepareStatement("INSERT INTO " + TABLE + " (k) VALUES (?)")) {
        for (int key = 0; key < ROWS; key++) {
          insert.setString(1, "user" + key);
          insert.addBatch();
          if (key % 1000 == 999) {
            insert.executeBatch();
          }
        }
        insert.executeBatch();
      }
    }
  }
}
