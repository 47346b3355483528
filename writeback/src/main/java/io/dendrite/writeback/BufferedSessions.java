package io.dendrite.writeback;

import io.dendrite.iq.client.IqClient;
import io.dendrite.iq.client.IqException;
import io.dendrite.iq.client.Outcome;
import io.dendrite.writeback.change.EntityChanges;
import io.dendrite.writeback.change.EntityKey;
import io.dendrite.writeback.store.MySqlStore;
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
 * the write-through fallback), runs under the queue's {@link ExclusiveLease}, so a queue's sessions reach the data
 * store one at a time, in commit order, across threads and processes.
 *
 * <p>Each session is applied through {@link MySqlStore#applyOnce}, which records its id in {@code
 * dendrite_applied_sessions} in the same transaction as its changes (Algorithm 4 of the thesis). An applier that
 * dies after the commit and before it deleted the session object leaves it queued; the next applier's {@code
 * applyOnce} finds the id and applies nothing, then deletes it. A queued id without a session object is a session
 * applied and deleted whose queue line outlived it, or a commit that died before pinning its object (never
 * acknowledged); either way there is nothing to apply and the line is dropped.
 */
final class BufferedSessions {
  /** Sessions one drain pass applies under one hold of the queue's lease, keeping holds short for committers. */
  static final int DRAIN_BATCH = 32;
  private static final int COMPACTION_PAGE = 500;

  private final PinnedReplicas replicas;
  private final Map<String, SessionQueue> queues = new LinkedHashMap<>();
  private final SessionMappings mappings;
  private final MySqlStore mySql;
  private final RetryingStore store;
  private final PinnedBudget budget;
  private final EngineCounters counters;
  private final Clock clock;

