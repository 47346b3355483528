package io.dendrite.ycsb;

import io.dendrite.core.Dendrite;
import io.dendrite.core.DendriteMetrics;
import io.dendrite.core.DomainType;
import io.dendrite.core.RangeCache;
import io.dendrite.core.WriteCommand;
import io.dendrite.core.WritePolicy;
import io.dendrite.iq.client.IqClient;
import io.dendrite.writeback.change.EntityChanges;
import io.dendrite.writeback.document.DocumentWriteBack;
import io.dendrite.writeback.document.RangeWriteBack;
import io.dendrite.writeback.engine.WriteBackMetrics;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * Records through a {@link Dendrite} over the record number: a read is the point interval [n, n], a scan the range
 * predicate [first, last], and a write goes through Dendrite's write path with the row change as write-back buffers
 * it ({@link EntityChanges}), which Dendrite also appends to the cached scan results it touches as a change record
 * ({@link RecordChangeRecords}). Write-back buffers the
 * change with a {@link RangeWriteBack} over a {@link DocumentWriteBack} engine whose drain threads apply it later; what is
 * still buffered at the end stays in the cache servers (reported as {@code writeback.pendingAtEnd}).
 *
 * <p>Cache round trips are the requests the calling thread sent through the cache client during the operation ({@link
 * io.dendrite.iq.client.ThreadCounters#requests()}): Dendrite's, and under write-back the buffer's (pinned replicas,
 * interval log). Database round trips are the queries and applies Dendrite called back; under write-back, buffered
 * writes reach the database through the drain threads ({@code writeback.drained}) and through misses that apply the
 * buffered writes they overlap, which are not counted.
 */
final class DendriteBackend implements RecordBackend {
  /** {@code dendrite.db}: mysql (default) or mongodb. */
  static final String DB = "dendrite.db";

  /** {@code dendrite.policy}: write-around (default), write-through or write-back. */
  static final String POLICY = "dendrite.policy";

  /** {@code dendrite.beta}: β in [0, 1] (default 1). */
  static final String BETA = "dendrite.beta";

  /** {@code dendrite.servers}: the IQ servers, {@code host:port,host:port...}. Required. */
  static final String SERVERS = "dendrite.servers";

  /** {@code dendrite.drainthreads}: write-back drain threads (default 2). */
  static final String DRAIN_THREADS = "dendrite.drainthreads";

  /** {@code dendrite.replicas}: servers each buffered write is pinned on (default 1). */
  static final String REPLICAS = "dendrite.replicas";

  /** {@code dendrite.partitions}: write-back pending-writes partitions (default 64). */
  static final String PARTITIONS = "dendrite.partitions";

  /** {@code dendrite.drainbatch}: documents a write-back drain applies in one database transaction (default 64). */
  static final String DRAIN_BATCH = "dendrite.drainbatch";

  /**
   * {@code dendrite.connections}: connections per IQ server, each sending thread keeping to one (default one per
   * thread that sends: YCSB's {@code threadcount}, the drain threads and range write-back's log thread).
   */
  static final String CONNECTIONS = "dendrite.connections";

  /** {@code dendrite.draindelayms}: write-back drain delay, {@code DocumentWriteBack.Builder.drainDelay} (default 0). */
  static final String DRAIN_DELAY_MS = "dendrite.draindelayms";

  /**
   * {@code dendrite.nearcachebytes}: the range owner's near cache bound, {@code Dendrite.Builder.nearCacheMaxBytes}
   * (default 64 MiB; 0 turns it off, so that every hit reads the IQ servers).
   */
  static final String NEAR_CACHE_BYTES = "dendrite.nearcachebytes";

  private final RecordStore store;
  private final IqClient cache;
  private final DocumentWriteBack engine;
  private final RangeWriteBack<Long> buffer;
  private final RangeCache<Long, YcsbRecord> dendrite;

  /** Under write-back, the one command kind the Dendrite writes: a record's changes, for the buffer. */
  private final WriteCommand<Long, YcsbRecord, EntityChanges> buffered;

  private DendriteBackend(
      RecordStore store,
      IqClient cache,
      DocumentWriteBack engine,
      RangeWriteBack<Long> buffer,
      RangeCache<Long, YcsbRecord> dendrite,
      WriteCommand<Long, YcsbRecord, EntityChanges> buffered) {
    this.store = store;
    this.cache = cache;
    this.engine = engine;
    this.buffer = buffer;
    this.dendrite = dendrite;
    this.buffered = buffered;
  }

  /** A {@link DendriteBackend}, or with {@value PartitionedBackend#ZOOKEEPER} set a {@link PartitionedBackend}. */
  static RecordBackend open(BindingProperties properties, RecordTable table) {
    RecordStore.Kind kind = database(properties);
    WritePolicy policy = policy(properties.string(POLICY, "write-around"));
    double beta = properties.real(BETA, 1.0);
    if (!(beta >= 0 && beta <= 1)) {
      throw new IllegalArgumentException(BETA + " must be in [0, 1], got " + beta);
    }
    String[] servers =
        properties
            .optional(SERVERS)
            .orElseThrow(
                () ->
                    new IllegalArgumentException(
                        "set " + SERVERS + " to the IQ servers, host:port,..."))
            .split("\\s*,\\s*");
    int drainThreads = properties.integer(DRAIN_THREADS, 2, 0);
    // One per sending thread: no thread reads another's reply and wakes it
    // (docs/history/benchmarks-2026-11.md, 2026-11-24).
    int senders = properties.integer("threadcount", 1, 1) + drainThreads + 1;
    if (properties.optional(PartitionedBackend.ZOOKEEPER).isPresent()) {
      // The owner's forwarding threads send too: sharing a YCSB thread's connection, a forwarded
      // write waited for the other thread's replies (docs/history/benchmarks-2026-11.md, "Many
      // application processes").
      senders += PartitionedBackend.forwardingThreads(properties);
    }
    int connections = properties.integer(CONNECTIONS, senders, 1);
    RecordStore store = RecordStore.open(kind, properties, table);
    if (properties.optional(PartitionedBackend.ZOOKEEPER).isPresent()) {
      return PartitionedBackend.open(properties, table, store, servers, connections, policy, beta);
    }
    IqClient cache = null;
    DocumentWriteBack engine = null;
    RangeWriteBack<Long> buffer = null;
    WriteCommand<Long, YcsbRecord, EntityChanges> buffered = null;
    try {
      cache = IqClient.builder().servers(servers).connectionsPerServer(connections).build();
      RecordChangeRecords records = new RecordChangeRecords(table);
      Dendrite.Builder<Long, YcsbRecord> builder =
          Dendrite.builder(DomainType.LONG, new RecordCodec())
              .collection(table.name())
              .domain(RecordTable.NUMBER)
              .cache(cache)
              .maxSharedFraction(beta)
              .nearCacheMaxBytes(nearCacheBytes(properties))
              .changeRecords(records);
      if (policy != WritePolicy.WRITE_BACK) {
        builder.writePolicy(policy);
      } else {
        // One backend per JVM, and this JVM owns the range (the Dendrite's coordinator is local).
        engine = engine(properties, cache, store, true);
        buffer =
            RangeWriteBack.builder(DomainType.LONG)
                .writeBack(engine)
                .collection(table.name())
                .domain(RecordTable.NUMBER)
                .build();
        buffered = PartitionedBackend.command(records, store);
        builder.writeBack(buffer, List.of(buffered));
      }
      return new DendriteBackend(store, cache, engine, buffer, builder.buildRangeCache(), buffered);
    } catch (RuntimeException e) {
      closeAll(buffer, engine, cache, store);
      throw e;
    }
  }

  /** The near cache's bound {@value #NEAR_CACHE_BYTES} sets. */
  static long nearCacheBytes(BindingProperties properties) {
    return properties.number(NEAR_CACHE_BYTES, 64L << 20, 0);
  }

  /** The database {@value #DB} names. */
  static RecordStore.Kind database(BindingProperties properties) {
    return switch (properties.string(DB, "mysql").toLowerCase(Locale.ROOT)) {
      case "mysql" -> RecordStore.Kind.MYSQL;
      case "mongodb" -> RecordStore.Kind.MONGODB;
      default ->
          throw new IllegalArgumentException(
              DB + " must be mysql or mongodb, got " + properties.string(DB, ""));
    };
  }

  /** The write-back engine the properties describe; {@code singleProcess} when no other process shares it. */
  static DocumentWriteBack engine(
      BindingProperties properties, IqClient cache, RecordStore store, boolean singleProcess) {
    return engineSettings(
            properties, DocumentWriteBack.builder().cache(cache).store(store.dataStore()))
        .singleProcess(singleProcess)
        .build();
  }

  /** {@code engine} with the engine settings the properties give. */
  static DocumentWriteBack.Builder engineSettings(
      BindingProperties properties, DocumentWriteBack.Builder engine) {
    return engine
        .replicas(properties.integer(REPLICAS, 1, 1))
        .partitions(properties.integer(PARTITIONS, 64, 1))
        .drainThreads(properties.integer(DRAIN_THREADS, 2, 0))
        .drainBatch(properties.integer(DRAIN_BATCH, 64, 1))
        .drainDelay(Duration.ofMillis(properties.integer(DRAIN_DELAY_MS, 0, 0)));
  }

  private static WritePolicy policy(String name) {
    return switch (name.toLowerCase(Locale.ROOT)) {
      case "write-around" -> WritePolicy.WRITE_AROUND;
      case "write-through" -> WritePolicy.WRITE_THROUGH;
      case "write-back" -> WritePolicy.WRITE_BACK;
      default ->
          throw new IllegalArgumentException(
              POLICY + " must be write-around, write-through or write-back, got " + name);
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
    return counted(
        trips,
        () ->
            dendrite.get(
                first,
                last,
                (lower, upper) -> {
                  trips.database(1);
                  return store.scan(lower, upper);
                }));
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

  /**
   * Dendrite's insert, update and delete are one write path; the change says what the write does, to the database
   * and, as a change record ({@link RecordChangeRecords}), to the cached scan results.
   */
  private void write(long number, EntityChanges change, TripCount trips) {
    counted(
        trips,
        () -> {
          if (buffered != null) {
            dendrite.write(number, number, change, buffered); // to the write buffer
          } else {
            dendrite.write(
                number,
                number,
                change,
                applied -> {
                  trips.database(1);
                  store.apply(applied);
                },
                null);
          }
          return null;
        });
  }

  /** Runs a Dendrite call and adds the cache round trips it made on this thread. */
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

  /** Write-around and write-through write the database before acknowledging; write-back's buffer is not waited for. */
  @Override
  public Optional<RecordStore> settledDatabase(Duration timeout) {
    return engine == null ? Optional.of(store) : Optional.empty();
  }

  @Override
  public Map<String, String> finalStats() {
    DendriteMetrics metrics = dendrite.metrics();
    Map<String, String> stats = new LinkedHashMap<>();
    stats.put("dendrite.hits", Long.toString(metrics.hits()));
    stats.put("dendrite.nearHits", Long.toString(metrics.nearHits()));
    stats.put("dendrite.misses", Long.toString(metrics.misses()));
    stats.put("dendrite.cacheUnavailable", Long.toString(metrics.cacheUnavailable()));
    stats.put("dendrite.entriesInvalidated", Long.toString(metrics.entriesInvalidated()));
    stats.put("dendrite.entriesRefreshed", Long.toString(metrics.entriesRefreshed()));
    stats.put("dendrite.entriesMovedToNearCache", Long.toString(metrics.entriesMovedToNearCache()));
    if (engine != null) {
      WriteBackMetrics writeBack = engine.metrics();
      stats.put("writeback.pendingAtEnd", Long.toString(writeBack.pendingWrites()));
      stats.put("writeback.drained", Long.toString(writeBack.drained()));
      stats.put("writeback.bufferedIntervalsAtEnd", Integer.toString(buffer.bufferedEntries()));
      stats.put("writeback.pinnedBytesAtEnd", Long.toString(writeBack.pinnedBytes()));
      stats.put(
          "writeback.writeThroughFallbacks", Long.toString(writeBack.writeThroughFallbacks()));
      stats.put("writeback.storeRetries", Long.toString(writeBack.storeRetries()));
    }
    return stats;
  }

  /** Closes the Dendrite, then range write-back, the engine, the cache client and the store. */
  @Override
  public void close() {
    closeAll(dendrite, buffer, engine, cache, store);
  }

  /** Closes each of {@code resources} (nulls skipped) in order, even when one fails. */
  static void closeAll(AutoCloseable... resources) {
    RuntimeException failure = null;
    for (AutoCloseable resource : resources) {
      try {
        if (resource != null) {
          resource.close();
        }
      } catch (Exception e) {
        if (failure == null) {
          failure =
              new IllegalStateException(
                  "closing the Dendrite backend failed: " + e.getMessage(), e);
        } else {
          failure.addSuppressed(e);
        }
      }
    }
    if (failure != null) {
      throw failure;
    }
  }
}
