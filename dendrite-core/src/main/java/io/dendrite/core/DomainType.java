package io.dendrite.core;

import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.LocalDate;
import java.time.format.DateTimeParseException;
import java.util.function.Function;

/**
 * The type of the attribute a range predicate ranges over, with the text form its bounds take in
 * cache keys and log records. The text form is free of spaces and colons, so it can stand inside a
 * memcached key and between the fields of a log record.
 *
 * @param <K> the Java type of a bound
 */
public final class DomainType<K extends Comparable<? super K>> {

  /** 32-bit integers. */
  public static final DomainType<Integer> INTEGER =
      new DomainType<>("integer", Integer.class, String::valueOf, Integer::valueOf);

  /** 64-bit integers. */
  public static final DomainType<Long> LONG =
      new DomainType<>("long", Long.class, String::valueOf, Long::valueOf);

  /** Strings, ordered by {@link String#compareTo}. */
  public static final DomainType<String> TEXT =
      new DomainType<>(
          "text",
          String.class,
          value -> URLEncoder.encode(value, StandardCharsets.UTF_8).replace("*", "%2A"),
          text -> URLDecoder.decode(text, StandardCharsets.UTF_8));

  /** Double-precision reals; NaN is refused as a bound. */
  public static final DomainType<Double> REAL =
      new DomainType<>("real", Double.class, value -> Double.toHexString(value), Double::valueOf);

  /** Calendar dates. */
  public static final DomainType<LocalDate> DATE =
      new DomainType<>("date", LocalDate.class, LocalDate::toString, LocalDate::parse);

  private final String name;
  private final Class<K> javaType;
  private final Function<K, String> format;
  private final Function<String, K> parse;

  private DomainType(
      String name, Class<K> javaType, Function<K, String> format, Function<String, K> parse) {
    this.name = name;
    this.javaType = javaType;
    this.format = format;
    this.parse = parse;
  }

  /** The type's name: integer, long, text, real or date. */
  public String name() {
    return name;
  }

  /** The Java class of a bound. */
  public Class<K> javaType() {
    return javaType;
  }

  /**
   * Checks that {@code value} is a usable bound of this type.
   *
   * @param argument the argument's name, for the message
   * @throws IllegalArgumentException naming the argument if the value is null, of another type, or NaN
   */
  public K cast(String argument, Object value) {
    if (value == null) {
      throw new IllegalArgumentException(argument + " must not be null");
    }
    if (!javaType.isInstance(value)) {
      throw new IllegalArgumentException(
          argument
              + " must be a "
              + name
              + " ("
              + javaType.getSimpleName()
              + "), got "
              + value.getClass().getSimpleName()
              + " "
              + value);
    }
    if (value instanceof Double real && real.isNaN()) {
      throw new IllegalArgumentException(argument + " must not be NaN");
    }
    return javaType.cast(value);
  }

  /**
   * The interval [{@code lowerBound}, {@code upperBound}] of a range predicate, checked: both bounds usable ({@link
   * #cast}), in order, and within [{@code min}, {@code max}] where those are given (null: unbounded).
   *
   * @throws IllegalArgumentException naming the bound that is wrong
   */
  public Interval<K> interval(Object lowerBound, Object upperBound, K min, K max) {
    K lower = cast("lowerBound", lowerBound);
    K upper = cast("upperBound", upperBound);
    if (lower.compareTo(upper) > 0) {
      throw new IllegalArgumentException(
          "lowerBound " + lower + " is greater than upperBound " + upper);
    }
    if (min != null && lower.compareTo(min) < 0) {
      throw new IllegalArgumentException(
          "lowerBound " + lower + " is below the domain's minimum " + min);
    }
    if (max != null && upper.compareTo(max) > 0) {
      throw new IllegalArgumentException(
          "upperBound " + upper + " is above the domain's maximum " + max);
    }
    return Interval.of(lower, upper);
  }

  /** The bound's text form: no spaces, no colons. */
  public String format(K value) {
    return format.apply(value);
  }

  /**
   * Reads a bound's text form back.
   *
   * @throws IllegalArgumentException if {@code text} is not a text form of this type
   */
  public K parse(String text) {
    try {
      return parse.apply(text);
    } catch (NumberFormatException | DateTimeParseException e) {
      throw new IllegalArgumentException("not a " + name + " bound: " + text, e);
    }
  }

  @Override
  public String toString() {
    return name;
  }
}
