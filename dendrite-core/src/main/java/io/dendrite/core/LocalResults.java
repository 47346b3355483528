package io.dendrite.core;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Policy;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;

/**
 * The near cache (L1): the decoded rows of the range's cached results, kept in this process's heap by the range's
 * owner in front of the IQ servers (L2), so that a hit costs no round trip. Only the owner may keep them: every miss
 * and every write of the range runs in its process, so it sees every change of every result it holds, with no
 * invalidation message from anyone.
 *
 * <p>An L1 result is never older than an acknowledged write. A write marks the results it touches as being written
 * ({@link #beginWrite}) before it changes them in L2 and drops them from L1, and drops them again when it is done
 * ({@link #endWrite}); a result read from L2 (a hit, or a miss's fill) is put into L1 only if no write of it began
 * since the reader looked ({@link #stamp}) and none is running ({@link #install}). The check and the put are one
 * atomic step on the result's key, as is a write's drop, so a reader that read a value before a write committed
 * cannot put it back after the write dropped it. Readers' stamps are kept per stripe of keys, not per key: a
 * collision only keeps a result out of L1 a little longer. Writes check each other per key.
 *
 * <p>A write that committed a result's new value to L2 puts the same rows back into L1 when it ends (instead of
 * leaving the next get to read L2), if no other write of the result began since it marked it: the write
 * held the result's Q lease, so what it committed is L2's value, and no reader could install meanwhile.
 *
 * <p>Bounded by weight (the encoded size of each result, in bytes, as the cache servers hold it), evicting least
 * recently and frequently used results first (Caffeine's W-TinyLFU).
 *
 * @param <R> the row type
 */
final class LocalResults<R> {
  /** The stamp of a key a write is running on: nothing read now may be kept. */
  static final long WRITING = -1;

  private static final int STRIPES = 4096;

  /** Per stripe: how many writes began and ended (each bumps it twice), and drops: what readers' stamps hold. */
  private final AtomicLongArray versions = new AtomicLongArray(STRIPES);

  /** Per stripe: writes running now. */
  private final AtomicIntegerArray writing = new AtomicIntegerArray(STRIPES);

  /**
   * Per key being written: the writes running on it and the events (writes begun and ended, drops) since the first
   * of them.
   * Writes check each other per key, not per stripe: a result kept in L1 alone (see {@link RefreshedResults}) that a
   * write could not put back is a miss for the next get, so a collision of two unrelated keys must not cost it.
   */
  private final ConcurrentHashMap<String, KeyWrites> writesByKey = new ConcurrentHashMap<>();

  /** Changed only inside {@code writesByKey.compute} on its key; read anywhere. */
  private static final class KeyWrites {
    volatile int running;
    volatile long events;
  }

  private final Cache<String, Copy<R>> results;
  private final Policy.Eviction<String, Copy<R>> eviction;
  private final LongAdder hits = new LongAdder();

  /** False only for the negative control: writes leave L1 alone. */
  private final boolean writesDrop;

  /** One result as kept: its rows, immutable, and its weight (encoded bytes). */
  record Copy<R>(List<R> rows, int weight) {}

  /** A near cache of at most {@code maxWeightBytes} (encoded bytes of the results it holds). */
  LocalResults(long maxWeightBytes) {
    this(maxWeightBytes, true);
  }

  /** {@code writesDrop} false: the negative control, whose writes leave L1's copies alone. */
  LocalResults(long maxWeightBytes, boolean writesDrop) {
    this.writesDrop = writesDrop;
    this.results =
        Caffeine.newBuilder()
            .maximumWeight(maxWeightBytes)
            .weigher((String key, Copy<R> held) -> held.weight())
            .recordStats()
            .build();
    this.eviction = results.policy().eviction().orElseThrow(); // bounded by weight, always
  }

  /** The rows of {@code key}'s result, or null when L1 does not hold it. */
  List<R> get(String key) {
    Copy<R> held = results.getIfPresent(key);
    return held == null ? null : held.rows();
  }

  /** Counts a get answered from L1 alone. */
  void hit() {
    hits.increment();
  }

  /**
   * What a reader notes before it reads {@code key}'s result from L2 (or from the data store, for a fill), to give to
   * {@link #install} after: {@link #WRITING} when a write of the key is running.
   */
  long stamp(String key) {
    int stripe = stripe(key);
    // In this order: a write bumps the count of running writes before the version, so a reader that
    // saw none
    // running and the version before the write began sees the version change at install.
    if (writing.get(stripe) != 0) {
      return WRITING;
    }
    return versions.get(stripe);
  }

  /**
   * Keeps {@code rows} as {@code key}'s result, read after {@code stamp} was taken, unless a write of the key began
   * since or is running. {@code weight}: the result's encoded size in bytes.
   */
  void install(String key, long stamp, List<R> rows, int weight) {
    if (stamp == WRITING) {
      return;
    }
    int stripe = stripe(key);
    Copy<R> kept = kept(rows, weight);
    results
        .asMap()
        .compute(
            key,
            (k, before) ->
                writing.get(stripe) == 0 && versions.get(stripe) == stamp ? kept : before);
  }

