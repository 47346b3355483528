package io.dendrite.ycsb;

import io.dendrite.iq.client.IqClient;
import io.dendrite.tardis.Mode;
import io.dendrite.tardis.Solution;
import io.dendrite.tardis.Tardis;
import io.dendrite.tardis.TardisMetrics;
import io.dendrite.tardis.Technique;
import io.dendrite.writeback.change.EntityChanges;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * Records as documents through a {@link Tardis} (write-through, and writes keep being acknowledged while the
 * database is down: chapter 4 of the write-back and TARDIS thesis). A read is {@link Tardis#read} of the record's
 * document; a scan reads each record of the range that way, one after the other (cached range results through
 * {@code TardisDendrite} would be another binding); a write is {@link Tardis#write} of the row change. A miss TARDIS cannot serve (the database down, or, with TAR and DIS, a document still buffered) fails with
 * {@code TardisUnavailableException}, which the binding reports as YCSB's {@code SERVICE_UNAVAILABLE}.
 *
 * <p>The database is opened with a short timeout ({@value RecordStore#TIMEOUT_MS}, default 1 000 ms here): a write
 * waits that long, holding its document's lease, before it is buffered instead. A {@link RecoveryTimeline} follows
 * the mode and the backlog for the stats file; at the end of the run {@link #settledDatabase} waits for recovery to
 * finish, so that the run can check the database against the acknowledged writes.
 */
final class TardisBackend implements RecordBackend {
  /** {@code tardis.technique}: TAR, DIS, TARD or TARDIS (default). */
  static final String TECHNIQUE = "tardis.technique";

  /** {@code tardis.arworkers}: active recovery workers (default {@code Tardis}'s, 4). */
  static final String AR_WORKERS = "tardis.arworkers";

  /** {@code tardis.alpha}: α, documents a worker applies per partition it reads (default {@code Tardis}'s, 50). */
  static final String ALPHA = "tardis.alpha";

  /** {@code tardis.partitions}: ω, the partitions listing buffered documents (default {@code Tardis}'s, 64). */
  static final String PARTITIONS = "tardis.partitions";

  /** {@code tardis.replicas}: servers each buffered write is pinned on (default 1). */
  static final String REPLICAS = "tardis.replicas";

  /**
   * {@code tardis.solution}: how a process learns that a document has a buffered write, RECON (default) or
   * CONTEXTUAL (the thesis measured Contextual).
   */
  static final String SOLUTION = "tardis.solution";

  private final RecordStore store;
  private final CountingDataStore database;
  private final IqClient cache;
  private final Tardis tardis;
  private final RecoveryTimeline timeline;
  private final int zeroPadding;

  private TardisBackend(
      RecordStore store,
      CountingDataStore database,
      IqClient cache,
      Tardis tardis,
      int zeroPadding) {
    this.store = store;
    this.database = database;
    this.cache = cache;
    this.tardis = tardis;
    this.zeroPadding = zeroPadding;
    this.timeline = RecoveryTimeline.follow(tardis);
  }

  static TardisBackend open(BindingProperties properties, RecordTable table) {
    String[] servers =
        properties
            .optional(DendriteBackend.SERVERS)
            .orElseThrow(
                () ->
                    new IllegalArgumentException(
                        "set " + DendriteBackend.SERVERS + " to the IQ servers, host:port,..."))
            .split("\\s*,\\s*");
    Technique technique = properties.choice(TECHNIQUE, Technique.class, Technique.TARDIS);
    Solution solution = properties.choice(SOLUTION, Solution.class, Solution.RECON);
    int workers = properties.integer(AR_WORKERS, 4, 0);
    RecordStore store =
        RecordStore.open(
            DendriteBackend.database(properties), properties, table, Duration.ofSeconds(1));
    IqClient cache = null;
    try {
      // One connection per sending thread: YCSB's threads and the recovery workers.
      int senders = properties.integer("threadcount", 1, 1) + workers + 1;
      cache =
          IqClient.builder()
              .servers(servers)
              .connectionsPerServer(properties.integer(DendriteBackend.CONNECTIONS, senders, 1))
              .build();
      CountingDataStore database = new CountingDataStore(store.dataStore());
      Tardis tardis =
          Tardis.builder()
              .cache(cache)
              .store(database)
              .technique(technique)
              .solution(solution)
              .drainThreads(workers)
              .drainBatch(properties.integer(ALPHA, 50, 1))
              .partitions(properties.integer(PARTITIONS, 64, 1))
              .replicas(properties.integer(REPLICAS, 1, 1))
              .build();
      return new TardisBackend(
          store, database, cache, tardis, properties.integer("zeropadding", 1, 1));
    } catch (RuntimeException e) {
      DendriteBackend.closeAll(cache, store);
      throw e;
    }
  }

  @Override
  public Optional<YcsbRecord> read(String key, long number, TripCount trips) {
    return counted(
        trips, () -> tardis.read(store.table().entityKey(key)).map(store.table()::record));
  }

  @Override
  public List<YcsbRecord> scan(long first, long last, TripCount trips) {
    List<YcsbRecord> records = new ArrayList<>();
    for (long number = first; number <= last && number >= first; number++) {
      read(RecordKey.of(number, zeroPadding), number, trips).ifPresent(records::add);
    }
    return records;
  }

  @Override
  public void update(String key, long number, Map<String, String> values, TripCount trips) {
    write(store.table().update(key, values), trips);
  }

  @Override
  public void insert(YcsbRecord record, TripCount trips) {
    write(store.table().insert(record), trips);
  }

  @Override
  public void delete(String key, long number, TripCount trips) {
    write(store.table().delete(key), trips);
  }

  private void write(EntityChanges change, TripCount trips) {
    counted(
        trips,
        () -> {
          tardis.write(change.key(), change.changes());
          return null;
        });
  }

  /** Runs a TARDIS call and adds the cache requests and database calls it made on this thread. */
  private <T> T counted(TripCount trips, Supplier<T> call) {
    long before = cache.threadCounters().requests();
    long awaitedBefore = cache.threadCounters().roundTrips();
    long databaseBefore = database.callsOfCurrentThread();
    try {
      return call.get();
    } finally {
      trips.cache((int) (cache.threadCounters().requests() - before));
      trips.cacheAwaited((int) (cache.threadCounters().roundTrips() - awaitedBefore));
      trips.database((int) (database.callsOfCurrentThread() - databaseBefore));
    }
  }

  /** Waits until recovery has applied every buffered write: normal mode, nothing listed. */
  @Override
  public Optional<RecordStore> settledDatabase(Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      if (tardis.mode() == Mode.NORMAL && tardis.metrics().bufferedDocuments() == 0) {
        return Optional.of(store);
      }
      if (System.nanoTime() >= deadline) {
        return Optional.empty();
      }
      try {
        Thread.sleep(100);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return Optional.empty();
      }
    }
  }

  @Override
  public Map<String, String> finalStats() {
    TardisMetrics metrics = tardis.metrics();
    Map<String, String> stats = new LinkedHashMap<>(timeline.stop());
    stats.put("tardis.technique", metrics.technique().name());
    stats.put("tardis.modeTransitions", Long.toString(metrics.modeTransitions()));
    stats.put("tardis.bufferedAtEnd", Integer.toString(metrics.bufferedDocuments()));
    stats.put("tardis.failedWritesAbsorbed", Long.toString(metrics.failedWritesAbsorbed()));
    stats.put("tardis.recovered", Long.toString(metrics.recovered()));
    stats.put("tardis.recoveredByForeground", Long.toString(metrics.recoveredByForeground()));
    stats.put("tardis.unavailableMisses", Long.toString(metrics.unavailableMisses()));
    stats.put("tardis.outcomeUnknown", Long.toString(metrics.outcomeUnknown()));
    stats.put("tardis.teleportsRefused", Long.toString(metrics.teleportsRefused()));
    return stats;
  }

  @Override
  public void close() {
    timeline.stop();
    DendriteBackend.closeAll(tardis, cache, store);
  }
}
