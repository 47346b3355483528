package io.dendrite.writeback.change;

import io.dendrite.writeback.change.Change.FieldChange;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * The changes buffered for one document or row, in the order the writes were serialized: the value of a
 * write-back buffered write.
 *
 * <h2>Idempotence and the conversion before apply</h2>
 *
 * A buffered write is applied by some thread that may crash after the data store applied it but before the
 * buffered write was deleted; the next thread then applies it again. That is harmless only for an idempotent
 * sequence, so a non-idempotent one is converted first (the thesis' Design 1, Algorithm 2):
 *
 * <ol>
 *   <li>holding the buffered write's exclusive lease, read the document's current state from the data store;
 *   <li>{@code converted = sequence.toIdempotent(current)}: the sequence is compacted, applied in memory to
 *       {@code current}, and each field it touches becomes a {@code $set} of its resulting value (or an
 *       {@code $unset});
 *   <li><em>persist {@code converted} in place of the buffered sequence</em>, then apply it, then delete it.
 * </ol>
 *
 * Why this applies the writes exactly once in effect: (a) the conversion reads the state the original would have
 * been applied to, because every write to a document with a buffered write goes through that buffered write under
 * its lease, and a buffered write is only ever applied whole and in its converted form, never partially in its
 * original one; (b) a crash before step 3 persists nothing and applied nothing: the original is still there and
 * is converted again later; (c) a crash after the replacement leaves {@code converted}, whose changes set distinct
 * fields to constants, so applying it once, twice, or after a partial application yields the same document, and
 * {@code toIdempotent} returns an idempotent sequence unchanged rather than recomputing it from a state that may
 * already include it; (d) writes buffered after the conversion are appended to {@code converted}; compaction folds
 * them into its constants, and the fields it does not touch were not changed by applying it. Persisting before
 * applying is the crux: applying the original and converting afterwards would double-count on a crash.
 */
public record ChangeSequence(List<Change> changes) {
  private static final ChangeSequence EMPTY = new ChangeSequence(List.of());

  /** @throws IllegalArgumentException when the list or one of its changes is null */
  public ChangeSequence {
    if (changes == null || changes.stream().anyMatch(Objects::isNull)) {
      throw new IllegalArgumentException("changes must be a list without nulls, got " + changes);
    }
    changes = List.copyOf(changes);
  }

  /** The sequence of these changes, in this order. */
  public static ChangeSequence of(Change... changes) {
    if (changes == null) {
      throw new IllegalArgumentException("changes must not be null");
    }
    return new ChangeSequence(Arrays.asList(changes));
  }

  /** The sequence that changes nothing. */
  public static ChangeSequence empty() {
    return EMPTY;
  }

  /** Whether this sequence changes nothing. */
  public boolean isEmpty() {
    return changes.isEmpty();
  }

  /** This sequence followed by {@code next}: how a newer write is buffered behind older ones. */
  public ChangeSequence then(Change next) {
    List<Change> longer = new ArrayList<>(changes);
    longer.add(next);
    return new ChangeSequence(longer);
  }

  /** This sequence followed by {@code next}. */
  public ChangeSequence then(ChangeSequence next) {
    List<Change> longer = new ArrayList<>(changes);
    longer.addAll(next.changes);
    return new ChangeSequence(longer);
  }

  /**
   * Whether applying the whole sequence twice, or after any prefix of it, leaves the document as applying it once
   * does. True when it is a single idempotent change, or idempotent field changes on pairwise distinct fields:
   * changes to distinct fields commute, so the sequence is a product of independent idempotent maps. A sequence
   * of idempotent changes that touches a field twice is conservatively reported non-idempotent.
   */
  public boolean isIdempotent() {
    if (changes.size() == 1) {
      return changes.get(0).isIdempotent();
    }
    Set<String> fields = new HashSet<>();
    for (Change change : changes) {
      if (!(change instanceof FieldChange fieldChange)
          || !change.isIdempotent()
          || !fields.add(fieldChange.field())) {
        return false;
      }
    }
    return true;
  }

  /** Whether every change is one a relational row can take (see {@link Change#isRowChange()}). */
  public boolean isRowChanges() {
    return changes.stream().allMatch(Change::isRowChange);
  }

  /**
   * A shorter sequence with exactly the same effect on any document, e.g. {@code $set a=1; $set a=2} becomes
   * {@code $set a=2}, {@code $inc a 2; $inc a 3} becomes {@code $inc a 5}, {@code insert; delete} becomes
   * {@code delete} and {@code delete; insert d} becomes {@code insert d}. See the rules in the package's
   * compaction class: each is exact, which is why {@code insert; delete} keeps a delete (the insert may have
   * replaced an existing document) and {@code $addToSet v; $pull v} is only shortened when that is exact.
   *
   * @throws IllegalArgumentException when folding meets a type conflict the data store would refuse too, e.g.
   *     {@code $set a="x"; $inc a 1}
   */
  public ChangeSequence compact() {
    return new ChangeSequence(SequenceCompaction.compact(changes));
  }

  /**
   * An idempotent sequence with the same effect as this one on {@code current}; see the class comment for how
   * it must be used. Returns the compacted sequence when that is already idempotent (no read was needed, but
   * callers may pass any state); otherwise {@code $set}/{@code $unset} of each touched field's resulting value,
   * or the empty sequence when the document is absent (field changes do nothing then).
   *
   * @param current the document's fields as the data store holds them now (key excluded), or empty if absent
   * @throws IllegalArgumentException when a change meets a value of the wrong type in {@code current}
   */
  public ChangeSequence toIdempotent(Optional<Map<String, Object>> current) {
    ChangeSequence compacted = compact();
    if (compacted.isIdempotent()) {
      return compacted;
    }
    // Not idempotent after compaction means field changes only: whole-document changes compact to
    // one change. The values come from the original changes, evaluated one by one as the store
    // would, not from the compacted ones, so that merged increments on a Double field cannot change
    // the last bits.
    Optional<Map<String, Object>> after = applyTo(current);
    if (after.isEmpty()) {
      return EMPTY;
    }
    Set<String> touched = new LinkedHashSet<>();
    compacted.changes.forEach(change -> touched.add(((FieldChange) change).field()));
    List<Change> constants = new ArrayList<>();
    for (String field : touched) {
      constants.add(
          after.get().containsKey(field)
              ? Change.set(field, after.get().get(field))
              : Change.unset(field));
    }
    return new ChangeSequence(constants);
  }

  /**
   * The in-memory semantics: the document after this sequence is applied to {@code document}. The data-store
   * adapters agree with it; compaction and conversion are defined by it.
   *
   * @param document the document's fields (key excluded), or empty if it does not exist
   * @return the resulting fields, unmodifiable, or empty if the document does not exist afterwards
   * @throws IllegalArgumentException when a change meets a value of the wrong type
   */
  public Optional<Map<String, Object>> applyTo(Optional<Map<String, Object>> document) {
    Map<String, Object> fields = document.<Map<String, Object>>map(LinkedHashMap::new).orElse(null);
    for (Change change : changes) {
      if (change instanceof Change.Insert insert) {
        fields = new LinkedHashMap<>(insert.fields());
      } else if (change instanceof Change.Delete) {
        fields = null;
      } else if (fields != null) {
        ((FieldChange) change).applyTo(fields);
      }
    }
    return Optional.ofNullable(fields).map(Collections::unmodifiableMap);
  }

  /**
   * Splits this sequence, in order, into steps a document store applies as one single-document atomic update
   * each: a lone insert or delete, or field changes on pairwise distinct fields (MongoDB refuses two operators on
   * one field in an update; SQL would evaluate two assignments to one column in an unspecified way). A compacted
   * idempotent sequence is always one step.
   */
  public List<ChangeSequence> steps() {
    List<ChangeSequence> steps = new ArrayList<>();
    List<Change> step = new ArrayList<>();
    Set<String> fields = new HashSet<>();
    for (Change change : changes) {
      boolean fitsStep =
          change instanceof FieldChange fieldChange && !fields.contains(fieldChange.field());
      if (!fitsStep && !step.isEmpty()) {
        steps.add(new ChangeSequence(step));
        step = new ArrayList<>();
        fields.clear();
      }
      step.add(change);
      if (change instanceof FieldChange fieldChange) {
        fields.add(fieldChange.field());
      } else {
        steps.add(new ChangeSequence(step));
        step = new ArrayList<>();
      }
    }
    if (!step.isEmpty()) {
      steps.add(new ChangeSequence(step));
    }
    return steps;
  }

  /** The stable binary encoding of this sequence (a BSON document, see {@link #decode(byte[])}). */
  public byte[] encode() {
    return ChangeCodec.encode(this);
  }

  /**
   * Decodes what {@link #encode()} produced, in this or any later version of Dendrite.
   *
   * @throws IllegalArgumentException when the bytes are not such an encoding
   */
  public static ChangeSequence decode(byte[] encoded) {
    return ChangeCodec.decode(encoded);
  }
}
