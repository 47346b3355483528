/**
 * The interval structures of a Dendrite (CPR paper, Section 2).
 *
 * <ul>
 *   <li>{@link io.dendrite.core.interval.IntervalTree}: the one balanced, augmented interval tree
 *       the others are built on; not thread-safe by itself.
 *   <li>{@link io.dendrite.core.interval.PredicateIndex} (PrInT): cached result sets by predicate
 *       interval, to find what a write impacts.
 *   <li>{@link io.dendrite.core.interval.IntervalLeases} (LeMInT): Shared/eXclusive leases on
 *       intervals within one process, with lifetimes and writer-fair queueing.
 *   <li>{@link io.dendrite.core.interval.BufferedWriteIndex} (BuWrInT's index): buffered writes by
 *       interval, in serial order.
 * </ul>
 *
 * <p>Intervals are closed on both ends ({@link io.dendrite.core.Interval}), so a write on
 * the point {@code [c, c]} impacts every predicate whose bounds include {@code c}.
 */
package io.dendrite.core.interval;
