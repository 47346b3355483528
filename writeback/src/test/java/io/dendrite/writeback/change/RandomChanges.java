package io.dendrite.writeback.change;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;

/**
 * Random documents and change sequences for property tests. Each field has a kind (counter, real, array, text)
 * and only receives changes valid for that kind, so sequences never fail on a type conflict; small value pools
 * make collisions (the same value added and pulled, the same field set twice) frequent. Counters hold integers
 * and decimals; the real field holds Doubles and is only incremented by Doubles (merging other increments into
 * a Double field is the one documented inexact compaction).
 */
final class RandomChanges {
  private static final List<String> COUNTERS = List.of("c1", "c2");
  private static final String REAL = "r";
  private static final List<String> ARRAYS = List.of("a1", "a2");
  private static final List<String> TEXTS = List.of("s");
  private static final List<Object> ELEMENTS = List.of("x", "y", 1, 2L, Map.of("k", "v"));

  private final Random random;

  RandomChanges(long seed) {
    this.random = new Random(seed);
  }

  Optional<Map<String, Object>> document() {
    if (random.nextInt(5) == 0) {
      return Optional.empty();
    }
    return Optional.of(fields());
  }

  Map<String, Object> fields() {
    Map<String, Object> fields = new LinkedHashMap<>();
    COUNTERS.forEach(field -> maybePut(fields, field, counter()));
    maybePut(fields, REAL, real());
    ARRAYS.forEach(field -> maybePut(fields, field, array()));
    TEXTS.forEach(field -> maybePut(fields, field, "t" + random.nextInt(3)));
    return fields;
  }

  ChangeSequence sequence(int maxLength) {
    List<Change> changes = new ArrayList<>();
    int length = random.nextInt(maxLength + 1);
    for (int i = 0; i < length; i++) {
      changes.add(change());
    }
    return new ChangeSequence(changes);
  }

  /** A sequence of idempotent changes only. */
  ChangeSequence idempotentSequence(int maxLength) {
    List<Change> changes = new ArrayList<>();
    while (changes.size() < random.nextInt(maxLength + 1)) {
      Change change = change();
      if (change.isIdempotent()) {
        changes.add(change);
      }
    }
    return new ChangeSequence(changes);
  }

  Change change() {
    int kind = random.nextInt(20);
    if (kind == 0) {
      return Change.insert(fields());
    }
    if (kind == 1) {
      return Change.delete();
    }
    if (kind < 8) {
      boolean counter = random.nextInt(3) != 0;
      String field = counter ? pick(COUNTERS) : REAL;
      switch (random.nextInt(4)) {
        case 0:
          return Change.set(field, counter ? counter() : real());
        case 1:
          return Change.unset(field);
        default:
          return Change.inc(field, counter ? counter() : real());
      }
    }
    if (kind < 18) {
      String field = pick(ARRAYS);
      switch (random.nextInt(6)) {
        case 0:
          return random.nextBoolean() ? Change.set(field, array()) : Change.unset(field);
        case 1:
          return Change.push(field, pick(ELEMENTS));
        case 2:
        case 3:
          return Change.addToSet(field, pick(ELEMENTS));
        default:
          return Change.pull(field, pick(ELEMENTS));
      }
    }
    return random.nextBoolean()
        ? Change.set(pick(TEXTS), "t" + random.nextInt(3))
        : Change.unset(pick(TEXTS));
  }

  private Number counter() {
    switch (random.nextInt(4)) {
      case 0:
      case 1:
        return random.nextInt(7) - 3;
      case 2:
        return (long) random.nextInt(7) - 3;
      default:
        return BigDecimal.valueOf(random.nextInt(7) - 3, 1);
    }
  }

  private Double real() {
    return (random.nextInt(7) - 3) * 0.1;
  }

  private List<Object> array() {
    List<Object> array = new ArrayList<>();
    int length = random.nextInt(4);
    for (int i = 0; i < length; i++) {
      array.add(pick(ELEMENTS));
    }
    return array;
  }

  private void maybePut(Map<String, Object> fields, String field, Object value) {
    if (random.nextInt(3) != 0) {
      fields.put(field, value);
    }
  }

  private <T> T pick(List<T> values) {
    return values.get(random.nextInt(values.size()));
  }
}