  BufferedSessions(IqClient cache, PinnedReplicas replicas, List<String> queueNames, MySqlStore mySql,
      RetryingStore store, PinnedBudget budget, EngineCounters counters, Clock clock) {
    this.replicas = replicas;
    queueNames.forEach(name -> queues.put(name, new SessionQueue(cache, replicas, name)));
    this.mappings = new SessionMappings(cache, replicas);
    this.mySql = mySql;
    this.store = store;
    this.budget = budget;
    this.counters = counters;
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
   */
  String commit(String queueName, List<EntityChanges> rows, byte[] value) {
    SessionQueue queue = queues.get(queueName);
    // A fresh id per attempt: an attempt that lost its lease may have left a queue line, dropped later as one
    // without a session object.
    String sessionId = SessionIds.next(queueName);
    try (ExclusiveLease lease = queue.lease()) {
      rejectRowsQueuedElsewhere(queueName, rows);
      long growth = (long) value.length * replicas.count();
      if (budget.tryReserve(growth)) {
        Outcome published;
        try {
          published = publish(queue, lease, sessionId, rows, value);
        } catch (RuntimeException failed) {
          budget.adjust(-growth);
          throw failed;
        }
        if (published.isOk()) {
          return sessionId;
        }
        budget.adjust(-growth);
        unpublish(queue, lease, sessionId, rows);
      }
      applyPrefix(queue, lease, Integer.MAX_VALUE);
      store.retry(() -> mySql.applyOnce(sessionId, rows));
      counters.fallbacks.increment();
      return sessionId;
    }
  }

  /**
   * Queues, maps, then pins: once the queue line is there, a crash leaves at most a line without a session object
   * (dropped by the next applier) or mapping lines of an unqueued session (dropped by the next read).
   *
   * @return {@link Outcome#OK}, or the first refusal; the caller then undoes what was done
   */
  private Outcome publish(SessionQueue queue, ExclusiveLease lease, String sessionId, List<EntityChanges> rows,
      byte[] value) {
    List<SessionQueue.Entry> entries = new ArrayList<>(queue.entries());
    entries.add(new SessionQueue.Entry(sessionId, clock.instant()));
    Outcome queued = queue.rewrite(lease, entries);
    if (!queued.isOk()) {
      return queued;
    }
    for (EntityChanges row : rows) {
      Outcome mapped = mappings.add(row.key(), sessionId);
      if (!mapped.isOk()) {
        return mapped;
      }
    }
    lease.ensureHeld();
    return replicas.set(SessionIds.objectKey(sessionId), value);
  }

  /** Removes every trace of a session whose publication was refused, under its queue's lease. */
  private void unpublish(SessionQueue queue, ExclusiveLease lease, String sessionId, List<EntityChanges> rows) {
    lease.ensureHeld();
    replicas.delete(SessionIds.objectKey(sessionId));
    rows.forEach(row -> mappings.remove(row.key(), Set.of(sessionId)));
    queue.rewrite(lease, queue.entries().stream().filter(entry -> !entry.sessionId().equals(sessionId)).toList());
  }

  /**
   * The commit-order rule (sessions touching the same rows share a queue), checked where it is cheap: a row that
   * has a session still buffered in another queue. Best effort, as the other queue is not locked.
   */
  private void rejectRowsQueuedElsewhere(String queueName, List<EntityChanges> rows) {
    for (EntityChanges row : rows) {
      for (String other : mappings.sessions(row.key())) {
        if (!SessionIds.queueOf(other).equals(queueName)
            && replicas.get(SessionIds.objectKey(other)).isPresent()) {
          throw new IllegalArgumentException("row " + row.key() + " has a pending session in queue "
              + SessionIds.queueOf(other) + "; sessions that touch the same rows must share a queue");
        }
      }
    }
  }

  /** One drain pass over {@code queue}: applies up to {@link #DRAIN_BATCH} sessions; returns how many it found. */
  int drain(SessionQueue queue) {
    try (ExclusiveLease lease = queue.lease()) {
      return applyBatch(queue, lease, DRAIN_BATCH);
    }
  }

  /**
   * Applies every pending session mapped to {@code row}, and, per queue, every session queued before them: the
   * read side of Algorithm 3, where a miss applies buffered changes before it queries the data store.
   */
  void applyMapped(EntityKey row) {
    Map<String, Set<String>> byQueue = new LinkedHashMap<>();
    for (String sessionId : mappings.sessions(row)) {
      byQueue.computeIfAbsent(SessionIds.queueOf(sessionId), name -> new HashSet<>()).add(sessionId);
    }
    byQueue.forEach((queueName, sessionIds) -> {
      SessionQueue queue = queues.get(queueName);
      if (queue == null) {
        // A line this engine cannot have written (another configuration's queue): not ours to order.
        return;
      }
      ExclusiveLease.untilKept(() -> {
        try (ExclusiveLease lease = queue.lease()) {
          List<SessionQueue.Entry> entries = queue.entries();
          int last = -1;
          for (int i = 0; i < entries.size(); i++) {
            if (sessionIds.contains(entries.get(i).sessionId())) {
              last = i;
            }
          }
          if (last < 0) {
            // Under the queue's lease, a session that is not queued is applied or was never acknowledged.
            mappings.remove(row, sessionIds);
            return;
          }
          applyPrefix(queue, lease, last + 1);
        }
      });
    });
  }

  /**
   * Applies the first {@code count} queued sessions in order, {@link #DRAIN_BATCH} at a time, so that the work of
   * a long prefix is kept batch by batch even if the lease runs out before the end. Returns how many sessions it
   * took off the queue.
   */
  private int applyPrefix(SessionQueue queue, ExclusiveLease lease, int count) {
    int taken = 0;
    while (taken < count) {
      int batch = applyBatch(queue, lease, Math.min(count - taken, DRAIN_BATCH));
      if (batch == 0) {
        break;
      }
      taken += batch;
    }
    return taken;
  }

  /**
   * Applies the first {@code count} queued sessions in order, each exactly once, then deletes their session
   * objects, mapping lines and queue lines, in that order. Returns how many sessions it took off the queue.
   */
  private int applyBatch(SessionQueue queue, ExclusiveLease lease, int count) {
    List<SessionQueue.Entry> entries = queue.entries();
    List<SessionQueue.Entry> prefix = entries.subList(0, Math.min(count, entries.size()));
    if (prefix.isEmpty()) {
      return 0;
    }
    Set<EntityKey> touched = new LinkedHashSet<>();
    List<String> sessionIds = new ArrayList<>();
    long pinnedBytes = 0;
    int applied = 0;
    for (SessionQueue.Entry entry : prefix) {
      sessionIds.add(entry.sessionId());
      Optional<byte[]> value = replicas.get(SessionIds.objectKey(entry.sessionId()));
      if (value.isEmpty()) {
        continue;
      }
      List<EntityChanges> rows = SessionCodec.decode(value.get());
      store.retry(() -> mySql.applyOnce(entry.sessionId(), rows));
      rows.forEach(row -> touched.add(row.key()));
      pinnedBytes += value.get().length;
      applied++;
    }
    lease.ensureHeld();
    for (String sessionId : sessionIds) {
      replicas.delete(SessionIds.objectKey(sessionId));
    }
    budget.adjust(-pinnedBytes * replicas.count());
    counters.drained.add(applied);
    touched.forEach(row -> mappings.remove(row, sessionIds));
    queue.rewrite(lease, entries.subList(prefix.size(), entries.size()));
    return prefix.size();
  }

  /**
   * Writes every queue, its session objects and their rows' mappings again to each replica on a live server that
   * lacks them, queue by queue under the queue's lease: gives back the copies a restarted server lost, so that they
   * survive the next loss (see {@link ReplicaRepair}).
   *
   * @return how many values were written again (0 once every live replica holds its copy)
   */
  int restoreReplicas() {
    int restored = 0;
    for (SessionQueue queue : queues.values()) {
      restored += ExclusiveLease.untilKept(() -> restore(queue));
    }
    return restored;
  }

  private int restore(SessionQueue queue) {
    try (ExclusiveLease lease = queue.lease()) {
      List<SessionQueue.Entry> entries = queue.entries();
      if (entries.isEmpty()) {
        return 0;
      }
      int restored = 0;
      if (!replicas.lackingACopy(List.of(queue.key())).isEmpty()) {
        Outcome outcome = queue.rewrite(lease, entries);
        if (!outcome.isOk()) {
          throw new IqException("could not restore " + queue.key() + ": " + outcome);
        }
        restored++;
      }
      List<String> objectKeys = entries.stream().map(entry -> SessionIds.objectKey(entry.sessionId())).toList();
      Set<String> lacking = new HashSet<>(replicas.lackingACopy(objectKeys));
      for (String objectKey : objectKeys) {
        Optional<byte[]> value = replicas.get(objectKey);
        if (value.isEmpty()) {
          continue;
        }
        if (lacking.contains(objectKey)) {
          lease.ensureHeld();
          Outcome outcome = replicas.set(objectKey, value.get());
          if (!outcome.isOk()) {
            throw new IqException("could not restore " + objectKey + ": " + outcome);
          }
          restored++;
        }
        for (EntityChanges row : SessionCodec.decode(value.get())) {
          restored += mappings.restoreReplicas(row.key());
        }
      }
      return restored;
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
      List<String> page = store.retry(() -> mySql.appliedSessionIds(cutoff, from, COMPACTION_PAGE));
      if (page.isEmpty()) {
        return forgotten;
      }
      List<String> gone = page.stream().filter(id -> queues.containsKey(SessionIds.queueOf(id)))
          .filter(id -> replicas.get(SessionIds.objectKey(id)).isEmpty()).toList();
      forgotten += store.retry(() -> mySql.forgetAppliedSessions(gone));
      after = page.get(page.size() - 1);
    }
  }
}
