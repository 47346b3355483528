package io.dendrite.coordination;

import io.dendrite.core.DomainType;
import io.dendrite.core.Interval;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A domain [min, max] of whole numbers split into {@code n} ranges of equal width (the last may be narrower), the
 * units of ownership: range {@code i} is [{@link #lowerOf}, {@link #upperOf}], and a predicate is split at the range
 * bounds it crosses. Whole numbers only ({@link DomainType#INTEGER}, {@link DomainType#LONG}), because an interval
 * with inclusive bounds can be cut between two values only where no value lies between them.
 *
 * @param <K> the attribute's type
 */
final class RangeLayout<K extends Comparable<? super K>> {
  private final DomainType<K> type;
  private final long[] lowers;
  private final long max;

  /** A part of an interval: the sub-interval lying in range {@code range}. */
  record Part<K extends Comparable<? super K>>(int range, Interval<K> interval) {}

  RangeLayout(DomainType<K> type, K min, K max, int ranges) {
    if (type != DomainType.INTEGER && type != DomainType.LONG) {
      throw new IllegalArgumentException(
          "ranges split whole-number domains only (INTEGER, LONG), not " + type.name());
    }
    this.type = type;
    long lo = ((Number) min).longValue();
    long hi = ((Number) max).longValue();
    if (lo > hi) {
      throw new IllegalArgumentException("min " + min + " is greater than max " + max);
    }
    BigInteger size = BigInteger.valueOf(hi).subtract(BigInteger.valueOf(lo)).add(BigInteger.ONE);
    if (ranges < 1 || BigInteger.valueOf(ranges).compareTo(size) > 0) {
      throw new IllegalArgumentException(
          "ranges must be between 1 and the domain's " + size + " values, got " + ranges);
    }
    BigInteger width =
        size.add(BigInteger.valueOf(ranges - 1)).divide(BigInteger.valueOf(ranges)); // ceiling
    List<Long> starts = new ArrayList<>();
    for (int i = 0; i < ranges; i++) {
      BigInteger start = BigInteger.valueOf(lo).add(width.multiply(BigInteger.valueOf(i)));
      if (start.compareTo(BigInteger.valueOf(hi)) > 0) {
        break; // fewer values than ranges × width: the last ranges would be empty
      }
      starts.add(start.longValueExact());
    }
    this.lowers = starts.stream().mapToLong(Long::longValue).toArray();
    this.max = hi;
  }

  int size() {
    return lowers.length;
  }

  K lowerOf(int range) {
    return value(lowers[range]);
  }

  K upperOf(int range) {
    return value(range + 1 < lowers.length ? lowers[range + 1] - 1 : max);
  }

  /** The range holding {@code value}, which lies in [min, max]. */
  int rangeOf(K value) {
    int found = Arrays.binarySearch(lowers, ((Number) value).longValue());
    return found >= 0 ? found : -found - 2;
  }

  /** {@code interval}, within [min, max], cut at the range bounds it crosses, in order. */
  List<Part<K>> split(Interval<K> interval) {
    int first = rangeOf(interval.lo());
    int last = rangeOf(interval.hi());
    List<Part<K>> parts = new ArrayList<>(last - first + 1);
    for (int range = first; range <= last; range++) {
      K lower = range == first ? interval.lo() : lowerOf(range);
      K upper = range == last ? interval.hi() : upperOf(range);
      parts.add(new Part<>(range, Interval.of(lower, upper)));
    }
    return parts;
  }

  private K value(long value) {
    return type.javaType().cast(type == DomainType.INTEGER ? (Object) (int) value : value);
  }
}
