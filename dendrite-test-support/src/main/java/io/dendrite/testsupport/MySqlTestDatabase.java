package io.dendrite.testsupport;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;

/**
 * A MySQL/MariaDB database created for one test and dropped after it.
 *
 * @param jdbcUrl a JDBC URL of this database, credentials included
 * @param name the database (schema) name
 */
public record MySqlTestDatabase(String jdbcUrl, String name) {

  /** Opens a new connection to this database; the caller closes it. */
  public Connection connect() throws SQLException {
    return DriverManager.getConnection(jdbcUrl);
  }
}
