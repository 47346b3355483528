package io.dendrite.writeback;

import io.dendrite.iq.client.IqClient;
import io.dendrite.writeback.document.DocumentWriteBack;
import io.dendrite.writeback.kernel.Arguments;
import io.dendrite.writeback.kernel.EngineSettings;
import io.dendrite.writeback.session.SessionWriteBack;
import java.time.Duration;
import java.util.Objects;

/**
 * The settings {@link DocumentWriteBack.Builder} and {@link SessionWriteBack.Builder} share, set and checked in one place:
 * each setter refuses a bad value at once, naming the setting and the value; {@link #requireCache} and the engines'
 * own {@code build()} refuse what is missing with an {@link IllegalStateException}.
 *
 * @param <B> the engine's builder, returned by every setter
 */
public abstract class EngineBuilder<B extends EngineBuilder<B>> {
  private IqClient cache;
  private int replicas; // 0: none asked for, Arguments.DEFAULT_REPLICAS
  private int drainThreads = 1;
  private long pinnedBudgetBytes = Long.MAX_VALUE;
  private Duration storeRetryDeadline = Duration.ofSeconds(2);
  private Duration idlePause = Duration.ofMillis(50);
  private Duration lockTimeout = Duration.ofSeconds(10);
  private Duration replicaCheckInterval = Duration.ofSeconds(1);
  private Duration replaceDownServerAfter = Duration.ofSeconds(30);
  private Duration drainOnClose = Duration.ofSeconds(5);

  /**
   * For the engines' builders, which live in their engines' packages and are its only subclasses: protected, not
   * package-private, because those packages differ from this one.
   */
  protected EngineBuilder() {}

  /** This builder, as the engine's builder type, for the setters to return. */
  protected abstract B self();

  /** The shared settings as set so far, for the engine's constructor. */
  protected EngineSettings settings() {
    return new EngineSettings(
        cache,
        Arguments.replicas(replicas, cache.config().servers().size()),
        drainThreads,
        pinnedBudgetBytes,
        storeRetryDeadline,
        idlePause,
        lockTimeout,
        replicaCheckInterval,
        replaceDownServerAfter,
        drainOnClose);
  }

  /** The cache tier that holds what the engine buffers (required). */
  public B cache(IqClient cache) {
    this.cache = Objects.requireNonNull(cache, "cache");
    return self();
  }

  /**
   * R: distinct cache servers each buffered value is pinned on; at most the number of servers. Default 2, so that
   * losing or restarting one server loses no buffered write; a one-server cache refuses write-back unless R = 1 is
   * asked for here.
   */
  public B replicas(int replicas) {
    this.replicas = Arguments.atLeast("replicas", 1, replicas);
    return self();
  }

  /** Background drain threads (default 1); 0 drains only through {@code drainNow()} and reads. */
  public B drainThreads(int drainThreads) {
    this.drainThreads = Arguments.atLeast("drainThreads", 0, drainThreads);
    return self();
  }

  /**
   * Pinned bytes, every replica counted, beyond which writes fall back to write-through (default no limit). Keep it
   * below the cache servers' pinned quota: draining a non-idempotent buffered write first pins its idempotent form,
   * which can be larger (a {@code $push} becomes the whole array), and waits while that is refused. The servers' own
   * {@code PINNED_MEMORY_FULL} refusals also trigger the fallback.
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
   * How long one data-store operation is retried while the store is unavailable (default 2 s); keep it well below
   * the cache servers' lease lifetime, because the locks of what is being applied are held meanwhile.
   */
  public B storeRetryDeadline(Duration storeRetryDeadline) {
    this.storeRetryDeadline = Arguments.notNegative("storeRetryDeadline", storeRetryDeadline);
    return self();
  }

  /** How long a drain thread rests after a round that found little or nothing to do (default 50 ms). */
  public B idlePause(Duration idlePause) {
    this.idlePause = Arguments.notNegative("idlePause", idlePause);
    return self();
  }

  /**
   * How long a writer, drain or read miss waits for a lock (default 10 s): while another holds it (a drain holds its
   * batch across one data-store round), or while a server holding one of its replicas does not answer (a stalled
   * server is waited for, never taken for lost). Past it the operation fails, and a write is not acknowledged.
   */
  public B lockTimeout(Duration lockTimeout) {
    this.lockTimeout = Arguments.notNegative("lockTimeout", lockTimeout);
    return self();
  }

  /**
   * How often a background thread asks the cache servers whether one of them restarted (default 1 s; one {@code
   * stats} per server). Once one is back, what the engine keeps pinned is written again to the replicas it lost
   * there, so that R copies exist again and the next loss is survived too: a rolling restart of the cache tier loses
   * nothing if each server is back and restored before the next goes down. {@link Duration#ZERO} turns it off; with
   * {@code replicas(1)} there is nothing to restore.
   */
  public B replicaCheckInterval(Duration interval) {
    this.replicaCheckInterval = Arguments.notNegative("replicaCheckInterval", interval);
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
    this.replaceDownServerAfter = Arguments.notNegative("replaceDownServerAfter", downFor);
    return self();
  }

  /**
   * How long the engine's {@code close()} keeps draining what is still buffered (default 5 s) before it hands the
   * rest over: leaves it pinned and listed in the cache, where any engine over the same servers drains it. {@link
   * Duration#ZERO} hands everything over at once. Either way {@code close()} logs how many writes it drained and how
   * many it left buffered.
   */
  public B drainOnClose(Duration drainOnClose) {
    this.drainOnClose = Arguments.notNegative("drainOnClose", drainOnClose);
    return self();
  }

  /** The cache is set, and R fits its servers ({@link Arguments#replicas}). */
  protected void requireCache() {
    if (cache == null) {
      throw new IllegalStateException("cache is required");
    }
    Arguments.replicas(replicas, cache.config().servers().size());
  }
}
