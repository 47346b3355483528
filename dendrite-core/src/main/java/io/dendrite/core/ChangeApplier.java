package io.dendrite.core;

/**
 * Applies a write's change (a DML command, a document update) to the data store.
 *
 * @param <C> the change type
 */
@FunctionalInterface
public interface ChangeApplier<C> {

  /** Applies {@code change}; an exception means it was not applied and reaches the caller of the write. */
  void apply(C change) throws Exception;
}
