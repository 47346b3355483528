package io.dendrite.iq.server;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Expiry;
import com.github.benmanes.caffeine.cache.Policy;
import com.github.benmanes.caffeine.cache.RemovalCause;
import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.BiPredicate;
import java.util.function.LongSupplier;
import java.util.function.Predicate;

/**
 * The user key space. Unpinned items live in a size-bounded Caffeine cache (weigher = key + value
 * + overhead) which does the evicting; pinned items live in a plain map charged against the pinned
 * quota ({@link PinnedQuota}, shared with the pending markers), so eviction cannot reach them. A key is in at most
 * one of the two.
 *
 * <p>Callers hold the key's stripe from {@link KeyLocks} for every read-modify-write; the store
 * itself only guarantees that each single call is atomic.
 */
final class ItemStore {

  /** Rough per-item bookkeeping cost, so that many tiny items still exhaust the budget. */
  static final int ITEM_OVERHEAD_BYTES = 64;

  /** Outcome of a store attempt. */
  enum StoreResult {
    STORED,
    OUT_OF_PINNED_MEMORY
  }

  private final Cache<String, Item> unpinned;
  private final Map<String, Item> pinned = new ConcurrentHashMap<>();

  /** What the pinned items take of {@link #pinnedQuota}, which the pending markers share. */
  private final AtomicLong pinnedBytes = new AtomicLong();

  private final PinnedQuota pinnedQuota;
  private final AtomicLong casCounter = new AtomicLong();
  private final LongAdder evictions = new LongAdder();
  private final LongSupplier clock;

  /**
   * Set in the thread that stored a pinned item (or tried to): {@link CommandTable} reads it after each command, to
   * tell which connections keep replicas of pinned values here ({@link Handover}). Commands run in one thread each.
   */
  private static final ThreadLocal<Boolean> PINNED_STORED = ThreadLocal.withInitial(() -> false);

  /** Whether this thread stored a pinned item since the last call; clears it. */
  static boolean pinnedStoredInThisThread() {
    if (!PINNED_STORED.get()) {
      return false;
    }
    PINNED_STORED.set(Boolean.FALSE);
    return true;
  }

  ItemStore(long memoryBytes, PinnedQuota pinnedQuota, LongSupplier clock) {
    this.pinnedQuota = pinnedQuota;
    this.clock = clock;
    this.unpinned =
        Caffeine.newBuilder()
            .maximumWeight(memoryBytes)
            .weigher((String key, Item item) -> weight(key, item))
            .expireAfter(new ItemExpiry())
            // Run maintenance on the calling thread: eviction is then prompt and deterministic
            // instead of depending on the common pool, which this process shares.
            .executor(Runnable::run)
            .evictionListener(
                (String key, Item item, RemovalCause cause) -> {
                  if (cause == RemovalCause.SIZE) {
                    evictions.increment();
                  }
                })
            .build();
  }

  static int weight(String key, Item item) {
    return key.length() + item.value().length + ITEM_OVERHEAD_BYTES;
  }

  /** The live item for {@code key}, or {@code null}; expired items are dropped on the way. */
  Item get(String key) {
    Item item = pinned.get(key);
    if (item == null) {
      item = unpinned.getIfPresent(key);
    }
    if (item != null && item.isExpired(clock.getAsLong())) {
      remove(key);
      return null;
    }
    return item;
  }

  /**
   * Stores {@code item} under {@code key}, assigning a fresh CAS unique. A pinned item that does
   * not fit the pinned quota is refused and the previous item is left as it was.
   */
  StoreResult put(String key, Item item) {
    if (item.pinned()) {
      PINNED_STORED.set(Boolean.TRUE);
    }
    Item stamped =
        new Item(
            item.value(),
            item.flags(),
            item.expiresAtMillis(),
            casCounter.incrementAndGet(),
            item.pinned());
    if (stamped.pinned()) {
      // The previous item is stable: the caller holds the key's stripe.
      if (!reservePinned(pinnedDelta(key, stamped))) {
        return StoreResult.OUT_OF_PINNED_MEMORY;
      }
      unpinned.invalidate(key);
      pinned.put(key, stamped);
    } else {
      removePinned(key);
      unpinned.put(key, stamped);
    }
    return StoreResult.STORED;
  }

  /** Charges {@code delta} bytes to the pinned quota if they fit, in one step (see {@link PinnedQuota}). */
  private boolean reservePinned(long delta) {
    if (!pinnedQuota.tryCharge(delta)) {
      return false;
    }
    pinnedBytes.addAndGet(delta);
    return true;
  }

  /** Whether {@code item} would fit the pinned quota if stored under {@code key} now. */
  boolean fitsPinnedQuota(String key, Item item) {
    return pinnedQuota.fits(pinnedDelta(key, item));
  }

  /** What storing {@code item} pinned under {@code key} would add to the pinned bytes (less, if it shrinks). */
  private long pinnedDelta(String key, Item item) {
    Item previous = pinned.get(key);
    return weight(key, item) - (previous == null ? 0 : weight(key, previous));
  }

