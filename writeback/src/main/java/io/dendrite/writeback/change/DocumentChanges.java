package io.dendrite.writeback.change;

import java.util.List;

/**
 * The change of one write to documents or rows: one {@link EntityChanges}, or several applied in order (a range
 * update that touches many rows). What a range write-back buffers for one Dendrite write, and so the change type of
 * a write-back Dendrite.
 */
public sealed interface DocumentChanges permits EntityChanges, DocumentChanges.Several {

  /** Each document's changes, in the order they apply. */
  List<EntityChanges> each();

  /**
   * The changes of several documents as one write.
   *
   * @throws IllegalArgumentException when {@code changes} is empty or holds a null: a write must change something
   */
  static DocumentChanges of(List<EntityChanges> changes) {
    return changes.size() == 1 && changes.get(0) != null ? changes.get(0) : new Several(changes);
  }

  /** Several documents' changes, in order. */
  record Several(List<EntityChanges> each) implements DocumentChanges {
    /** @throws IllegalArgumentException when {@code each} is empty or holds a null */
    public Several {
      if (each == null || each.isEmpty()) {
        throw new IllegalArgumentException(
            "the list of EntityChanges is empty: a write must change something");
      }
      for (EntityChanges one : each) { // not contains(null): List.of(...) throws on that
        if (one == null) {
          throw new IllegalArgumentException("a write's EntityChanges must not be null: " + each);
        }
      }
      each = List.copyOf(each);
    }
  }
}
