/**
 * The write-back policy. {@link io.dendrite.writeback.WriteBack} works at document granularity (the thesis' Design
 * 1): it buffers writes in the cache tier, pinned and replicated, drains them to a {@link
 * io.dendrite.writeback.store.DataStore} in the background, and applies a document's buffered write before a read
 * of it misses to the store. {@link io.dendrite.writeback.SessionWriteBack} works at session granularity for SQL
 * (Design 2): a multi-statement transaction is one buffered session, applied in commit order from its queue,
 * exactly once. {@link io.dendrite.writeback.WriteBackMeters} publishes either engine's metrics to Micrometer.
 */
package io.dendrite.writeback;
