package io.dendrite.core;

import io.dendrite.iq.client.IqClient;
import java.util.concurrent.Callable;

/**
 * Outage tolerance for a write-around or write-through {@link Dendrite} ({@link Dendrite.Builder#outageTolerance}):
 * the data-store side of every write and miss goes through a guard that keeps writes somewhere else while the data
 * store cannot take them, and keeps misses from reading a data store that lacks them. The TARDIS module's {@code
 * TardisRanges} is the implementation (the thesis' TARD and TARDIS techniques).
 *
 * @param <C> the type of change the guard writes: every write command of the Dendrite must take one, which the
 *     Dendrite checks when it is built
 */
public interface OutageTolerance<C> {

  /** The type of change the guards write. */
  Class<C> changeType();

  /**
   * The guard of the range {@code collection}.{@code domain}, which the Dendrite opening it owns: opened after the
   * Dendrite claimed the range, closed before it gives it up.
   */
  <K extends Comparable<? super K>> RangeGuard<K, C> open(
      DomainType<K> type, String collection, String domain, IqClient cache);

  /**
   * The guard of {@code range}, which this process owns under a lease from a multi-process coordinator: its
   * Dendrite's collection and domain, and the fenced ownership the guard acts under. Opened once the range is
   * taken over, closed before it is given up; what the guard keeps must be applied to the data store only under
   * that ownership's fence, so that a former owner's late statements are refused there.
   */
  <K extends Comparable<? super K>> RangeGuard<K, C> open(
      DomainType<K> type, OwnedRange range, IqClient cache);

  /**
   * The data-store side of one range's writes and misses. Both calls run under the Dendrite's interval leases (a
   * write's Exclusive lease, a miss's Shared lease and I lease), as the data-store statements they replace would.
   *
   * @param <K> the attribute's type
   * @param <C> the type of change it writes
   */
  interface RangeGuard<K extends Comparable<? super K>, C> extends AutoCloseable {

    /**
     * Refuses, before anything is changed, a change of the right type that this guard still cannot write as a write
     * touching {@code interval} (the default refuses none).
     *
     * @throws IllegalArgumentException naming what is wrong with {@code change}
     */
    default void check(Interval<K> interval, C change) {}

    /**
     * Writes {@code change}, which touches {@code interval}, in place of the write command's own {@link
     * WriteCommand#apply}: to the data store, or, while the data store cannot take it, kept elsewhere (durably)
     * until it can. Returns once the write is durable in one or the other.
     *
     * @throws Exception when it is neither: what the Dendrite reports as not applied or outcome unknown
     */
    void write(Interval<K> interval, C change) throws Exception;

    /**
     * Runs {@code query}, a miss's read of {@code interval} from the data store, having first applied whatever this
     * guard kept that the read depends on; or refuses, when the data store cannot give a current result now.
     *
     * @throws Exception the query's failure, or the refusal: nothing is cached
     */
    <T> T miss(Interval<K> interval, Callable<T> query) throws Exception;

    /** Stops the guard; what it keeps stays for the range's next owner. */
    @Override
    void close();
  }
}
