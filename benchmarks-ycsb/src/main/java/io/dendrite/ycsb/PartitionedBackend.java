package io.dendrite.ycsb;

import io.dendrite.coordination.ForwardingSecurity;
import io.dendrite.coordination.ManyProcesses;
import io.dendrite.coordination.PartitionedDendrite;
import io.dendrite.core.Dendrite;
import io.dendrite.core.DomainType;
import io.dendrite.core.WriteCommand;
import io.dendrite.core.WritePolicy;
import io.dendrite.iq.client.IqClient;
import io.dendrite.writeback.WriteBack;
import io.dendrite.writeback.change.EntityChanges;
import io.dendrite.writeback.engine.WriteBackMetrics;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * Records through a {@link PartitionedDendrite}: one of several YCSB client processes of a service, each with its
 * own Dendrite over one cache tier and one database. The record-number domain is split into ranges that ZooKeeper
 * spreads over the processes; a scan's part on a range owned elsewhere is read from the cache directly or, on a
 * miss, forwarded to the owner, and so is every write of such a range. Reads, scans and writes are otherwise as
 * {@link DendriteBackend}'s (change records in the cached scans; under write-back a range write-back buffer per
 * range with an engine of its own, owned by the range: it locks the range's records in this process under the
 * range's lease, which the record number, a function of the YCSB key, keeps each record in).
 *
 * <p>The stats file adds, per process, the operations served here as a range's owner, the hits read directly for
 * ranges owned elsewhere, the gets and writes forwarded (each one more round trip, to the owner) and the forwards
 * sent again. A forwarded operation's cache and database round trips happen at the owner and are not in this
 * process's per-operation counts.
 */
final class PartitionedBackend implements RecordBackend {
  /** {@code dendrite.zookeeper}: the ZooKeeper connect string; setting it makes the backend partitioned. */
  static final String ZOOKEEPER = "dendrite.zookeeper";

  /** {@code dendrite.service}: the service every process of one run names (default {@code ycsb}). */
  static final String SERVICE = "dendrite.service";

  /** {@code dendrite.member}: this process's name in the service (default: pid and a random number). */
  static final String MEMBER = "dendrite.member";

  /** {@code dendrite.ranges}: ranges the record numbers are split into (default 12). */
  static final String RANGES = "dendrite.ranges";

  /** {@code dendrite.domainmax}: the largest record number (default twice {@code recordcount}, for inserts). */
  static final String DOMAIN_MAX = "dendrite.domainmax";

  /**
   * {@code dendrite.processes}: how many processes of the service to wait for, and for the ranges to settle over,
   * before the workload starts (default 1; at most 60 s).
   */
  static final String PROCESSES = "dendrite.processes";

  /** {@code dendrite.sessionms}: the ZooKeeper session timeout in ms (default 10 000). */
  static final String SESSION_MS = "dendrite.sessionms";

  /**
   * {@code dendrite.forwardingsecretfile}: a file whose first line is the forwarding secret every process of the
   * service shares (at least 16 bytes). Unset: forwarding without a secret, on 127.0.0.1 only (every process of the
   * run on one machine).
   */
  static final String FORWARDING_SECRET_FILE = "dendrite.forwardingsecretfile";

  private static final String SCAN = "scan";
  private static final String CHANGE = "change";

  private final RecordStore store;
  private final IqClient cache;

  /** Under write-back, the buffers of the ranges this process owns (their engines' counts); null otherwise. */
  private final WriteBack writeBack;

  private final PartitionedDendrite<Long, YcsbRecord> dendrite;

  private PartitionedBackend(
      RecordStore store,
      IqClient cache,
      WriteBack writeBack,
      PartitionedDendrite<Long, YcsbRecord> dendrite) {
    this.store = store;
    this.cache = cache;
    this.writeBack = writeBack;
    this.dendrite = dendrite;
  }

  /** The owner's threads that run forwarded operations: as many as the YCSB threads, at least 4. */
  static int forwardingThreads(BindingProperties properties) {
    return Math.max(4, properties.integer("threadcount", 1, 1));
  }

