package io.dendrite.core;

import java.sql.Connection;
import java.sql.SQLException;

/**
 * A {@link WriteCommand} whose statements run on a connection Dendrite hands it, in a transaction Dendrite commits:
 * run by a range's owner, the transaction is fenced ({@link SqlFence#check}, last before the commit), so a former
 * owner's statement that reaches the database after a takeover is rolled back instead of applied. Run the command's
 * statements on {@code connection} only, and do not commit or roll back.
 *
 * @param <K> the attribute's type
 * @param <R> the row type
 * @param <C> the command
 */
public interface SqlWriteCommand<K extends Comparable<? super K>, R, C>
    extends WriteCommand<K, R, C> {

  /** The database's connections and fences: the same {@link SqlFence} the owners raise ({@code storeFence}). */
  SqlFence fence();

  /** Runs the command's statements on {@code connection}, inside the transaction Dendrite commits. */
  void apply(C command, Connection connection) throws SQLException;

  /** Applies the command in a transaction of its own, unfenced (a Dendrite of one process). */
  @Override
  default void apply(C command) {
    fence().inTransaction("apply a " + type().getSimpleName(), c -> apply(command, c), null);
  }

  /** Applies the command in a transaction that commits only while {@code owner} is not fenced out. */
  @Override
  default void apply(C command, FenceToken owner) {
    fence().inTransaction("apply a " + type().getSimpleName(), c -> apply(command, c), owner);
  }
}
