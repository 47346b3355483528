package io.dendrite.writeback.change;

import java.util.List;

/**
 * The changes to apply to one document or row: the unit a data store applies and a buffered write holds.
 *
 * @param key the document or row
 * @param changes its changes, in order
 */
public record EntityChanges(EntityKey key, ChangeSequence changes) implements DocumentChanges {

  /** @throws IllegalArgumentException when the key or the changes are null */
  public EntityChanges {
    if (key == null || changes == null) {
      throw new IllegalArgumentException(
          "key and changes must not be null, got " + key + ", " + changes);
    }
  }

  /** This document's changes alone. */
  @Override
  public List<EntityChanges> each() {
    return List.of(this);
  }
}
