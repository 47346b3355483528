package io.dendrite.iq.server;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * TARDIS's pending markers ({@code pd:} in IQ-Twemcached): the keys for which a buffered write may exist, which
 * every lease grant reports as {@code <p>} = 1 so that its holder first applies that write (Contextual, design §5.2).
 *
 * <p>A marker is state of its own, not of the key's item: eviction, {@code delete}, {@code dar}, {@code flush_all}
 * and {@code set} leave it, since a lost marker lets a reader fill the key from a data store that lacks the
 * buffered write. For the same reason the table never drops a marker to make room: each is charged key bytes plus
 * {@value #OVERHEAD_BYTES} to the {@link PinnedQuota}, and one that does not fit is refused, so that the client
 * that wanted it knows and does not buffer the write. A marker goes only when a lease holder clears it ({@code
 * commit <tid> 0}, {@code iqset}).
 *
 * <p>A restart loses every marker. Until the server is told {@code pready} (TARDIS has marked again every key it
 * knows to have a buffered write), {@link #pendingBit} answers 1 ("maybe") for every key, unless the server runs
 * without that gate.
 *
 * <p>Callers hold the stripes of the keys they change, so a key's marker cannot change between a check and the
 * change.
 */
final class PendingMarkers {

  /** What a marker costs beyond its key's bytes: the table's entry and the key's object. */
  static final int OVERHEAD_BYTES = 64;

  private final Set<String> markers = ConcurrentHashMap.newKeySet();
  private final PinnedQuota quota;
  private final AtomicLong bytes = new AtomicLong();
  private volatile boolean ready;

  /**
   * @param quota the pinned-memory budget markers are charged to
   * @param readyAtStart whether the markers are to be trusted before {@code pready}: only for a server that runs
   *     without the gate, which then answers {@code <p>} = 0 after a restart for keys whose markers it lost
   */
  PendingMarkers(PinnedQuota quota, boolean readyAtStart) {
    this.quota = quota;
    this.ready = readyAtStart;
  }

  /** Marks {@code key}; false, with nothing changed, when a new marker does not fit the pinned quota. */
  boolean add(String key) {
    return addAll(List.of(key));
  }

  /**
   * Marks every key of {@code keys}, or none: false, with nothing changed, when the new markers together do not fit
   * the pinned quota. Keys already marked cost nothing more.
   */
  boolean addAll(Collection<String> keys) {
    List<String> fresh = new ArrayList<>();
    long cost = 0;
    for (String key : Set.copyOf(keys)) {
      if (!markers.contains(key)) {
        fresh.add(key);
        cost += costOf(key);
      }
    }
    if (!quota.tryCharge(cost)) {
      return false;
    }
    bytes.addAndGet(cost);
    for (String key : fresh) {
      if (!markers.add(key)) {
        credit(
            key); // marked meanwhile by a caller that did not hold the key's stripe: charged once
        // is enough
      }
    }
    return true;
  }

  /** Clears {@code key}'s marker and gives its bytes back; whether there was one. */
  boolean remove(String key) {
    if (!markers.remove(key)) {
      return false;
    }
    credit(key);
    return true;
  }

  boolean contains(String key) {
    return markers.contains(key);
  }

  /**
   * {@code <p>} as IQ replies print it: 1 when {@code key} is marked, and for every key until {@code pready}, since
   * a marker this run never heard of may have been lost with the previous one.
   */
  int pendingBit(String key) {
    return !ready || markers.contains(key) ? 1 : 0;
  }

  /** {@code pready}: the markers are complete again; from now on {@link #pendingBit} reports them. */
  void markReady() {
    ready = true;
  }

  boolean isReady() {
    return ready;
  }

  long size() {
    return markers.size();
  }

  /** What the markers take of the pinned quota. */
  long bytes() {
    return bytes.get();
  }

  private void credit(String key) {
    long cost = costOf(key);
    bytes.addAndGet(-cost);
    quota.release(cost);
  }

  private static long costOf(String key) {
    return key.length() + OVERHEAD_BYTES;
  }
}