  /** Removes the key; returns whether a live item was there. */
  boolean remove(String key) {
    Item wasPinned = removePinned(key);
    Item wasUnpinned = unpinned.asMap().remove(key);
    Item removed = wasPinned != null ? wasPinned : wasUnpinned;
    return removed != null && !removed.isExpired(clock.getAsLong());
  }

  private Item removePinned(String key) {
    Item previous = pinned.remove(key);
    if (previous != null) {
      int weight = weight(key, previous);
      pinnedBytes.addAndGet(-weight);
      pinnedQuota.release(weight);
    }
    return previous;
  }

  /**
   * Drops every unpinned item whose key {@code dropped} accepts. Pinned items stay: they are data the cache tier may be the only holder of
   * (write-back's buffered writes, their listings and logs), not copies of a database that a flush may drop. A
   * pinned item goes with {@code delete}, or with a flush once {@code unpin}ned.
   */
  void clearUnpinned(Predicate<String> dropped) {
    unpinned.asMap().keySet().removeIf(dropped);
  }

  /** Drops expired pinned items; Caffeine reclaims expired unpinned ones itself. */
  void purgeExpiredPinned(KeyLocks locks) {
    long now = clock.getAsLong();
    for (Map.Entry<String, Item> entry : pinned.entrySet()) {
      if (entry.getValue().isExpired(now)) {
        try (KeyLocks.Held held = locks.lock(entry.getKey())) {
          Item current = pinned.get(entry.getKey());
          if (current != null && current.isExpired(now)) {
            removePinned(entry.getKey());
          }
        }
      }
    }
    unpinned.cleanUp();
  }

  /**
   * Shows {@code visitor} each live item until it returns {@code false}: the unpinned ones most recently used first,
   * as memcached's {@code stats cachedump} walks an LRU from its head, then the pinned ones, which no eviction order
   * holds. Caffeine keeps its eviction lock while it walks, so a visitor must be quick (it only writes reply lines).
   */
  void visitLive(BiPredicate<String, Item> visitor) {
    long now = clock.getAsLong();
    boolean more =
        unpinned
            .policy()
            .eviction()
            .orElseThrow()
            .hottest(
                entries -> {
                  Iterator<Policy.CacheEntry<String, Item>> each = entries.iterator();
                  while (each.hasNext()) {
                    Policy.CacheEntry<String, Item> entry = each.next();
                    if (!entry.getValue().isExpired(now)
                        && !visitor.test(entry.getKey(), entry.getValue())) {
                      return false;
                    }
                  }
                  return true;
                });
    if (!more) {
      return;
    }
    for (Map.Entry<String, Item> entry : pinned.entrySet()) {
      if (!entry.getValue().isExpired(now) && !visitor.test(entry.getKey(), entry.getValue())) {
        return;
      }
    }
  }

  /** The budget for unpinned items, in bytes: {@code --memory}, or what {@code cache_memlimit} last set. */
  long memoryLimit() {
    return unpinned.policy().eviction().orElseThrow().getMaximum();
  }

  /**
   * Changes the budget for unpinned items. Caffeine evicts down to a smaller one at once, in this thread (the cache's
   * maintenance runs on the calling thread), exactly as a store that outgrows the budget does: without the evicted
   * keys' stripes, which no eviction takes. Pinned items are not in the budget and stay.
   */
  void setMemoryLimit(long bytes) {
    unpinned.policy().eviction().orElseThrow().setMaximum(bytes);
  }

  long itemCount() {
    return unpinned.estimatedSize() + pinned.size();
  }

  long unpinnedBytes() {
    return unpinned.policy().eviction().orElseThrow().weightedSize().orElse(0);
  }

  /** How many pinned items have keys that begin with {@code prefix}. */
  long pinnedItemsUnder(String prefix) {
    return pinned.keySet().stream().filter(key -> key.startsWith(prefix)).count();
  }

  long pinnedItemCount() {
    return pinned.size();
  }

  long pinnedBytes() {
    return pinnedBytes.get();
  }

  long evictions() {
    return evictions.sum();
  }

  /** Lets Caffeine reclaim memory of expired items; {@link #get} still checks expiry exactly. */
  private final class ItemExpiry implements Expiry<String, Item> {
    @Override
    public long expireAfterCreate(String key, Item item, long currentTime) {
      if (item.expiresAtMillis() == 0) {
        return Long.MAX_VALUE;
      }
      long millis = Math.max(0, item.expiresAtMillis() - clock.getAsLong());
      return TimeUnit.MILLISECONDS.toNanos(millis);
    }

    @Override
    public long expireAfterUpdate(String key, Item item, long currentTime, long currentDuration) {
      return expireAfterCreate(key, item, currentTime);
    }

    @Override
    public long expireAfterRead(String key, Item item, long currentTime, long currentDuration) {
      return currentDuration;
    }
  }
}
