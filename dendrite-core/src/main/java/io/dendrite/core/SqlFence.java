package io.dendrite.core;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Objects;
import javax.sql.DataSource;

/**
 * Ranges' fences in a MySQL or MariaDB table, {@code dendrite_fences(fence VARCHAR(255) PRIMARY KEY, epoch BIGINT)},
 * and the transactions that respect them.
 *
 * <p>An owner's transaction runs its statements, then, last before {@code COMMIT}, reads its range's fence row with
 * {@code LOCK IN SHARE MODE} ({@link #check}): a fence above its epoch rolls the transaction back ({@link
 * StoreFencedOutException}). A new owner raises the row with an update ({@link #raise}), which waits for the shared
 * locks of transactions that passed the check to end. So every former owner's transaction either committed before
 * the raise returned — and the new owner, which reads only after it, sees its changes — or is refused. A missing row
 * (no owner raised the fence yet) lets statements through; a missing row's shared lock (a gap lock) still makes the
 * first raise wait for them.
 *
 * <p>Checking last keeps the lock short: an owner paused before its check holds only its rows' locks, and the new
 * owner takes the range over meanwhile; one paused between its check and its commit makes the new owner's raise
 * wait until it resumes or its connection ends (then the raise is retried).
 */
public final class SqlFence implements StoreFence {
  /** The fence table's name. */
  public static final String TABLE = "dendrite_fences";

  private final DataSource connections;
  private volatile boolean tableExists;

  private SqlFence(DataSource connections) {
    this.connections = connections;
  }

  /** The fences of the database {@code connections} connect to, and transactions on it. */
  public static SqlFence of(DataSource connections) {
    return new SqlFence(Objects.requireNonNull(connections, "connections"));
  }

  @Override
  public void raise(Range range) {
    inTransaction(
        "raise " + range.fence() + " to " + range.epoch(),
        connection -> raise(connection, range.fence(), range.epoch()),
        null);
  }

  /** The unit of work of one transaction. */
  @FunctionalInterface
  public interface SqlWork {
    void run(Connection connection) throws SQLException;
  }

  /**
   * Runs {@code work} in one transaction on a connection of this fence's data source; with an {@code owner}, checks
   * its fence last, before the commit, and rolls back when the fence stands above the owner's epoch.
   *
   * @throws StoreFencedOutException when the fence refused the transaction (nothing of it applied)
   * @throws DataStoreException when the database failed it
   */
  public void inTransaction(String what, SqlWork work, FenceToken owner) {
    try (Connection connection = connections.getConnection()) {
      ensureTable(connection);
      boolean autoCommit = connection.getAutoCommit();
      connection.setAutoCommit(false);
      try {
        work.run(connection);
        if (owner != null) {
          check(connection, owner);
        }
        connection.commit();
      } catch (SQLException | RuntimeException e) {
        try {
          connection.rollback();
        } catch (SQLException rollbackFailure) {
          e.addSuppressed(rollbackFailure);
        }
        throw e;
      } finally {
        connection.setAutoCommit(autoCommit);
      }
    } catch (SQLException e) {
      throw new DataStoreException("MySQL failed to " + what + ": " + e.getMessage(), e);
    }
  }

  /** Creates the fence table if it does not exist (DDL commits on its own in MySQL: call it outside a transaction). */
  public void ensureTable(Connection connection) throws SQLException {
    if (tableExists) {
      return;
    }
    try (Statement statement = connection.createStatement()) {
      statement.execute(
          "CREATE TABLE IF NOT EXISTS `"
              + TABLE
              + "` (fence VARCHAR(255) NOT NULL PRIMARY KEY, epoch BIGINT NOT NULL)");
    }
    tableExists = true;
  }

  /**
   * Refuses the caller's transaction when {@code owner}'s fence stands above its epoch: a locking read, so the fence
   * cannot rise until the transaction ends. Run it as the transaction's last statement.
   *
   * @throws StoreFencedOutException when the fence is above the owner's epoch (the caller rolls back)
   */
  public static void check(Connection connection, FenceToken owner) throws SQLException {
    try (PreparedStatement select =
        connection.prepareStatement(
            "SELECT epoch FROM `" + TABLE + "` WHERE fence = ? LOCK IN SHARE MODE")) {
      select.setString(1, owner.fence());
      try (ResultSet row = select.executeQuery()) {
        if (row.next() && row.getLong(1) > owner.epoch()) {
          throw new StoreFencedOutException(owner, row.getLong(1));
        }
      }
    }
  }

  /** Raises {@code fence} to {@code epoch} in the caller's transaction, waiting for the checks that hold it shared. */
  public void raise(Connection connection, String fence, long epoch) throws SQLException {
    try (PreparedStatement upsert =
        connection.prepareStatement(
            "INSERT INTO `"
                + TABLE
                + "` (fence, epoch) VALUES (?, ?)"
                + " ON DUPLICATE KEY UPDATE epoch = GREATEST(epoch, VALUES(epoch))")) {
      upsert.setString(1, fence);
      upsert.setLong(2, epoch);
      upsert.executeUpdate();
    }
  }
}