  /**
   * A write's marks on the results it may change: their keys (each once), their copies as L1 held them before the
   * write, and per key the count of its events after the write's own mark.
   */
  static final class WriteMarks<R> {
    private final List<String> keys;
    private final Map<String, Copy<R>> before = new HashMap<>();
    private final Map<String, Long> ownEvent = new HashMap<>();

    private WriteMarks(List<String> keys) {
      this.keys = keys;
    }

    /** L1's copy of {@code key}'s result when the write began, or null. */
    Copy<R> before(String key) {
      return before.get(key);
    }

    /** The keys of the results L1 held when the write began. */
    Set<String> held() {
      return before.keySet();
    }
  }

  /** Marks {@code keys} as being written, then drops their results: call before the write changes them in L2. */
  WriteMarks<R> beginWrite(List<String> keys) {
    WriteMarks<R> marks = new WriteMarks<>(keys);
    if (!writesDrop) {
      return marks;
    }
    for (String key : keys) {
      int stripe = stripe(key);
      writing.incrementAndGet(stripe);
      versions.incrementAndGet(stripe);
      long[] own = new long[1];
      writesByKey.compute(
          key,
          (k, state) -> {
            KeyWrites marked = state == null ? new KeyWrites() : state;
            marked.running++;
            own[0] = ++marked.events;
            return marked;
          });
      marks.ownEvent.put(key, own[0]);
      // After the marks: a put that saw none is removed here.
      Copy<R> held = results.asMap().remove(key);
      if (held != null) {
        marks.before.put(key, held);
      }
    }
    return marks;
  }

  /**
   * Ends the write's marks, whatever its outcome: a result in {@code after} (what the write committed to L2, or keeps
   * in L1 alone) is kept as that if no other write of it began, and it was not dropped, since the marks; every other
   * marked result is dropped again.
   */
  void endWrite(WriteMarks<R> marks, Map<String, Copy<R>> after) {
    if (!writesDrop) {
      return;
    }
    for (String key : marks.keys) {
      Copy<R> next = after.get(key);
      if (next == null) {
        results.asMap().remove(key);
        continue;
      }
      long ownEvent = marks.ownEvent.get(key);
      Copy<R> kept = kept(next.rows(), next.weight());
      // Null removes: another write of the key began (or it was dropped), so this value may be old.
      results
          .asMap()
          .compute(
              key,
              (k, current) -> {
                KeyWrites state = writesByKey.get(key);
                return state != null && state.running == 1 && state.events == ownEvent
                    ? kept
                    : null;
              });
    }
    for (String key : marks.keys) {
      int stripe = stripe(key);
      versions.incrementAndGet(stripe);
      writing.decrementAndGet(stripe);
      writesByKey.computeIfPresent(
          key,
          (k, state) -> {
            state.events++; // a write that marked before this one ended cannot tell which came last
            return --state.running == 0 ? null : state;
          });
    }
  }

  /**
   * Drops {@code key}'s result (its entry left PrInT, or its value could not be trusted), and keeps out what a reader
   * or a write that began before read of it: once the entry is gone, writes no longer mark its key, so a copy put
   * back now would not be kept current (and a fill that registers the entry again may not replace it).
   */
  void drop(String key) {
    versions.incrementAndGet(stripe(key));
    writesByKey.computeIfPresent(
        key,
        (k, state) -> {
          state.events++;
          return state;
        });
    results.asMap().remove(key);
  }

  /** Drops every result: the range was given up, or the owner can no longer show it owns it. */
  void dropAll() {
    results.invalidateAll();
  }

  /**
   * Whether L1 has room for more results: below nine tenths of its bound (approximate, without applying pending
   * writes), so that taking results in does not mostly evict others.
   */
  boolean hasRoom() {
    return eviction.weightedSize().orElse(0) < eviction.getMaximum() / 10 * 9;
  }

  /** Gets answered from L1 alone so far. */
  long hits() {
    return hits.sum();
  }

  /** Results evicted to stay under the weight bound so far. */
  long evictions() {
    return results.stats().evictionCount();
  }

  /** Results held now (approximate). */
  long size() {
    return results.estimatedSize();
  }

  /** Their weight, in encoded bytes (approximate). */
  long weight() {
    results.cleanUp(); // applies the pending writes: a gauge read just after a put sees it
    return eviction.weightedSize().orElse(0);
  }

  /** What L1 keeps of a result: its rows immutable (a hit hands them out), its weight at least 1. */
  private static <R> Copy<R> kept(List<R> rows, int weight) {
    return new Copy<>(List.copyOf(rows), Math.max(1, weight));
  }

  /** The stripe of {@code key} (tests use it to find two keys of one stripe). */
  static int stripeOf(String key) {
    return stripe(key);
  }

  private static int stripe(String key) {
    return Math.floorMod(key.hashCode() * 0x9E3779B9, STRIPES);
  }
}
