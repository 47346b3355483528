/**
 * The write-back policy at document granularity: {@link io.dendrite.writeback.WriteBack} buffers writes in the
 * cache tier, pinned and replicated, drains them to a {@link io.dendrite.writeback.store.DataStore} in the
 * background, and applies a document's buffered write before a read of it misses to the store.
 */
package io.dendrite.writeback;
