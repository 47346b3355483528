package io.dendrite.writeback.session;

import io.dendrite.iq.client.TierClaim;
import io.dendrite.writeback.change.ChangeSequence;
import io.dendrite.writeback.change.EntityChanges;
import io.dendrite.writeback.change.EntityKey;
import io.dendrite.writeback.engine.EngineSettings;
import io.dendrite.writeback.engine.WriteBackEngineBuilder;
import io.dendrite.writeback.engine.WriteBackMetrics;
import io.dendrite.writeback.kernel.BufferedWriteLocks;
import io.dendrite.writeback.kernel.DrainThreads;
import io.dendrite.writeback.kernel.EngineCounters;
import io.dendrite.writeback.kernel.LeaseLostException;
import io.dendrite.writeback.kernel.PinnedBudget;
import io.dendrite.writeback.kernel.PinnedReplicas;
import io.dendrite.writeback.kernel.ReplicaRepair;
import io.dendrite.writeback.kernel.RetryingStore;
import io.dendrite.writeback.store.Entity;
import io.dendrite.writeback.store.SessionStore;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeSet;
import java.util.function.IntSupplier;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The session-level write-back policy for SQL (Design 2 of the write-back thesis): a multi-statement transaction
 * is committed as one buffered session, pinned and replicated on R cache servers, queued in commit order, and
 * acknowledged; background threads apply each queue's sessions to MySQL in that order, each exactly once.
 *
 * <pre>{@code
 * try (SessionWriteBack sessions = SessionWriteBack.builder().cache(iqClient).store(mySqlStore)
 *     .replicas(3).queues("warehouse-1", "warehouse-2").drainThreads(2).build()) {
 *   sessions.commit("warehouse-1", List.of(
 *       new EntityChanges(new EntityKey("orders", 7), ChangeSequence.of(Change.insert(Map.of("warehouse", 1)))),
 *       new EntityChanges(new EntityKey("stock", 42), ChangeSequence.of(Change.inc("quantity", -1)))));
 *   Optional<Entity> stock = sessions.read(new EntityKey("stock", 42)); // sees the decrement
 * }
 * }</pre>
 *
 * <h2>Which sessions share a queue</h2>
 *
 * A queue's sessions are applied one at a time in commit order; different queues are applied independently and in
 * parallel. So sessions must share a queue when the order between them matters: when they touch the same rows
 * (their changes do not commute in general), or rows tied by a constraint (a child row's insert must follow its
 * parent's, a parent's delete must follow its children's). TPC-C keeps one queue per warehouse. A commit whose row
 * still has a pending session in another queue is refused; the constraint case cannot be checked.
 *
 * <h2>Exactly once, and forgetting applied sessions</h2>
 *
 * Each session is applied through {@link SessionStore#applyOnce} (the MySQL store is one), which records its id in
 * {@code dendrite_applied_sessions} in the same database transaction as its changes; an applier that dies after the
 * database commit and before it deleted the session object leaves it behind, and the next applier finds the id and
 * applies nothing. That table is compacted per the thesis: an id is forgotten only when its session object no longer
 * exists in the cache (and it was applied at least {@link Builder#appliedSessionsGrace} ago). Forgetting by age
 * alone (the MySQL store's {@code forgetAppliedSessionsBefore}) would be unsafe: a session applied but not yet
 * deleted stays buffered for as long as the next applier takes to reach it (a queue blocked by a database outage,
 * every drain thread down), and once its id is forgotten that applier would apply it a second time. The grace covers
 * the converse: an applier that lost its lease may still hold a copy of a session that another one already deleted.
 *
 * <p>Thread-safe. Every process that writes these rows must go through a {@code SessionWriteBack} over the same
 * cache servers with the same replica count and queue names, and the applied-sessions table must not be shared
 * with engines over other cache servers. {@link #close()} stops the drain threads, drains what it can in {@link
 * Builder#drainOnClose} and leaves the rest queued in the cache; the cache client and the store stay the caller's to
 * close.
 */
public final class SessionWriteBack implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(SessionWriteBack.class);

  private final BufferedSessions sessions;
  private final SessionStore store;
  private final RetryingStore retryingStore;
  private final List<String> queueNames;
  private final PinnedBudget budget;
  private final EngineCounters counters;
  private final PinnedReplicas replicas;
  private final int maxSessionBytes;
  private final Duration appliedSessionsGrace;
  private final long compactAfterSessions;
  private final Duration compactEvery;
  private final DrainThreads drainThreads;
  private final ReplicaRepair replicaRepair;
  private final Object compactionLock = new Object();

  /**
   * The cache tier's record of the layout every session engine of the tier shares ({@value #LAYOUT_KEY}: replica
   * count and queue names), held shared: an engine with another layout is refused when it starts, since it would
   * look for sessions' copies and queues where the others do not put them.
   */
  private final TierClaim layout;

  /** The layout record's key (a session-reserved prefix, so only pin users can write it). */
  static final String LAYOUT_KEY = "SessionWriteBack:layout";

  private final Duration drainOnClose;
  private long drainedAtCompaction;
  private long nanosAtCompaction = System.nanoTime();

  /** How long the layout record outlives the last engine that renewed it. */
  private static final Duration LAYOUT_LIFETIME = Duration.ofSeconds(10);

  private SessionWriteBack(Builder builder, EngineSettings settings, TierClaim layout) {
    this.layout = layout;
    Clock clock = Clock.systemUTC();
    PinnedReplicas replicas = new PinnedReplicas(settings.cache(), settings.replicas());
    this.replicas = replicas;
    this.store = builder.store;
    this.queueNames = List.copyOf(builder.queueNames);
    this.counters = new EngineCounters(clock);
    this.drainOnClose = settings.drainOnClose();
    this.retryingStore =
        new RetryingStore(builder.store, settings.storeRetryDeadline(), counters.retries);
    this.budget = new PinnedBudget(settings.pinnedBudgetBytes());
    this.maxSessionBytes = builder.maxSessionBytes;
    this.appliedSessionsGrace = builder.appliedSessionsGrace;
    this.compactAfterSessions = builder.compactAfterSessions;
    this.compactEvery = builder.compactEvery;
    this.sessions =
        new BufferedSessions(
            BufferedWriteLocks.replicaLeases(replicas, settings.lockTimeout()),
            replicas,
            queueNames,
            store,
            retryingStore,
            budget,
            counters,
            clock);
    List<IntSupplier> passes = new ArrayList<>();
    for (SessionQueue queue : sessions.queues()) {
      passes.add(() -> drainPass(queue));
    }
    passes.add(
        () -> {
          compactWhenDue();
          return 0;
        });
    this.drainThreads =
        new DrainThreads(
            "session-writeback-drain", settings.drainThreads(), passes, settings.idlePause(), 1);
    this.replicaRepair =
        new ReplicaRepair(
            settings.cache(),
            settings.replicas() > 1 ? settings.replicaCheckInterval() : Duration.ZERO,
            settings.replaceDownServerAfter(),
            "session-writeback-replica-repair");
    replicaRepair.register(sessions::restoreReplicas);
  }

  /** Starts configuring an engine; {@link Builder#cache} and {@link Builder#store} are required. */
  public static Builder builder() {
    return new Builder();
  }

  /** The queue names {@link #commit} accepts, in the order they were configured. */
  public List<String> queues() {
    return queueNames;
  }

  /**
   * Buffers one session, the changes of one multi-statement transaction, behind the earlier sessions of {@code
   * queue}, and returns its id. Returns once every replica holds it; or, on the write-through fallback (pinned
   * budget or the servers' pinned quota exhausted), once the queue's earlier sessions and then this one were applied
   * to the database. Changes to one row listed several times are merged in order.
   *
   * @param queue one of {@link #queues()}; see the class comment for which sessions must share one
   * @param changes the session's rows and their changes, in the order the transaction made them
   * @return the session's id, which {@code dendrite_applied_sessions} records once it is applied
   * @throws IllegalArgumentException when the queue is unknown, the session is empty or too large ({@link
   *     Builder#maxSessionBytes}), a change cannot apply to a row or a table (missing, without a single-column
   *     key), or a row has a pending session in another queue; nothing is buffered then
   * @throws io.dendrite.iq.client.IqException when a cache server cannot be reached; the session is not
   *     acknowledged and may or may not be applied later
   * @throws io.dendrite.core.DataStoreException when the fallback met a database that stayed down past
   *     the retry deadline or refused a session
   */
  public String commit(String queue, List<EntityChanges> changes) {
    if (queue == null || !queueNames.contains(queue)) {
      throw new IllegalArgumentException(
          "queue must be one of "
              + queueNames
              + ", got "
              + (queue == null ? "null" : "\"" + queue + "\""));
    }
    List<EntityChanges> rows = merged(changes);
    store.checkAppliable(rows);
    byte[] value = SessionCodec.encode(rows);
    if (value.length > maxSessionBytes) {
      throw new IllegalArgumentException(
          "session of " + value.length + " bytes exceeds maxSessionBytes " + maxSessionBytes);
    }
    return LeaseLostException.untilKept(() -> sessions.commit(queue, rows, value));
  }

  /** One row per key, changes concatenated in order and compacted (which surfaces type conflicts here). */
  private static List<EntityChanges> merged(List<EntityChanges> changes) {
    if (changes == null || changes.isEmpty()) {
      throw new IllegalArgumentException("a session must change at least one row, got " + changes);
    }
    Map<EntityKey, ChangeSequence> byRow = new LinkedHashMap<>();
    for (EntityChanges row : changes) {
      if (row == null || row.changes().isEmpty()) {
        throw new IllegalArgumentException(
            "every row of a session needs at least one change, got " + row);
      }
      byRow.merge(row.key(), row.changes(), ChangeSequence::then);
    }
    return byRow.entrySet().stream()
        .map(row -> new EntityChanges(row.getKey(), row.getValue().compact()))
        .toList();
  }

  /**
   * Reads the row as a cache miss must: the pending sessions mapped to it, and every session queued before them,
   * are applied first, in queue order, so the result includes every acknowledged session and the database keeps
   * its constraints.
   *
   * @throws io.dendrite.writeback.engine.UndecodableValueException when one of those sessions cannot be decoded, so cannot
   *     be applied first (a drain moves it aside, after which reads succeed)
   */
  public Optional<Entity> read(EntityKey key) {
    if (key == null) {
      throw new IllegalArgumentException("key must not be null");
    }
    sessions.applyMapped(key);
    return retryingStore.read(key);
  }

  /**
   * Applies every queued session now, in the calling thread, alongside the background threads; then compacts the
   * applied-sessions table if it is due.
   *
   * @throws io.dendrite.core.DataStoreException when the database stays down past the retry deadline
   *     or refuses a session; what was not applied stays buffered
   */
  public void drainNow() {
    for (SessionQueue queue : sessions.queues()) {
      while (drainPass(queue) > 0) {
        // Keep going until the queue is empty.
      }
    }
    compactWhenDue();
  }

  private int drainPass(SessionQueue queue) {
    try {
      return sessions.drain(queue);
    } catch (LeaseLostException lost) {
      return 1;
    }
  }

  /**
   * Forgets the applied-session records of this engine's queues whose session objects no longer exist in the cache
   * and that were applied at least {@link Builder#appliedSessionsGrace} ago; runs by itself every {@link
   * Builder#appliedSessionsCompaction} sessions or period. Returns how many records it deleted.
   */
  public int compactAppliedSessions() {
    synchronized (compactionLock) {
      long drainedNow = counters.drained.sum();
      int forgotten = sessions.compactAppliedSessions(appliedSessionsGrace);
      drainedAtCompaction = drainedNow;
      nanosAtCompaction = System.nanoTime();
      return forgotten;
    }
  }

  private void compactWhenDue() {
    boolean due;
    synchronized (compactionLock) {
      long sinceLast = counters.drained.sum() - drainedAtCompaction;
      due =
          sinceLast >= compactAfterSessions
              || (sinceLast > 0 && System.nanoTime() - nanosAtCompaction >= compactEvery.toNanos());
    }
    if (due) {
      compactAppliedSessions();
    }
  }

  /**
   * The engine's state now; reads every queue. {@link WriteBackMetrics#pendingWrites()} counts queued sessions,
   * {@link WriteBackMetrics#drained()} sessions this engine took off a queue (applied now, or found applied).
   */
  public WriteBackMetrics metrics() {
    List<Instant> pendingSince =
        sessions.queues().stream()
            .flatMap(queue -> queue.entries().stream().map(SessionQueue.Entry::since))
            .toList();
    return counters.snapshot(pendingSince, budget.used(), replicas.unpinnedRefused());
  }

  /**
   * Stops the drain threads, waiting for each to finish the pass it is in, then drains what is still queued for up
   * to {@link Builder#drainOnClose} and leaves the rest queued in the cache, where any engine over the same servers
   * and queues applies it. Logs how many sessions it drained and how many it left.
   */
  @Override
  public void close() {
    try {
      closeEngine();
    } finally {
      layout.close();
    }
  }

  private void closeEngine() {
    replicaRepair.close();
    drainThreads.close();
    long drainedBefore = counters.drained.sum();
    long deadline = System.nanoTime() + drainOnClose.toNanos();
    String why = "the close drain time (" + drainOnClose + ") ran out";
    try {
      boolean more = true;
      while (more && System.nanoTime() - deadline < 0) {
        more = false;
        for (SessionQueue queue : sessions.queues()) {
          more |= drainPass(queue) > 0;
        }
      }
    } catch (RuntimeException failed) {
      why = "draining failed: " + failed;
    }
    long drained = counters.drained.sum() - drainedBefore;
    long left;
    try {
      left = sessions.queues().stream().mapToLong(queue -> queue.entries().size()).sum();
    } catch (RuntimeException unknown) {
      LOG.warn(
          "session write-back closed: drained {} sessions; the sessions left could not be counted ({}): they stay"
              + " queued in the cache for another engine",
          drained,
          unknown.toString());
      return;
    }
    if (left == 0) {
      LOG.info("session write-back closed: drained {} sessions, none left queued", drained);
    } else {
      LOG.warn(
          "session write-back closed: drained {} sessions and left {} queued ({}): any SessionWriteBack over the"
              + " same cache servers and queues applies them",
          drained,
          left,
          why);
    }
  }

  /** Writes queues, sessions and mappings again to replicas that lost them, now; see {@link Builder#replicaCheckInterval}. */
  int restoreReplicas() {
    return replicaRepair.restoreNow();
  }

  /** Configures a {@link SessionWriteBack}. */
  public static final class Builder extends WriteBackEngineBuilder<Builder> {
    private SessionStore store;
    private List<String> queueNames = List.of("0");
    private int maxSessionBytes = 1_000_000;
    private long compactAfterSessions = 10_000;
    private Duration compactEvery = Duration.ofMinutes(1);
    private Duration appliedSessionsGrace = Duration.ofMinutes(1);

    private Builder() {}

    @Override
    protected Builder self() {
      return this;
    }

    /** The database sessions are applied to, exactly once each (required). */
    public Builder store(SessionStore store) {
      this.store = Objects.requireNonNull(store, "store");
      return this;
    }

    /** {@code count} queues named {@code "0"} to {@code "count-1"} (default one queue, {@code "0"}). */
    public Builder queues(int count) {
      if (count < 1) {
        throw new IllegalArgumentException("queue count must be positive, got " + count);
      }
      this.queueNames = IntStream.range(0, count).mapToObj(Integer::toString).toList();
      return this;
    }

    /**
     * Queues with these names, e.g. one per warehouse: 1 to 64 letters, digits, {@code _ . -} each.
     *
     * @throws IllegalArgumentException when a name is malformed or repeated, or none is given
     */
    public Builder queues(String... names) {
      if (names == null || names.length == 0) {
        throw new IllegalArgumentException("at least one queue name is required");
      }
      List<String> checked = Arrays.stream(names).map(SessionIds::checkQueueName).toList();
      if (new LinkedHashSet<>(checked).size() != checked.size()) {
        throw new IllegalArgumentException("queue names must be distinct, got " + checked);
      }
      this.queueNames = checked;
      return this;
    }

    /** The largest encoded session accepted (default 1,000,000 bytes, below the servers' 1 MiB item limit). */
    public Builder maxSessionBytes(int maxSessionBytes) {
      this.maxSessionBytes = atLeast("maxSessionBytes", 1, maxSessionBytes);
      return this;
    }

    /**
     * When the drain threads compact {@code dendrite_applied_sessions}: after this engine applied {@code
     * afterSessions} sessions since the last compaction (the thesis' β, default 10,000), or after {@code every}
     * (default 1 min) if it applied any.
     */
    public Builder appliedSessionsCompaction(long afterSessions, Duration every) {
      if (afterSessions < 1) {
        throw new IllegalArgumentException(
            "appliedSessionsCompaction afterSessions must be at least 1, got " + afterSessions);
      }
      this.compactEvery = notNegative("appliedSessionsCompaction every", every);
      this.compactAfterSessions = afterSessions;
      return this;
    }

    /**
     * How long an applied session's id is kept at least, even once its session object is gone (default 1 min).
     * Keep it above the cache servers' lease lifetime plus {@link #storeRetryDeadline}: an applier that lost its
     * lease may hold a copy of a session another applier already deleted, and its {@code applyOnce} must still
     * find the id.
     */
    public Builder appliedSessionsGrace(Duration appliedSessionsGrace) {
      this.appliedSessionsGrace = notNegative("appliedSessionsGrace", appliedSessionsGrace);
      return this;
    }

    /**
     * Starts the engine and its drain threads.
     *
     * @throws IllegalStateException when the cache or the store is missing, or R exceeds the cache's servers
     */
    public SessionWriteBack build() {
      requireCache();
      if (store == null) {
        throw new IllegalStateException("store is required");
      }
      EngineSettings settings = settings();
      String layout =
          "replicas "
              + settings.replicas()
              + ", queues "
              + new TreeSet<>(queueNames)
                  .stream().map(name -> "'" + name + "'").collect(Collectors.joining(", "));
      TierClaim claim =
          TierClaim.shared(
              settings.cache(),
              settings.replicas(),
              LAYOUT_KEY,
              layout,
              LAYOUT_LIFETIME,
              running ->
                  "the session write-back engines of this cache tier run with "
                      + running
                      + "; this one asked for "
                      + layout
                      + ": engines with different replica counts or queues would not find each other's"
                      + " sessions where they are kept. Give every process the same replicas(...) and queues(...)"
                      + " (the record lapses "
                      + LAYOUT_LIFETIME.toSeconds()
                      + " s after the last of them stopped)");
      try {
        return new SessionWriteBack(this, settings, claim);
      } catch (RuntimeException failed) {
        claim.close();
        throw failed;
      }
    }
  }
}
