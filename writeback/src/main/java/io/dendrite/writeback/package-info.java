/**
 * The write-back policy: buffer writes in the cache tier, pinned and replicated, and drain them to a {@link
 * io.dendrite.writeback.store.DataStore} in the background. Three engines, each in its package, share the settings
 * of {@link io.dendrite.writeback.engine.EngineBuilder} and report {@link io.dendrite.writeback.engine.WriteBackMetrics}, which
 * {@link io.dendrite.writeback.WriteBackMeters} publishes to Micrometer:
 *
 * <ul>
 *   <li>{@link io.dendrite.writeback.document.DocumentWriteBack}: per document (the thesis' Design 1);
 *   <li>{@link io.dendrite.writeback.session.SessionWriteBack}: per session for SQL (Design 2);
 *   <li>{@link io.dendrite.writeback.range.RangeWriteBack}: a Dendrite's range results on top of a per-document
 *       engine (BuWrInT).
 * </ul>
 *
 * <p>Changes are written in {@link io.dendrite.writeback.change}'s vocabulary. The plumbing the engines share lives in
 * {@code io.dendrite.writeback.kernel}, which the module does not export.
 */
package io.dendrite.writeback;
