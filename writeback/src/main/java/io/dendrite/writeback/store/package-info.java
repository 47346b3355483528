/**
 * What a data store is to write-back: {@link io.dendrite.writeback.store.DataStore}, one small interface that applies
 * {@link io.dendrite.writeback.change.ChangeSequence change sequences} and reads documents and rows back, and
 * {@link io.dendrite.writeback.store.SessionStore}, a store that applies a session's changes exactly once. The
 * implementations are artifacts of their own, so an application gets only its database's driver: {@code
 * dendrite-store-mysql} ({@code io.dendrite.store.mysql.MySqlStore}) and {@code dendrite-store-mongodb} ({@code
 * io.dendrite.store.mongodb.MongoStore}).
 */
package io.dendrite.writeback.store;
