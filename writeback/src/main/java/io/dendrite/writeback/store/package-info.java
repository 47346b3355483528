/**
 * Data-store adapters: apply {@link io.dendrite.writeback.change.ChangeSequence change sequences} to MySQL or
 * MongoDB and read documents and rows back, behind one small interface,
 * {@link io.dendrite.writeback.store.DataStore}.
 */
package io.dendrite.writeback.store;
