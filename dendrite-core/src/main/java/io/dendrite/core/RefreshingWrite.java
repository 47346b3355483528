package io.dendrite.core;

import io.dendrite.iq.client.CacheValue;
import io.dendrite.iq.client.IqClient;
import io.dendrite.iq.client.IqException;
import io.dendrite.iq.client.Outcome;
import io.dendrite.iq.client.ReadResult;
import io.dendrite.iq.client.RefreshLease;
import io.dendrite.iq.client.RefreshResult;
import io.dendrite.iq.client.Transaction;
import io.dendrite.iq.client.WriteOptions;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * {@link WritePolicy#WRITE_THROUGH} and {@link WritePolicy#WRITE_BACK}: every cached entry the write touches is
 * refreshed under a Q lease, by an appended change record or rewritten whole, around the data store write
 * (write-through) or around handing the change to the {@link WriteBuffer} (write-back, which can do all of it in
 * one round trip: {@link #writeBackInOneTrip}).
 *
 * @param <K> the attribute's type
 * @param <R> the row type
 */
final class RefreshingWrite<K extends Comparable<? super K>, R> implements WritePath<K, R> {
  private final CacheParts<K, R> common;
  private final IqClient cache;
  private final EntryIndex<K> index;
  private final DendriteCounters metrics;
  private final ResultSetCodec<R> resultSets;
  private final TypedWriteBuffer<K, ?> writeBuffer;
  private final boolean oneTripAllowed;
  private final boolean detachDeletes;

  /**
   * {@code writeBuffer}: null for write-through. {@code soleOwner}: whether the range's claim excludes every other
   * owner ({@link Coordinator.RangeClaim#excludesOtherOwners}), without which write-back never takes the one-trip
   * path (its refused appends are dropped, not waited for, which is right only when the other writer is this
   * Dendrite's own).
   */
  RefreshingWrite(CacheParts<K, R> common, TypedWriteBuffer<K, ?> writeBuffer, boolean soleOwner) {
    this(common, writeBuffer, soleOwner, true);
  }

  /**
   * {@code detachDeletes} false: the negative control, whose writes keep a result in the near cache alone without
   * deleting the servers' copy, which goes stale.
   */
  RefreshingWrite(
      CacheParts<K, R> common,
      TypedWriteBuffer<K, ?> writeBuffer,
      boolean soleOwner,
      boolean detachDeletes) {
    this.detachDeletes = detachDeletes;
    this.common = common;
    this.cache = common.cache;
    this.index = common.index;
    this.metrics = common.metrics;
    this.resultSets = common.resultSets;
    this.writeBuffer = writeBuffer;
    this.oneTripAllowed = soleOwner;
  }

  @Override
  public <C> void write(
      Interval<K> interval,
      C change,
      ChangeApplier<? super C> apply,
      CacheUpdate<K, R> cacheUpdate,
      RefreshedResults<R> refreshed,
      RoundTrips trips) {
    List<EntryIndex.Entry<K>> targets = new ArrayList<>(index.impactedBy(interval));
    boolean point = interval.lo().compareTo(interval.hi()) == 0;
    EntryIndex.Entry<K> newPoint = null;
    if (point && targets.isEmpty() && index.isCovered(interval)) {
      // A write at an attribute value the covered interval had no row for: create its point entry,
      // logged before it exists. If it cannot be logged, the interval stops being covered instead.
      trips.add(1);
      if (index.announce(interval, index.keyOf(interval))) {
        newPoint = new EntryIndex.Entry<>(interval, index.keyOf(interval));
        targets.add(newPoint);
      } else {
        index.uncoverOverlapping(interval);
      }
    } else if (!point) {
      index.uncoverOverlapping(interval);
    }
    // Encoded only for a write that touches cached results: most writes touch none.
    byte[] encoded = targets.isEmpty() ? null : common.encodedChangeOf(change);
    byte[] record = encoded == null ? null : ResultSetCodec.changeRecord(encoded);
    refreshed.encodedChange(encoded);
    Map<EntryIndex.Entry<K>, byte[]> appends = new LinkedHashMap<>();
    Set<EntryIndex.Entry<K>> onlyLocal = new HashSet<>();
    if (record != null) {
      for (EntryIndex.Entry<K> entry : targets) {
        if (entry == newPoint) {
          continue;
        }
        if (index.isDetached(entry.key())
            || refreshed.heldLocally(entry.key())
            || refreshed.mayAdopt()) {
          onlyLocal.add(entry);
        } else if (index.changeRecords(entry.key()) < CacheParts.RECORDS_BEFORE_REWRITE) {
          appends.put(entry, record);
        }
      }
    }
    if (writeBuffer != null
        && oneTripAllowed
        && appends.size() + onlyLocal.size() == targets.size()) {
      writeBackInOneTrip(interval, change, targets, onlyLocal, record, refreshed, trips);
      return;
    }
    CacheUpdate<K, R> update = common.cacheUpdateOf(change, cacheUpdate);
    // Write-back sends its buffer's first requests (log record, reads of the buffered writes) with
    // the leases.
    WriteBuffer.Started buffering =
        writeBuffer == null ? null : writeBuffer.start(interval, change);
    Map<EntryIndex.Entry<K>, CompletableFuture<Optional<CacheValue>>> adopting = new HashMap<>();
    LeasedTargets leased;
    try {
      leased =
          leaseTargets(
              cache.beginTransaction(),
              targets,
              appends,
              onlyLocal,
              refreshed,
              adopting,
              trips,
              buffering);
    } catch (RuntimeException failed) {
      if (buffering != null) {
        buffering.abandon();
      }
      throw failed;
    }
    if (leased.waited() && buffering != null) {
      buffering =
          writeBuffer.start(interval, change); // abandoned while waiting for another writer's lease
    }
    try (Transaction transaction = leased.transaction()) {
      // Each rewritten target's new rows and encoded size.
      Map<EntryIndex.Entry<K>, LocalResults.Copy<R>> staged = new LinkedHashMap<>();
      Map<EntryIndex.Entry<K>, CompletableFuture<Outcome>> swaps = new LinkedHashMap<>();
      List<CompletableFuture<Outcome>> stagedDeletes = new ArrayList<>();
      List<EntryIndex.Entry<K>> emptied = new ArrayList<>();
      List<EntryIndex.Entry<K>> appended = new ArrayList<>();
      List<EntryIndex.Entry<K>> detaching = new ArrayList<>();
      List<EntryIndex.Entry<K>> keptLocally = new ArrayList<>();
      // The new values are all computed first (a cache-update function that throws changes nothing)
      // and sent after
      // the buffer's second step, so that step needs no reply that arrives after them.
      Map<EntryIndex.Entry<K>, Runnable> sendSwaps = new LinkedHashMap<>();
      for (int i = 0; i < targets.size(); i++) {
        EntryIndex.Entry<K> entry = targets.get(i);
        TargetLease result = leased.results().get(i);
        if (result == null) {
          continue; // its server is unreachable: dropped and owed a delete
        }
        if (result instanceof TargetLease.Appended) {
          appended.add(entry);
          continue;
        }
        if (result instanceof TargetLease.OnlyLocal local) {
          (local.deleting() ? detaching : keptLocally).add(entry);
          continue;
        }
        RefreshLease lease = ((TargetLease.Refresh) result).lease();
        if (lease.current().isEmpty() && entry != newPoint) {
          continue; // evicted: the commit leaves it absent and the next get refills it
        }
        List<R> before =
            lease.current().map(value -> common.rowsOf(entry, value.data())).orElse(List.of());
        List<R> after =
            common.normalize(
                entry.interval(),
                update.apply(entry.interval(), Collections.unmodifiableList(before)));
        boolean isPoint = entry.interval().lo().compareTo(entry.interval().hi()) == 0;
        trips.add(1);
        if (after.isEmpty() && isPoint) {
          // stages a delete: a point without rows has no entry
          sendSwaps.put(
              entry, () -> stagedDeletes.add(lease.swapAsync(new byte[0], WriteOptions.DEFAULT)));
          emptied.add(entry);
        } else {
          byte[] value = resultSets.encode(after);
          staged.put(entry, new LocalResults.Copy<>(after, value.length));
          sendSwaps.put(
              entry, () -> swaps.put(entry, lease.swapAsync(value, WriteOptions.DEFAULT)));
        }
      }
      Map<EntryIndex.Entry<K>, LocalResults.Copy<R>> rewritten = new LinkedHashMap<>();
      WriteBuffer.Stored stored = null;
      boolean allStaged = true;
      boolean applying = false;
      try {
        if (buffering == null) {
          sendSwaps.values().forEach(Runnable::run);
          allStaged = awaitSwaps(stagedDeletes, swaps, staged, rewritten);
          applying = true;
          CacheParts.run(() -> apply.apply(change), "apply");
        } else {
          stored = buffering.store();
          // Not awaited before the commit: they reach each server before the commit sent after
          // them.
          sendSwaps.values().forEach(Runnable::run);
        }
      } catch (RuntimeException failed) {
        if (buffering != null) {
          buffering.abandon(); // nothing buffered yet (a no-op once stored had thrown)
        }
        if (!transaction.servers().isEmpty()) {
          trips.add(transaction.servers().size());
          if (applying) {
            // The data store may have taken the write all the same (a commit whose reply was
            // lost fails too): the old values must not be served, so the targets go, unregistered
            // first, and the next get refills them.
            targets.forEach(index::remove);
            common.settleEnd(transaction.deleteAndRelease(), targets);
          } else {
            transaction.release(); // the data store is unchanged: keep the old values
          }
        }
        throw failed;
      }
      CompletableFuture<Outcome> committing = null;
      try {
        emptied.forEach(index::remove);
        if (!transaction.servers().isEmpty()) {
          trips.add(transaction.servers().size());
          // Under write-back the commit goes out with the buffered writes: one round trip for both.
          committing = transaction.commitAsync();
        }
      } finally {
        if (stored != null) {
          awaitStored(stored, committing, targets, trips); // also ends what the buffer holds
        }
      }
      Outcome end = committing == null ? Outcome.OK : committing.join();
      if (buffering != null) {
        try {
          allStaged = awaitSwaps(stagedDeletes, swaps, staged, rewritten);
        } catch (IqException lost) {
          allStaged = false; // the write is buffered; what the swap's server holds is unknown
        }
      }
      if (!allStaged || end != Outcome.OK) {
        common.settleEnd(Outcome.STATE_LOST, targets); // dropped: nothing to register
        return;
      }
      for (Map.Entry<EntryIndex.Entry<K>, LocalResults.Copy<R>> entry : rewritten.entrySet()) {
        int rows = entry.getValue().rows().size();
        if (entry.getKey() == newPoint) {
          index.register(newPoint.interval(), newPoint.key(), rows);
        } else {
          index.updateRowCount(entry.getKey().key(), rows);
        }
        refreshed.rewritten(entry.getKey().key(), entry.getValue());
      }
      noteAppended(appended, record, refreshed);
      noteOnlyLocal(detaching, keptLocally, adopting, record, refreshed);
      metrics.entriesRefreshed.add(
          rewritten.size() + appended.size() + detaching.size() + keptLocally.size());
    }
  }

  /**
   * Write-back when every cached result the write touches takes its change record (none is rewritten whole): the
   * appends, the buffer's requests (log record, buffered writes, listings) and the commit go out in one flight, so
   * the write awaits one round trip. The appends and the commit share each server's ordered connection, so the
   * commit applies the appends that were granted. A result whose append was refused (another writer holds its Q
   * lease, or the value would outgrow the item size) is dropped instead, unregistered first: the commit went out
   * before the refusal was known. Until the write returns, a reader may find it on some results and not yet on
   * others, as when its commit reaches one server before another; once it returns, every result it touched has it
   * or is gone.
   */
  private <C> void writeBackInOneTrip(
      Interval<K> interval,
      C change,
      List<EntryIndex.Entry<K>> targets,
      Set<EntryIndex.Entry<K>> onlyLocal,
      byte[] record,
      RefreshedResults<R> refreshed,
      RoundTrips trips) {
    WriteBuffer.Started buffering = writeBuffer.start(interval, change);
    Map<EntryIndex.Entry<K>, CompletableFuture<Optional<CacheValue>>> adopting = new HashMap<>();
    try (Transaction transaction = cache.beginTransaction()) {
      // Per target: its append, its delete, or null (kept in the near cache alone already).
      List<CompletableFuture<Outcome>> appending = new ArrayList<>();
      try {
        for (EntryIndex.Entry<K> entry : targets) {
          appending.add(
              onlyLocal.contains(entry)
                  ? detach(transaction, entry, refreshed, adopting, trips)
                  : append(transaction, entry, record, trips));
        }
      } catch (RuntimeException failed) {
        buffering.abandon();
        throw failed; // the transaction's close releases what was appended
      }
      // When it throws nothing is buffered: the transaction's close releases the appends.
      WriteBuffer.Stored stored = buffering.store();
      CompletableFuture<Outcome> committing = null;
      if (!transaction.servers().isEmpty()) {
        trips.add(transaction.servers().size());
        committing = transaction.commitAsync();
      }
      // The first wait: the whole flight goes out here.
      awaitStored(stored, committing, targets, trips);
      Outcome end = committing == null ? Outcome.OK : committing.join();
      List<EntryIndex.Entry<K>> appended = new ArrayList<>();
      List<EntryIndex.Entry<K>> detached = new ArrayList<>();
      List<EntryIndex.Entry<K>> keptLocally = new ArrayList<>();
      for (int i = 0; i < targets.size(); i++) {
        EntryIndex.Entry<K> entry = targets.get(i);
        CompletableFuture<Outcome> append = appending.get(i);
        if (append == null) {
          keptLocally.add(entry);
          continue;
        }
        Outcome outcome = common.unlessUnreachable(entry, () -> CacheParts.await(append));
        if (outcome == Outcome.OK) {
          (onlyLocal.contains(entry) ? detached : appended).add(entry);
        } else if (outcome != null) {
          // ABORTED, NOT_STORED, or STATE_LOST (which fails the commit too: see below).
          common.drop(entry, trips);
        }
      }
      if (end != Outcome.OK) {
        // Also NOT_FOUND where every append to a server was refused (nothing to commit there):
        // dropped already. The results only the near cache keeps take the write: it is buffered.
        appended.addAll(detached);
        common.settleEnd(Outcome.STATE_LOST, appended);
        noteOnlyLocal(List.of(), keptLocally, Map.of(), record, refreshed);
        return;
      }
      noteAppended(appended, record, refreshed);
      noteOnlyLocal(detached, keptLocally, adopting, record, refreshed);
      metrics.entriesRefreshed.add(appended.size() + detached.size() + keptLocally.size());
    }
  }

  /**
   * The servers' value of a result the write read to adopt, decoded, or null: not read (held already), gone (evicted,
   * unreachable), or undecodable (the next get fills it).
   */
  private LocalResults.Copy<R> adoptedFrom(
      EntryIndex.Entry<K> entry, CompletableFuture<Optional<CacheValue>> read) {
    if (read == null) {
      return null;
    }
    try {
      Optional<CacheValue> value = CacheParts.await(read);
      if (value.isEmpty()) {
        return null;
      }
      byte[] data = value.get().data();
      return new LocalResults.Copy<>(
          common.normalize(entry.interval(), common.rowsOf(entry, data)), data.length);
    } catch (RuntimeException unreadable) {
      return null;
    }
  }

  private CompletableFuture<Outcome> append(
      Transaction transaction, EntryIndex.Entry<K> entry, byte[] record, RoundTrips trips) {
    trips.add(1);
    return transaction.appendOnce(entry.key(), record);
  }

  /**
   * A result the write keeps in the near cache alone (see {@link EntryIndex#detach}): the servers hold none already
   * (then nothing is sent: null), or the range's sole owner takes it out of them. That first write deletes the
   * servers' copy under a Q-invalidate lease ({@code qareg}, applied by the commit), which also voids the I lease of
   * any fill, so that later writes need not refresh it there; for a result the near cache does not hold yet it also
   * reads the servers' value in the same flight ({@code adopting}), which the near cache then keeps with the change
   * applied. The read sees the value before the commit deletes it, or nothing: no fill can store one while the write
   * holds its Exclusive interval lease, and another write of the result keeps the near cache from keeping either
   * write's copy. No other process reads the result while this one owns the range, and one that takes the range over
   * finds no value and fills it.
   */
  private CompletableFuture<Outcome> detach(
      Transaction transaction,
      EntryIndex.Entry<K> entry,
      RefreshedResults<R> refreshed,
      Map<EntryIndex.Entry<K>, CompletableFuture<Optional<CacheValue>>> adopting,
      RoundTrips trips) {
    if (index.isDetached(entry.key())) {
      return null;
    }
    if (!detachDeletes) {
      return CompletableFuture.completedFuture(Outcome.OK); // the negative control
    }
    trips.add(1);
    CompletableFuture<Outcome> deleting = transaction.quarantineOnce(entry.key());
    if (!refreshed.heldLocally(entry.key())) {
      trips.add(1);
      adopting.put(entry, cache.getAsync(entry.key()));
    }
    return deleting;
  }

  /**
   * Once the commit deleted the servers' copies of {@code detached}, notes them as kept locally alone; tells the near
   * cache that they and {@code keptLocally} take the write's change record.
   */
  private void noteOnlyLocal(
      List<EntryIndex.Entry<K>> detached,
      List<EntryIndex.Entry<K>> keptLocally,
      Map<EntryIndex.Entry<K>, CompletableFuture<Optional<CacheValue>>> adopting,
      byte[] record,
      RefreshedResults<R> refreshed) {
    for (EntryIndex.Entry<K> entry : detached) {
      index.detach(entry.key());
      LocalResults.Copy<R> before = adoptedFrom(entry, adopting.get(entry));
      if (before != null) {
        refreshed.adopted(entry.key(), before, record.length);
      } else {
        refreshed.detached(entry.key(), record.length);
      }
    }
    metrics.entriesMovedToNearCache.add(detached.size());
    for (EntryIndex.Entry<K> entry : keptLocally) {
      refreshed.detached(entry.key(), record.length);
    }
  }

  /** Counts the change record each of {@code appended} took, and tells the near cache. */
  private void noteAppended(
      List<EntryIndex.Entry<K>> appended, byte[] record, RefreshedResults<R> refreshed) {
    for (EntryIndex.Entry<K> entry : appended) {
      index.addChangeRecord(entry.key());
      refreshed.appended(entry.key(), record.length);
    }
  }

  /**
   * Waits for the staged deletes and swaps; the targets whose swap was staged go into {@code refreshed}.
   *
   * @return whether every one was staged: a target whose swap was refused (its lease lapsed) would keep its old
   *     value through the commit, so the caller drops them all then
   */
  private boolean awaitSwaps(
      List<CompletableFuture<Outcome>> stagedDeletes,
      Map<EntryIndex.Entry<K>, CompletableFuture<Outcome>> swaps,
      Map<EntryIndex.Entry<K>, LocalResults.Copy<R>> staged,
      Map<EntryIndex.Entry<K>, LocalResults.Copy<R>> refreshed) {
    boolean all = true;
    for (CompletableFuture<Outcome> delete : stagedDeletes) {
      all &= CacheParts.await(delete) == Outcome.OK;
    }
    for (Map.Entry<EntryIndex.Entry<K>, CompletableFuture<Outcome>> swap : swaps.entrySet()) {
      if (CacheParts.await(swap.getValue()) == Outcome.OK) {
        refreshed.put(swap.getKey(), staged.get(swap.getKey()));
      } else {
        all = false;
      }
    }
    return all;
  }

  /**
   * Waits for the buffered writes that went out with the commit. When they failed the write is not acknowledged,
   * yet the refreshed results may be committed: they must not be served, so every target is dropped.
   */
  private void awaitStored(
      WriteBuffer.Stored stored,
      CompletableFuture<Outcome> committing,
      List<EntryIndex.Entry<K>> targets,
      RoundTrips trips) {
    try {
      stored.await();
    } catch (RuntimeException failed) {
      if (committing != null) {
        committing.join();
      }
      targets.forEach(entry -> common.drop(entry, trips));
      throw failed;
    }
  }

  /** What a write holds on one target: its Q-refresh lease with the current value, or an append staged under one. */
  private sealed interface TargetLease {
    record Refresh(RefreshLease lease) implements TargetLease {}

    record Appended() implements TargetLease {}

    /** Kept in the near cache alone: {@code deleting} when the commit deletes the servers' copy. */
    record OnlyLocal(boolean deleting) implements TargetLease {}
  }

  /**
   * The transaction holding the targets' Q leases, what it holds on each target (null: server unreachable), and
   * whether it had to wait for another writer (the write buffer's started write was abandoned then).
   */
  private record LeasedTargets(
      Transaction transaction, List<TargetLease> results, boolean waited) {}

  /**
   * Takes the Q lease of every target with all the requests in flight at once, so a write pays one round trip of
   * latency for them however many cached results it refreshes: a target in {@code appends} gets its change record
   * appended under a Q-incremental lease in the same request ({@code iqappend}), the others are read under a
   * Q-refresh lease ({@code qaread}) to be rewritten. When another writer holds one of them (or an append would make
   * a value too large), what was got is given back and a fresh transaction reads every target under a Q-refresh
   * lease, one at a time, in the index's order, waiting with backoff: two writers that each got part of the other's
   * keys at once would otherwise wait for each other. A target whose server is unreachable is dropped, owed a
   * delete, and has a null result.
   */
  private LeasedTargets leaseTargets(
      Transaction transaction,
      List<EntryIndex.Entry<K>> targets,
      Map<EntryIndex.Entry<K>, byte[]> appends,
      Set<EntryIndex.Entry<K>> onlyLocal,
      RefreshedResults<R> refreshed,
      Map<EntryIndex.Entry<K>, CompletableFuture<Optional<CacheValue>>> adopting,
      RoundTrips trips,
      WriteBuffer.Started buffering) {
    try {
      List<CompletableFuture<?>> requests = new ArrayList<>();
      for (EntryIndex.Entry<K> entry : targets) {
        byte[] record = appends.get(entry);
        if (onlyLocal.contains(entry)) {
          requests.add(detach(transaction, entry, refreshed, adopting, trips));
        } else if (record != null) {
          requests.add(append(transaction, entry, record, trips));
        } else {
          trips.add(1);
          requests.add(transaction.readForUpdateOnce(entry.key()));
        }
      }
      List<TargetLease> results = new ArrayList<>();
      boolean busy = false;
      for (int i = 0; i < targets.size(); i++) {
        CompletableFuture<?> request = requests.get(i);
        if (request == null) {
          results.add(new TargetLease.OnlyLocal(false));
          continue;
        }
        Object reply = common.unlessUnreachable(targets.get(i), () -> CacheParts.await(request));
        if (onlyLocal.contains(targets.get(i)) && reply != null) {
          // OK, or STATE_LOST, which fails the commit too: the targets are dropped then.
          results.add(new TargetLease.OnlyLocal(true));
        } else if (reply instanceof RefreshResult.Granted granted) {
          results.add(new TargetLease.Refresh(granted.lease()));
        } else if (reply == Outcome.OK || reply == Outcome.STATE_LOST) {
          // A lost server's state fails the commit, which drops the targets.
          results.add(new TargetLease.Appended());
        } else if (reply == null) {
          results.add(null);
        } else {
          busy = true; // Busy, ABORTED, or NOT_STORED: the value would outgrow the item size
          results.add(null);
        }
      }
      if (!busy) {
        return new LeasedTargets(transaction, results, false);
      }
    } catch (RuntimeException failed) {
      transaction.close();
      throw failed;
    }
    transaction.release();
    if (buffering != null) {
      buffering.abandon(); // what it holds (its documents' locks) must not wait with us: the other
      // writer may need it
    }
    Transaction oneByOne = cache.beginTransaction();
    try {
      List<TargetLease> results = new ArrayList<>();
      for (EntryIndex.Entry<K> entry : targets) {
        trips.add(1);
        RefreshResult result =
            common.unlessUnreachable(entry, () -> oneByOne.readForUpdate(entry.key()));
        if (result instanceof ReadResult.Busy) {
          if (!oneTripAllowed) {
            throw new DendriteBusyException(
                "another process holds the Q lease of " + entry.key(), null);
          }
          // The range's sole owner waited out the backoff: the holder is a former owner, killed or
          // fenced out, whose lease outlives it (or a writer of this Dendrite's that is slow).
          // Dropping
          // the result, unregistered first, serves nothing stale: the next get refills it.
          common.drop(entry, trips);
          results.add(null);
          continue;
        }
        results.add(
            result == null
                ? null
                : new TargetLease.Refresh(((RefreshResult.Granted) result).lease()));
      }
      return new LeasedTargets(oneByOne, results, true);
    } catch (RuntimeException failed) {
      oneByOne.close();
      throw failed;
    }
  }
}
