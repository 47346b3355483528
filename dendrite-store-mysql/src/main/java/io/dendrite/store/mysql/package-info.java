/**
 * {@link io.dendrite.store.mysql.MySqlStore}: a {@link io.dendrite.writeback.store.DataStore} and {@link
 * io.dendrite.writeback.store.SessionStore} over MySQL or MariaDB, and a {@link io.dendrite.core.StoreFence} in the
 * same database.
 */
package io.dendrite.store.mysql;
