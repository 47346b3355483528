/**
 * The write-back policy: buffer writes in the cache tier, pinned and replicated, and drain them to a {@link
 * io.dendrite.writeback.store.DataStore} in the background. Three engines share the settings of {@link
 * io.dendrite.writeback.engine.WriteBackEngineBuilder} and report {@link io.dendrite.writeback.engine.WriteBackMetrics},
 * which {@link io.dendrite.writeback.WriteBackMeters} publishes to Micrometer:
 *
 * <ul>
 *   <li>{@link io.dendrite.writeback.document.DocumentWriteBack}: per document (the thesis' Design 1);
 *   <li>{@link io.dendrite.writeback.document.RangeWriteBack}: a Dendrite's range results on top of a per-document
 *       engine (the CPR paper's BuWrInT);
 *   <li>{@link io.dendrite.writeback.session.SessionWriteBack}: per session for SQL (Design 2).
 * </ul>
 *
 * <p>The packages, each using only those listed before it (a test pins it): {@link io.dendrite.writeback.change}
 * (changes as data) and {@link io.dendrite.writeback.store} (the data stores they are applied to); {@link
 * io.dendrite.writeback.engine} (what every engine shows its users: settings, metrics, failures); {@code
 * io.dendrite.writeback.kernel} (the machinery the engines and TARDIS share, exported to TARDIS only); {@link
 * io.dendrite.writeback.document} and {@link io.dendrite.writeback.session} (the engines); and this one, over them
 * all.
 */
package io.dendrite.writeback;
