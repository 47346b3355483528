package io.dendrite.core;

import java.util.Objects;

/**
 * A closed interval {@code [lo, hi]} over a totally ordered key type. A point is the interval
 * {@code [c, c]}.
 *
 * <p>Both bounds are inclusive, matching the {@code get(lb, ub, ...)} contract of the CPR paper;
 * two intervals that only share an endpoint therefore overlap.
 *
 * @param lo the lower bound, inclusive
 * @param hi the upper bound, inclusive, never below {@code lo}
 * @param <K> the key type
 */
public record Interval<K extends Comparable<? super K>>(K lo, K hi) {

  /**
   * Creates {@code [lo, hi]}.
   *
   * @throws IllegalArgumentException if {@code lo > hi}
   * @throws NullPointerException if a bound is null
   */
  public Interval {
    Objects.requireNonNull(lo, "lo");
    Objects.requireNonNull(hi, "hi");
    if (lo.compareTo(hi) > 0) {
      throw new IllegalArgumentException("lower bound " + lo + " is above upper bound " + hi);
    }
  }

  /** Returns {@code [lo, hi]}; see {@link #Interval(Comparable, Comparable)}. */
  public static <K extends Comparable<? super K>> Interval<K> of(K lo, K hi) {
    return new Interval<>(lo, hi);
  }

  /** Returns the point interval {@code [c, c]}. */
  public static <K extends Comparable<? super K>> Interval<K> point(K c) {
    return new Interval<>(c, c);
  }

  /** Returns true if the two intervals share at least one key. */
  public boolean overlaps(Interval<K> other) {
    return lo.compareTo(other.hi) <= 0 && other.lo.compareTo(hi) <= 0;
  }

  /** Returns true if every key of {@code other} is in this interval. */
  public boolean contains(Interval<K> other) {
    return lo.compareTo(other.lo) <= 0 && other.hi.compareTo(hi) <= 0;
  }

  @Override
  public String toString() {
    return "[" + lo + ", " + hi + "]";
  }
}
