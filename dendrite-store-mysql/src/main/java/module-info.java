/**
 * The MySQL and MariaDB data store of write-back and TARDIS ({@code MySqlStore}). Its own module so that only an
 * application on MySQL gets JDBC, a connection pool and a driver.
 */
module io.dendrite.store.mysql {
  requires transitive io.dendrite.writeback;
  requires com.zaxxer.hikari;

  exports io.dendrite.store.mysql;
}
