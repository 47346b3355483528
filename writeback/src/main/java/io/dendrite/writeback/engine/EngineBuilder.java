package io.dendrite.writeback.engine;

import io.dendrite.iq.client.IqClient;
import java.time.Duration;
import java.util.Objects;

/**
 * The settings every engine over buffered writes shares, declared and checked here once: the write-back engines'
 * builders ({@link WriteBackEngineBuilder}) and TARDIS's ({@code Tardis.Builder}) extend it. Each setter refuses a
 * bad value at once, naming the setting and the value; {@link #requireCache} and the engines' own {@code build()}
 * refuse what is missing with an {@link IllegalStateException}.
 *
 * <p>Two defaults differ by engine, each builder setting its own: {@link #drainThreads} (1 for write-back, 4 for
 * TARDIS) and {@link #storeRetryDeadline} (2 s for write-back; none for TARDIS, whose process turns to failed mode
 * instead).
 *
 * @param <B> the engine's builder, returned by every setter
 */
public abstract class EngineBuilder<B extends EngineBuilder<B>> {
  /** R when none is asked for: one server's loss or restart loses no buffered write. */
  private static final int DEFAULT_REPLICAS = 2;

  private IqClient cache;
  private int replicas; // 0: none asked for, DEFAULT_REPLICAS
  private int drainThreads = 1;
  private long pinnedBudgetBytes = Long.MAX_VALUE;
  private Duration storeRetryDeadline = Duration.ofSeconds(2);
  private Duration idlePause = Duration.ofMillis(50);
  private Duration lockTimeout = Duration.ofSeconds(10);
  private Duration replicaCheckInterval = Duration.ofSeconds(1);
  private Duration replaceDownServerAfter = Duration.ofSeconds(30);

  /**
   * What {@link WriteBackEngineBuilder#drainOnClose} sets; zero for an engine whose {@code close()} hands everything
   * over at once (TARDIS's).
   */
  Duration drainOnClose = Duration.ZERO;

  /**
   * For the engines' builders, which live in their engines' packages (and modules): protected, not package-private,
   * because those packages differ from this one.
   */
  protected EngineBuilder() {}

  /** This builder, as the engine's builder type, for the setters to return. */
  protected abstract B self();

  /** The shared settings as set so far, for the engine's constructor, once {@link #requireCache} passed. */
  protected EngineSettings settings() {
    return new EngineSettings(
        cache,
        replicasFor(cache.config().servers().size()),
        drainThreads,
        pinnedBudgetBytes,
        storeRetryDeadline,
        idlePause,
        lockTimeout,
        replicaCheckInterval,
        replaceDownServerAfter,
        drainOnClose);
  }

  /** The cache given to {@link #cache}, or null: for a front end that must check it is its own. */
  protected IqClient givenCache() {
    return cache;
  }

  /** The cache tier that holds what the engine buffers (required). */
  public B cache(IqClient cache) {
    this.cache = Objects.requireNonNull(cache, "cache");
    return self();
  }

  /**
   * R: distinct cache servers each buffered write is pinned on; at most the number of servers. Default 2, so that
   * losing or restarting one server loses no buffered write; a one-server cache is refused unless R = 1 is asked for
   * here.
   */
  public B replicas(int replicas) {
    this.replicas = atLeast("replicas", 1, replicas);
    return self();
  }

  /**
   * Background drain threads: the threads that apply buffered writes to the data store (TARDIS's recovery workers,
   * the thesis' AR workers, are these). Default 1 for the write-back engines, 4 for TARDIS. 0 leaves it to reads and
   * writes (and the write-back engines' {@code drainNow()}): TARDIS then recovers lazily only.
   */
  public B drainThreads(int drainThreads) {
    this.drainThreads = atLeast("drainThreads", 0, drainThreads);
    return self();
  }

  /**
   * Pinned bytes, every replica counted, that the engine may buffer (default no limit). Past it, and when a cache
   * server's own pinned quota refuses ({@code PINNED_MEMORY_FULL}), the write-back engines write through instead;
   * TARDIS, which buffers because the data store failed, refuses the write with {@link BufferRefusedException}. Keep
   * it below the cache servers' pinned quota: draining a non-idempotent buffered write first pins its idempotent
   * form, which can be larger (a {@code $push} becomes the whole array), and waits while that is refused.
   */
  public B pinnedBudgetBytes(long pinnedBudgetBytes) {
    if (pinnedBudgetBytes < 0) {
      throw new IllegalArgumentException(
          "pinnedBudgetBytes must not be negative, got " + pinnedBudgetBytes);
    }
    this.pinnedBudgetBytes = pinnedBudgetBytes;
    return self();
  }

