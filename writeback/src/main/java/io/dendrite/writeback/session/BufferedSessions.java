package io.dendrite.writeback.session;

import io.dendrite.iq.client.IqException;
import io.dendrite.iq.client.Outcome;
import io.dendrite.writeback.change.EntityChanges;
import io.dendrite.writeback.change.EntityKey;
import io.dendrite.writeback.engine.UndecodableValueException;
import io.dendrite.writeback.kernel.BufferedWriteLocks;
import io.dendrite.writeback.kernel.EngineCounters;
import io.dendrite.writeback.kernel.LeaseLostException;
import io.dendrite.writeback.kernel.PinnedBudget;
import io.dendrite.writeback.kernel.PinnedLines;
import io.dendrite.writeback.kernel.PinnedReplicas;
import io.dendrite.writeback.kernel.ReplicaRepair;
import io.dendrite.writeback.kernel.RetryingStore;
import io.dendrite.writeback.kernel.UndecodableValues;
import io.dendrite.writeback.store.SessionStore;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Design 2's buffered sessions: each committed session is one pinned, replicated session object holding its rows'
 * changes, queued in commit order in its {@link SessionQueue} and mapped from every row it touched ({@link
 * SessionMappings}). Everything that changes a queue, committing to it, applying a prefix of it (a drain, a read,
 * the write-through fallback), locks it with {@link BufferedWriteLocks#replicaLeases}: the Q lease of the queue on
 * each of its replica servers, and the change is one commit the servers fence. So a queue's sessions reach the data
 * store one at a time, in commit order, across threads and processes, and a holder whose lease ran out (a long
 * pause, a request that arrived late) changes nothing: its commit is refused and it starts over.
 *
 * <p>A commit queues, maps and pins its session in one such commit, with the queue, the session object and the
 * mappings of its rows locked together, and is acknowledged only once every replica took it.
 *
 * <p>Each session is applied through {@link SessionStore#applyOnce}, which records its id in {@code
 * dendrite_applied_sessions} in the same transaction as its changes (Algorithm 4 of the thesis). An applier deletes
 * the session objects it applied before it commits the shorter queue, so that the work is kept even when that commit
 * is refused: the next applier finds queued ids without a session object, which are sessions applied and deleted (or
 * a commit that died before pinning its object, never acknowledged), and drops their lines. An applier that dies
 * after the database commit and before it deleted the object leaves it queued; the next applier's {@code applyOnce}
 * finds the id and applies nothing, then deletes it.
 */
final class BufferedSessions {
  /** Sessions one drain pass applies under one hold of the queue's lock, keeping holds short for committers. */
  static final int DRAIN_BATCH = 32;

  private static final int COMPACTION_PAGE = 500;

  /** Values a replica restore locks and writes again together, besides their queue. */
  private static final int RESTORE_CHUNK = 64;

  private final BufferedWriteLocks locks;
  private final PinnedReplicas replicas;
  private final Map<String, SessionQueue> queues = new LinkedHashMap<>();
  private final SessionMappings mappings;
  private final SessionStore sessionStore;
  private final RetryingStore store;
  private final PinnedBudget budget;
  private final EngineCounters counters;
  private final UndecodableValues undecodable;
  private final Clock clock;

  BufferedSessions(
      BufferedWriteLocks locks,
      PinnedReplicas replicas,
      List<String> queueNames,
      SessionStore sessionStore,
      RetryingStore store,
      PinnedBudget budget,
      EngineCounters counters,
      Clock clock) {
    this.locks = locks;
    this.replicas = replicas;
    queueNames.forEach(name -> queues.put(name, new SessionQueue(replicas, name)));
    this.mappings = new SessionMappings(replicas);
    this.sessionStore = sessionStore;
    this.store = store;
    this.budget = budget;
    this.counters = counters;
    this.undecodable = new UndecodableValues(replicas, counters.undecodable);
    this.clock = clock;
  }

  List<SessionQueue> queues() {
    return List.copyOf(queues.values());
  }

  /**
   * Buffers one session behind the queue's earlier ones and returns its id; or, when pinned memory refuses it,
   * applies the queue's earlier sessions and then this one to the data store.
   *
   * @param rows the session's rows, each key once, checked appliable
   * @param value their {@link SessionCodec encoding}
   * @throws IllegalArgumentException when a row has a pending session in another queue
   * @throws LeaseLostException when the lock was lost before anything changed (retry)
   */
  String commit(String queueName, List<EntityChanges> rows, byte[] value) {
    SessionQueue queue = queues.get(queueName);
    // A fresh id per attempt: an attempt whose outcome is unknown may have left traces under its
    // id.
    String sessionId = SessionIds.next(queueName);
    long growth = (long) value.length * replicas.count();
    if (budget.tryReserve(growth)) {
      Outcome published;
      try {
        published = publish(queue, sessionId, rows, value);
      } catch (RuntimeException failed) {
        budget.adjust(-growth);
        throw failed;
      }
      if (published.isOk()) {
        return sessionId;
      }
      budget.adjust(-growth); // refused by the servers' pinned memory: nothing was changed
    }
    applyThrough(queue, sessionId, rows);
    counters.fallbacks.increment();
    return sessionId;
  }

  /**
   * Queues, maps and pins the session in one commit under the locks of the queue, the session object and the
   * rows' mappings.
   *
   * @return {@link Outcome#OK}, or {@link Outcome#PINNED_MEMORY_FULL} when a server refused to pin it (nothing
   *     changed)
   */
  private Outcome publish(
      SessionQueue queue, String sessionId, List<EntityChanges> rows, byte[] value) {
    String objectKey = SessionIds.objectKey(sessionId);
    List<String> keys = new ArrayList<>(List.of(queue.key(), objectKey));
    rows.forEach(row -> keys.add(SessionMappings.key(row.key())));
    try (BufferedWriteLocks.Locked locked = locks.lock(keys)) {
      Map<String, byte[]> values = locked.values();
      rejectRowsQueuedElsewhere(queue.name(), rows, values);
      List<SessionQueue.Entry> entries = SessionQueue.entries(values.get(queue.key()));
      entries.add(new SessionQueue.Entry(sessionId, clock.instant()));
      locked.stage(queue.key(), SessionQueue.value(entries));
      for (EntityChanges row : rows) {
        String mapping = SessionMappings.key(row.key());
        locked.stage(mapping, SessionMappings.adding(values.get(mapping), sessionId));
      }
      locked.stage(objectKey, value);
      return locked.commit();
    }
  }

  /**
   * The write-through fallback: applies the sessions queued when it started, batch by batch, then this one, so
   * that it reaches the data store after every session acknowledged before it. Sessions queued meanwhile are
   * concurrent with it and may go either way.
   */
  private void applyThrough(SessionQueue queue, String sessionId, List<EntityChanges> rows) {
    List<String> keys = new ArrayList<>(List.of(queue.key()));
    rows.forEach(row -> keys.add(SessionMappings.key(row.key())));
    Set<String> earlier = null;
    while (true) {
      Batch batch;
      try (BufferedWriteLocks.Locked locked = locks.lock(keys)) {
        List<SessionQueue.Entry> entries = SessionQueue.entries(locked.values().get(queue.key()));
        if (earlier == null) {
          rejectRowsQueuedElsewhere(queue.name(), rows, locked.values());
          earlier = new HashSet<>(sessionIds(entries));
        }
        int before = 0;
        while (before < entries.size() && earlier.contains(entries.get(before).sessionId())) {
          before++;
        }
        if (before == 0) {
          store.retry(() -> sessionStore.applyOnce(sessionId, rows));
          return;
        }
        batch = takeBatch(locked, queue, entries, Math.min(before, DRAIN_BATCH), true);
        commitRemoval(locked, queue.key());
      } catch (LeaseLostException lost) {
        continue; // the batch is applied and its objects deleted: the next hold drops its lines
      }
      forgetMappings(batch, null);
    }
  }

  /**
   * The commit-order rule (sessions touching the same rows share a queue), checked where it is cheap: a row whose
   * locked mapping lists a session of another queue whose object is still pinned.
   */
  private void rejectRowsQueuedElsewhere(
      String queueName, List<EntityChanges> rows, Map<String, byte[]> values) {
    for (EntityChanges row : rows) {
      for (String other : PinnedLines.lines(values.get(SessionMappings.key(row.key())))) {
        if (!SessionIds.queueOf(other).equals(queueName)
            && replicas.get(SessionIds.objectKey(other)).isPresent()) {
          throw new IllegalArgumentException(
              "row "
                  + row.key()
                  + " has a pending session in queue "
                  + SessionIds.queueOf(other)
                  + "; sessions that touch the same rows must share a queue");
        }
      }
    }
  }

  /**
   * One drain pass over {@code queue}: applies up to {@link #DRAIN_BATCH} sessions; returns how many it found.
   *
   * @throws LeaseLostException when the lock ran out before the shorter queue was committed (what was applied is
   *     kept)
   */
  int drain(SessionQueue queue) {
    Batch batch;
    try (BufferedWriteLocks.Locked locked = locks.lock(List.of(queue.key()))) {
      List<SessionQueue.Entry> entries = SessionQueue.entries(locked.values().get(queue.key()));
      if (entries.isEmpty()) {
        return 0;
      }
      batch = takeBatch(locked, queue, entries, DRAIN_BATCH, true);
      commitRemoval(locked, queue.key());
    }
    forgetMappings(batch, null);
    return batch.sessionIds().size();
  }

  /**
   * Applies every pending session mapped to {@code row}, and, per queue, every session queued before them: the
   * read side of Algorithm 3, where a miss applies buffered changes before it queries the data store.
   *
   * @throws UndecodableValueException when one of those sessions cannot be decoded: it may change the row, so the
   *     read cannot go on without it (a drain moves it aside)
   */
  void applyMapped(EntityKey row) {
    Set<String> queueNames = new LinkedHashSet<>();
    mappings.sessions(row).forEach(sessionId -> queueNames.add(SessionIds.queueOf(sessionId)));
    for (String queueName : queueNames) {
      SessionQueue queue = queues.get(queueName);
      if (queue
          != null) { // else a line this engine cannot have written (another configuration's queue)
        LeaseLostException.untilKept(() -> applyMappedIn(queue, row));
      }
    }
  }

  /** Applies the prefix of {@code queue} through the last session mapped to {@code row}, batch by batch. */
  private void applyMappedIn(SessionQueue queue, EntityKey row) {
    String mapping = SessionMappings.key(row);
    while (true) {
      Batch batch;
      try (BufferedWriteLocks.Locked locked = locks.lock(List.of(queue.key(), mapping))) {
        List<SessionQueue.Entry> entries = SessionQueue.entries(locked.values().get(queue.key()));
        List<String> mapped =
            PinnedLines.lines(locked.values().get(mapping)).stream()
                .filter(sessionId -> SessionIds.queueOf(sessionId).equals(queue.name()))
                .toList();
        int through = 0;
        for (int i = 0; i < entries.size(); i++) {
          if (mapped.contains(entries.get(i).sessionId())) {
            through = i + 1;
          }
        }
        if (through == 0) {
          if (!mapped.isEmpty()) {
            // Under the queue's lock, a mapped session that is not queued is applied or was never
            // acknowledged.
            locked.stage(mapping, SessionMappings.removing(locked.values().get(mapping), mapped));
            commitRemoval(locked, mapping);
          }
          return;
        }
        batch = takeBatch(locked, queue, entries, Math.min(through, DRAIN_BATCH), false);
        locked.stage(
            mapping, SessionMappings.removing(locked.values().get(mapping), batch.sessionIds()));
        commitRemoval(locked, queue.key());
      }
      forgetMappings(batch, row);
    }
  }

  /** The sessions an applier took off a queue, and the rows they changed. */
  private record Batch(List<String> sessionIds, Set<EntityKey> rows) {}

  /**
   * Applies the first {@code count} of {@code entries} (the locked queue's) in order, each exactly once, deletes
   * their session objects and stages the queue without them; the caller commits.
   *
   * <p>A session object that cannot be decoded is copied aside with {@code moveAside}, then deleted with the
   * applied ones (its rows' mappings are unknown: a read drops a mapped id that is no longer queued). Without {@code
   * moveAside} it stops the batch there. So does a copy that fails: the queue's order forbids passing it by.
   *
   * @throws UndecodableValueException without {@code moveAside}, at a session object that cannot be decoded (the
   *     sessions before it are applied and stay queued: applying them again applies nothing)
   */
  private Batch takeBatch(
      BufferedWriteLocks.Locked locked,
      SessionQueue queue,
      List<SessionQueue.Entry> entries,
      int count,
      boolean moveAside) {
    List<SessionQueue.Entry> taken = entries.subList(0, Math.min(count, entries.size()));
    List<String> sessionIds = sessionIds(taken);
    Set<EntityKey> rows = new LinkedHashSet<>();
    long pinnedBytes = 0;
    int applied = 0;
    List<UndecodableValues.Copy> movedAside = new ArrayList<>();
    for (String sessionId : sessionIds) {
      String objectKey = SessionIds.objectKey(sessionId);
      Optional<byte[]> value = replicas.get(objectKey);
      if (value.isEmpty()) {
        continue; // applied and deleted by an applier whose queue commit was refused, or never
        // acknowledged
      }
      List<EntityChanges> changes;
      try {
        changes = UndecodableValues.decode(objectKey, value.get(), SessionCodec::decode);
      } catch (UndecodableValueException cannotApply) {
        if (!moveAside) {
          throw cannotApply;
        }
        movedAside.add(undecodable.copyAside(cannotApply, value.get()));
        pinnedBytes += value.get().length;
        continue;
      }
      store.retry(() -> sessionStore.applyOnce(sessionId, changes));
      changes.forEach(row -> rows.add(row.key()));
      pinnedBytes += value.get().length;
      applied++;
    }
    // Applied or copied aside, so the objects may go whatever becomes of this hold: a later applier
    // skips a queued id without one.
    replicas.deleteAll(sessionIds.stream().map(SessionIds::objectKey).toList());
    budget.adjust(-pinnedBytes * replicas.count());
    counters.drained.add(applied);
    movedAside.forEach(undecodable::originalRemoved);
    locked.stage(queue.key(), SessionQueue.value(entries.subList(taken.size(), entries.size())));
    return new Batch(sessionIds, rows);
  }

  /**
   * Removes the batch's sessions from the mappings of the rows they changed (but {@code done}, already cleared),
   * under those mappings' locks. They are off their queue for good, so no queue lock is needed.
   */
  private void forgetMappings(Batch batch, EntityKey done) {
    List<String> keys =
        batch.rows().stream().filter(row -> !row.equals(done)).map(SessionMappings::key).toList();
    if (keys.isEmpty()) {
      return;
    }
    LeaseLostException.untilKept(
        () -> {
          try (BufferedWriteLocks.Locked locked = locks.lock(keys)) {
            keys.forEach(
                key ->
                    locked.stage(
                        key,
                        SessionMappings.removing(locked.values().get(key), batch.sessionIds())));
            commitRemoval(locked, "the mappings of " + batch.rows());
          }
        });
  }

  /** Commits a change that only removes; the objects deleted before it left room, so a refusal is a failure. */
  private static void commitRemoval(BufferedWriteLocks.Locked locked, String what) {
    Outcome outcome = locked.commit();
    if (!outcome.isOk()) {
      throw new IqException("could not rewrite " + what + ": " + outcome);
    }
  }

  private static List<String> sessionIds(List<SessionQueue.Entry> entries) {
    return entries.stream().map(SessionQueue.Entry::sessionId).toList();
  }

  /**
   * Writes every queue, its session objects and their rows' mappings again to each replica on a live server that
   * lacks them, under their locks and the queue's: gives back the copies a restarted server lost, so that they
   * survive the next loss (see {@link ReplicaRepair}).
   *
   * @return how many values were written again (0 once every live replica holds its copy)
   */
  int restoreReplicas() {
    int restored = 0;
    for (SessionQueue queue : queues.values()) {
      restored += LeaseLostException.untilKept(() -> restore(queue));
    }
    return restored;
  }

  private int restore(SessionQueue queue) {
    List<SessionQueue.Entry> entries = queue.entries();
    if (entries.isEmpty()) {
      return 0;
    }
    Set<String> keys = new LinkedHashSet<>();
    keys.add(queue.key());
    for (String sessionId : sessionIds(entries)) {
      Optional<byte[]> value = replicas.get(SessionIds.objectKey(sessionId));
      if (value.isPresent()) {
        keys.add(SessionIds.objectKey(sessionId));
        mappedRows(value.get()).forEach(row -> keys.add(SessionMappings.key(row)));
      }
    }
    List<String> lacking = replicas.lackingACopy(keys);
    // The queue is locked with every chunk: the appliers, which delete session objects while they
    // hold it, and the committers, which lock it with their mappings, cannot change these values
    // meanwhile.
    for (int from = 0; from < lacking.size(); from += RESTORE_CHUNK) {
      List<String> chunk = new ArrayList<>(List.of(queue.key()));
      chunk.addAll(lacking.subList(from, Math.min(from + RESTORE_CHUNK, lacking.size())));
      try (BufferedWriteLocks.Locked locked = locks.lock(chunk)) {
        Outcome outcome =
            locked.commit(); // writes every locked value again, as it is now, to all its replicas
        if (!outcome.isOk()) {
          throw new IqException("could not restore " + chunk + ": " + outcome);
        }
      }
    }
    return lacking.size();
  }

  /**
   * The rows a session object maps, or none when it cannot be decoded: its object is still restored, for a drain to
   * move aside.
   */
  private static List<EntityKey> mappedRows(byte[] value) {
    try {
      return SessionCodec.decode(value).stream().map(EntityChanges::key).toList();
    } catch (IllegalArgumentException undecodable) {
      return List.of();
    }
  }

  /**
   * Forgets the applied-session records of this engine's queues that are older than {@code grace} and whose
   * session object is gone from the cache; returns how many.
   */
  int compactAppliedSessions(Duration grace) {
    Instant cutoff = clock.instant().minus(grace);
    int forgotten = 0;
    String after = "";
    while (true) {
      String from = after;
      List<String> page =
          store.retry(() -> sessionStore.appliedSessionIds(cutoff, from, COMPACTION_PAGE));
      if (page.isEmpty()) {
        return forgotten;
      }
      List<String> gone =
          page.stream()
              .filter(id -> queues.containsKey(SessionIds.queueOf(id)))
              .filter(id -> replicas.get(SessionIds.objectKey(id)).isEmpty())
              .toList();
      forgotten += store.retry(() -> sessionStore.forgetAppliedSessions(gone));
      after = page.get(page.size() - 1);
    }
  }
}