  static PartitionedBackend open(
      BindingProperties properties,
      RecordTable table,
      RecordStore store,
      String[] servers,
      int connections,
      WritePolicy policy,
      double beta) {
    IqClient cache = null;
    WriteBack writeBack = null;
    try {
      cache = IqClient.builder().servers(servers).connectionsPerServer(connections).build();
      RecordChangeRecords records = new RecordChangeRecords(table);
      long domainMax =
          properties.number(DOMAIN_MAX, 2 * properties.number("recordcount", 1000, 1), 1);
      ManyProcesses processes =
          ManyProcesses.overZooKeeper(
                  properties.optional(ZOOKEEPER).orElseThrow(), properties.string(SERVICE, "ycsb"))
              .ranges(properties.integer(RANGES, 12, 1))
              .sessionTimeout(Duration.ofMillis(properties.number(SESSION_MS, 10_000, 100)))
              .forwardingThreads(forwardingThreads(properties))
              .forwardingSecurity(
                  properties
                      .optional(FORWARDING_SECRET_FILE)
                      .map(file -> ForwardingSecurity.sharedSecret(Path.of(file)))
                      .orElseGet(ForwardingSecurity::unauthenticatedOnLoopback));
      properties.optional(MEMBER).ifPresent(processes::member);
      Dendrite.Builder<Long, YcsbRecord> builder =
          Dendrite.builder(DomainType.LONG, new RecordCodec())
              .collection(table.name())
              .domain(RecordTable.NUMBER)
              .range(0L, domainMax)
              .cache(cache)
              .maxSharedFraction(beta)
              .nearCacheMaxBytes(DendriteBackend.nearCacheBytes(properties))
              .changeRecords(records)
              .query(SCAN, store::scan)
              .command(CHANGE, command(records, store))
              .deployment(processes);
      if (policy == WritePolicy.WRITE_BACK) {
        writeBack =
            WriteBack.to(store.dataStore())
                // One range's share of a process's writes: one drain thread and a few partitions
                // per range (the same in every process of the run), rather than the engine's
                // settings.
                .engine(
                    engine ->
                        DendriteBackend.engineSettings(properties, engine)
                            .drainThreads(1)
                            .partitions(4))
                .documentAttribute(key -> RecordKey.number(String.valueOf(key.id())));
        builder.writeBack(writeBack);
      } else {
        builder.writePolicy(policy);
      }
      // The deployment is ManyProcesses: what it builds is a PartitionedDendrite, whose
      // settling and counts the stats file reports.
      PartitionedDendrite<Long, YcsbRecord> dendrite =
          (PartitionedDendrite<Long, YcsbRecord>) builder.build();
      int count = properties.integer(PROCESSES, 1, 1);
      try {
        if (!dendrite.awaitSettled(count, Duration.ofSeconds(60))) {
          System.err.println(
              "dendrite: the ranges did not settle over " + count + " processes in 60 s");
        }
      } catch (InterruptedException interrupted) {
        Thread.currentThread().interrupt();
      }
      return new PartitionedBackend(store, cache, writeBack, dendrite);
    } catch (RuntimeException e) {
      DendriteBackend.closeAll(cache, store);
      throw e;
    }
  }

  /** A write as data: the record's change, in the byte form of its change record. */
  /** A record's changes as a command: kept in the cached scans as change records, applied to the store. */
  static WriteCommand<Long, YcsbRecord, EntityChanges> command(
      RecordChangeRecords records, RecordStore store) {
    return new WriteCommand<>() {
      @Override
      public Class<EntityChanges> type() {
        return EntityChanges.class;
      }

      @Override
      public byte[] encode(EntityChanges change) {
        return records.encode(change);
      }

      @Override
      public EntityChanges decode(byte[] bytes) {
        return records.decode(bytes);
      }

      @Override
      public void apply(EntityChanges change) {
        store.apply(change);
      }
    };
  }

  @Override
  public Optional<YcsbRecord> read(String key, long number, TripCount trips) {
    return scan(number, number, trips).stream()
        .filter(record -> record.key().equals(key))
        .findFirst();
  }

  @Override
  public List<YcsbRecord> scan(long first, long last, TripCount trips) {
    return counted(trips, () -> dendrite.get(SCAN, first, last));
  }

  @Override
  public void update(String key, long number, Map<String, String> values, TripCount trips) {
    write(number, store.table().update(key, values), trips);
  }

  @Override
  public void insert(YcsbRecord record, TripCount trips) {
    write(record.number(), store.table().insert(record), trips);
  }

  @Override
  public void delete(String key, long number, TripCount trips) {
    write(number, store.table().delete(key), trips);
  }

  private void write(long number, EntityChanges change, TripCount trips) {
    counted(
        trips,
        () -> {
          dendrite.write(CHANGE, number, number, change);
          return null;
        });
  }

  /** Runs a call and adds the cache round trips it made on this thread (not those an owner made for it). */
  private <T> T counted(TripCount trips, Supplier<T> call) {
    long before = cache.threadCounters().requests();
    long awaitedBefore = cache.threadCounters().roundTrips();
    try {
      return call.get();
    } finally {
      trips.cache((int) (cache.threadCounters().requests() - before));
      trips.cacheAwaited((int) (cache.threadCounters().roundTrips() - awaitedBefore));
    }
  }

  @Override
  public Map<String, String> finalStats() {
    PartitionedDendrite.Metrics metrics = dendrite.metrics();
    Map<String, String> stats = new LinkedHashMap<>();
    stats.put("partitioned.servedHere", Long.toString(metrics.servedHere()));
    stats.put("partitioned.directHits", Long.toString(metrics.directHits()));
    stats.put("partitioned.forwardedGets", Long.toString(metrics.forwardedGets()));
    stats.put("partitioned.forwardedWrites", Long.toString(metrics.forwardedWrites()));
    stats.put("partitioned.resent", Long.toString(metrics.resent()));
    stats.put("partitioned.rangesServedAtEnd", Integer.toString(dendrite.servedRanges().size()));
    if (writeBack != null) {
      // The engines of the ranges served at the end: a range given up took its counts along.
      List<WriteBackMetrics> engines = writeBack.metrics();
      stats.put(
          "writeback.pendingAtEnd",
          Long.toString(engines.stream().mapToLong(WriteBackMetrics::pendingWrites).sum()));
      stats.put(
          "writeback.drained",
          Long.toString(engines.stream().mapToLong(WriteBackMetrics::drained).sum()));
    }
    return stats;
  }

  /** Leaves the service (each range handed over, its engine closed with it), then the cache client and store. */
  @Override
  public void close() {
    DendriteBackend.closeAll(dendrite, cache, store);
  }
}