  /**
   * How long one data-store operation is retried while the store is unavailable (default 2 s for the write-back
   * engines; 0 for TARDIS: one attempt, then the process is in failed mode and tries again later). Keep it well below
   * the cache servers' lease lifetime, because the locks of what is being applied are held meanwhile.
   */
  public B storeRetryDeadline(Duration storeRetryDeadline) {
    this.storeRetryDeadline = notNegative("storeRetryDeadline", storeRetryDeadline);
    return self();
  }

  /** How long a drain thread rests after a round that found little or nothing to do (default 50 ms). */
  public B idlePause(Duration idlePause) {
    this.idlePause = notNegative("idlePause", idlePause);
    return self();
  }

  /**
   * How long a writer, drain or read miss waits for a lock (default 10 s): while another holds it (a drain holds its
   * batch across one data-store round), or while a server holding one of its replicas does not answer (a stalled
   * server is waited for, never taken for lost). Past it the operation fails, and a write is not acknowledged. TARDIS
   * on stock memcached also waits this long for a document's lock key before a miss or write.
   */
  public B lockTimeout(Duration lockTimeout) {
    this.lockTimeout = notNegative("lockTimeout", lockTimeout);
    return self();
  }

  /**
   * How often a background thread asks the cache servers whether one of them restarted (default 1 s; one {@code
   * stats} per server). Once one is back, what the engine keeps pinned is written again to the replicas it lost
   * there, so that R copies exist again and the next loss is survived too: a rolling restart of the cache tier loses
   * nothing if each server is back and restored before the next goes down. {@link Duration#ZERO} turns it off; with
   * {@code replicas(1)} there is nothing to restore (but TARDIS's Contextual solution restores its pending markers).
   */
  public B replicaCheckInterval(Duration interval) {
    this.replicaCheckInterval = notNegative("replicaCheckInterval", interval);
    return self();
  }

  /**
   * How long a cache server may stay down (refusing or dropping connections; one that is slow to answer is not down)
   * before it is replaced (default 30 s): the next server on the ring takes its place for every replicated value
   * that had a copy there and gets that copy, so that R copies exist again and a second loss is survived too. Once
   * the server is back as a new run it takes its copies back. Longer than a restart of one server, so that a rolling
   * restart restores copies in place instead of moving them twice. Checked every {@link #replicaCheckInterval}.
   */
  public B replaceDownServerAfter(Duration downFor) {
    this.replaceDownServerAfter = notNegative("replaceDownServerAfter", downFor);
    return self();
  }

  /**
   * The cache is set, and R fits its servers.
   *
   * @throws IllegalStateException when the cache is missing; when R exceeds its servers; when none was asked for
   *     and the cache has one server: a single copy is lost with its server, so it must be asked for, knowing that
   */
  protected void requireCache() {
    if (cache == null) {
      throw new IllegalStateException("cache is required");
    }
    replicasFor(cache.config().servers().size());
  }

  /** {@code value}, if it is at least {@code least}; refused naming {@code setting} and the value otherwise. */
  protected static int atLeast(String setting, int least, int value) {
    if (value < least) {
      throw new IllegalArgumentException(setting + " must be at least " + least + ", got " + value);
    }
    return value;
  }

  /** {@code value}, if it is a duration of zero or more; refused naming {@code setting} and the value otherwise. */
  protected static Duration notNegative(String setting, Duration value) {
    if (value == null || value.isNegative()) {
      throw new IllegalArgumentException(
          setting + " must be a duration of zero or more, got " + value);
    }
    return value;
  }

  /** The R the engine runs with over a cache of {@code servers} servers (see {@link #requireCache}). */
  private int replicasFor(int servers) {
    if (replicas == 0) {
      if (servers < DEFAULT_REPLICAS) {
        throw new IllegalStateException(
            "write-back keeps every buffered write on "
                + DEFAULT_REPLICAS
                + " cache servers by default, so that losing or restarting one loses none of them, but this"
                + " cache has "
                + servers
                + " server: give it another, or ask for replicas(1) explicitly, accepting that a restart or"
                + " loss of that server loses every write buffered on it and not yet drained");
      }
      return DEFAULT_REPLICAS;
    }
    if (replicas > servers) {
      throw new IllegalStateException(
          "replicas (" + replicas + ") must not exceed the cache's " + servers + " servers");
    }
    return replicas;
  }
}
