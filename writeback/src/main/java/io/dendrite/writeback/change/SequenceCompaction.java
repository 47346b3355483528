package io.dendrite.writeback.change;

import io.dendrite.writeback.change.Change.AddToSet;
import io.dendrite.writeback.change.Change.Delete;
import io.dendrite.writeback.change.Change.FieldChange;
import io.dendrite.writeback.change.Change.Inc;
import io.dendrite.writeback.change.Change.Insert;
import io.dendrite.writeback.change.Change.Pull;
import io.dendrite.writeback.change.Change.Push;
import io.dendrite.writeback.change.Change.Set;
import io.dendrite.writeback.change.Change.Unset;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Rewrites the changes to one document into a shorter sequence with exactly the same effect on every starting
 * document (present or absent, whatever its fields hold). Only rules that are exact are used:
 *
 * <ol>
 *   <li>The last {@link Insert} or {@link Delete} makes everything before it irrelevant. Field changes after a
 *       Delete do nothing (updates of an absent document); field changes after an Insert are folded into its
 *       fields.
 *   <li>Field changes on different fields commute, so each field's changes are gathered into one run, fields in
 *       order of first appearance.
 *   <li>In a field's run, a {@link Set} or {@link Unset} makes the field a known constant: earlier changes are
 *       dropped and later ones are folded into the constant, evaluated in their original order.
 *   <li>Adjacent increments merge ({@code $inc 2; $inc 3 = $inc 5}) unless one is a Double, whose additions do
 *       not associate. Exact when the field holds an integer or a decimal, or is missing (counters); on a field
 *       holding a Double, {@code x + 2 + 3} and {@code x + 5} may differ in the last bits. Integer increments that
 *       overflow in between may leave an Integer where the original left an equal Long.
 *   <li>A repeated {@link AddToSet} or {@link Pull} of the same value is dropped (both are idempotent).
 *   <li>{@code $addToSet v} or {@code $push v} immediately followed by {@code $pull v} is just {@code $pull v}
 *       when an earlier {@code $addToSet}/{@code $push} in the run guarantees the field is an array. Without that
 *       guarantee the pair is kept: on a missing field it leaves {@code []}, where {@code $pull} alone leaves the
 *       field missing, and if {@code v} was already present the pair removes it, so "cancel both" is never exact.
 * </ol>
 */
final class SequenceCompaction {
  private SequenceCompaction() {}

  static List<Change> compact(List<Change> changes) {
    int lastWhole = lastWholeDocumentChange(changes);
    if (lastWhole >= 0) {
      return List.of(
          foldIntoWholeDocumentChange(
              changes.get(lastWhole), changes.subList(lastWhole + 1, changes.size())));
    }
    Map<String, List<FieldChange>> runs = new LinkedHashMap<>();
    for (Change change : changes) {
      FieldChange fieldChange = (FieldChange) change;
      append(runs.computeIfAbsent(fieldChange.field(), field -> new ArrayList<>()), fieldChange);
    }
    List<Change> compacted = new ArrayList<>();
    runs.values().forEach(compacted::addAll);
    return compacted;
  }

  private static int lastWholeDocumentChange(List<Change> changes) {
    for (int i = changes.size() - 1; i >= 0; i--) {
      if (!(changes.get(i) instanceof FieldChange)) {
        return i;
      }
    }
    return -1;
  }

  private static Change foldIntoWholeDocumentChange(Change whole, List<Change> fieldChanges) {
    if (whole instanceof Delete) {
      return whole;
    }
    Map<String, Object> fields = new LinkedHashMap<>(((Insert) whole).fields());
    fieldChanges.forEach(change -> ((FieldChange) change).applyTo(fields));
    return new Insert(fields);
  }

  private static void append(List<FieldChange> run, FieldChange change) {
    if (change instanceof Set || change instanceof Unset) {
      run.clear();
      run.add(change);
      return;
    }
    if (!run.isEmpty() && isConstant(run.get(0))) {
      run.set(0, foldIntoConstant(run.get(0), change));
      return;
    }
    FieldChange last = run.isEmpty() ? null : run.get(run.size() - 1);
    if (last instanceof Inc previous && change instanceof Inc next && previous.mergesWith(next)) {
      run.set(run.size() - 1, new Inc(next.field(), Inc.add(previous.amount(), next.amount())));
      return;
    }
    if ((change instanceof AddToSet || change instanceof Pull) && change.equals(last)) {
      return;
    }
    if (change instanceof Pull pull
        && addsValue(last, pull.value())
        && hasArrayGuaranteeBefore(run, run.size() - 1)) {
      run.remove(run.size() - 1);
      append(run, change);
      return;
    }
    run.add(change);
  }

  private static boolean isConstant(FieldChange change) {
    return change instanceof Set || change instanceof Unset;
  }

  private static FieldChange foldIntoConstant(FieldChange constant, FieldChange change) {
    Map<String, Object> fields = new LinkedHashMap<>();
    constant.applyTo(fields);
    change.applyTo(fields);
    String field = constant.field();
    return fields.containsKey(field) ? new Set(field, fields.get(field)) : new Unset(field);
  }

  private static boolean addsValue(FieldChange change, Object value) {
    return change instanceof AddToSet add && Objects.equals(add.value(), value)
        || change instanceof Push push && Objects.equals(push.value(), value);
  }

  /** Whether a change before {@code index} in the run leaves the field an array (or has already failed). */
  private static boolean hasArrayGuaranteeBefore(List<FieldChange> run, int index) {
    for (int i = 0; i < index; i++) {
      if (run.get(i) instanceof AddToSet || run.get(i) instanceof Push) {
        return true;
      }
    }
    return false;
  }
}
