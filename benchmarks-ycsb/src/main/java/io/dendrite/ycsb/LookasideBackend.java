package io.dendrite.ycsb;

import com.whalin.MemCached.MemCachedClient;
import com.whalin.MemCached.SockIOPool;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The classic look-aside cache with no leases, over memcached through the Whalin client, MySQL behind it: a read
 * gets the record's key and on a miss reads the database and sets the key; a write changes the database, then
 * deletes the key. Scans go to the database: look-aside caches key lookups, and per-key caching of a scan's rows
 * would only add more of the same race. A reader that misses, reads the old row, and sets it after a concurrent
 * writer deleted the key leaves a stale value cached until the next write: the anomaly leases prevent, which is
 * what this baseline is for.
 *
 * <p>Each memcached call counts as one cache round trip. The Whalin client reports an unreachable server as a miss
 * or a failed store, as look-aside applications see it.
 */
final class LookasideBackend implements RecordBackend {
  /** {@code memcached.servers}: {@code host:port,...}; default the environment's DENDRITE_MEMCACHED. */
  static final String SERVERS = "memcached.servers";

  /**
   * {@code memcached.keyprefix}: prefix of every key; default one fresh per JVM, so a run never reads what an
   * earlier run (over a database loaded differently) left cached. Processes that share a cache must set it equal.
   */
  static final String KEY_PREFIX = "memcached.keyprefix";

  /** {@code memcached.connections}: most connections per server (default 64). */
  static final String CONNECTIONS = "memcached.connections";

  private static final AtomicInteger POOLS = new AtomicInteger();

  private final DatabaseBackend database;
  private final SockIOPool pool;
  private final MemCachedClient memcached;
  private final String keyPrefix;
  private final RecordCodec codec = new RecordCodec();

  private LookasideBackend(
      DatabaseBackend database, SockIOPool pool, MemCachedClient memcached, String keyPrefix) {
    this.database = database;
    this.pool = pool;
    this.memcached = memcached;
    this.keyPrefix = keyPrefix;
  }

  static LookasideBackend open(BindingProperties properties, RecordTable table) {
    String[] servers =
        properties.requiredOrEnvironment(SERVERS, "DENDRITE_MEMCACHED").split("\\s*,\\s*");
    String keyPrefix =
        properties.string(KEY_PREFIX, "ycsb-" + Long.toString(System.currentTimeMillis(), 36) + ":")
            + table.name()
            + ":";
    if (keyPrefix.chars().anyMatch(c -> c <= ' ')) {
      throw new IllegalArgumentException(
          KEY_PREFIX + " must not contain spaces or control characters: " + keyPrefix);
    }
    int connections = properties.integer(CONNECTIONS, 64, 1);
    String poolName = "dendrite-lookaside-" + POOLS.incrementAndGet();
    DatabaseBackend database =
        new DatabaseBackend(RecordStore.open(RecordStore.Kind.MYSQL, properties, table));
    SockIOPool pool = SockIOPool.getInstance(poolName);
    pool.setServers(servers);
    pool.setInitConn(1);
    pool.setMaxConn(connections);
    pool.setNagle(false);
    pool.setSocketConnectTO(2_000);
    pool.setSocketTO(5_000);
    pool.initialize();
    return new LookasideBackend(database, pool, new MemCachedClient(poolName), keyPrefix);
  }

  @Override
  public Optional<YcsbRecord> read(String key, long number, TripCount trips) {
    String cacheKey = keyPrefix + key;
    trips.cache(1);
    if (memcached.get(cacheKey) instanceof byte[] cached) {
      return Optional.of(codec.decode(cached));
    }
    Optional<YcsbRecord> found = database.read(key, number, trips);
    if (found.isPresent()) {
      trips.cache(1);
      memcached.set(cacheKey, codec.encode(found.get()));
    }
    return found;
  }

  @Override
  public List<YcsbRecord> scan(long first, long last, TripCount trips) {
    return database.scan(first, last, trips);
  }

  @Override
  public void update(String key, long number, Map<String, String> values, TripCount trips) {
    database.update(key, number, values, trips);
    deleteCached(key, trips);
  }

  /** Deletes the key too: the insert may replace a record that is cached. */
  @Override
  public void insert(YcsbRecord record, TripCount trips) {
    database.insert(record, trips);
    deleteCached(record.key(), trips);
  }

  @Override
  public void delete(String key, long number, TripCount trips) {
    database.delete(key, number, trips);
    deleteCached(key, trips);
  }

  private void deleteCached(String key, TripCount trips) {
    trips.cache(1);
    memcached.delete(keyPrefix + key);
  }

  /** Writes change the database before the cache. */
  @Override
  public Optional<RecordStore> settledDatabase(Duration timeout) {
    return database.settledDatabase(timeout);
  }

  @Override
  public void close() {
    try {
      pool.shutDown();
    } finally {
      database.close();
    }
  }
}
