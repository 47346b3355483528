/**
 * Write-back: writes buffered in the cache tier, pinned and replicated, drained to MySQL or MongoDB. Exports the
 * engines' packages (per document and per range, per session), what every engine shows its users (settings, metrics,
 * failures), the change vocabulary and the data-store interface (its implementations are modules of their own:
 * {@code io.dendrite.store.mysql}, {@code io.dendrite.store.mongodb}); the engine kernel ({@code
 * io.dendrite.writeback.kernel}) is exported to TARDIS only.
 */
module io.dendrite.writeback {
  requires transitive io.dendrite.core;
  // Optional, as in the pom: only WriteBackMeters uses it, and an application without
  // Micrometer must still resolve this module.
  requires static micrometer.core;
  requires com.github.benmanes.caffeine;
  // RetryingStore tells a database's timeout from its refusal by SQLTimeoutException.
  requires java.sql;
  // Changes are encoded as BSON (the encoding library, not the MongoDB driver).
  requires org.mongodb.bson;
  requires org.slf4j;

  exports io.dendrite.writeback;
  exports io.dendrite.writeback.change;
  exports io.dendrite.writeback.document;
  exports io.dendrite.writeback.engine;
  exports io.dendrite.writeback.session;
  exports io.dendrite.writeback.store;
  // TARDIS buffers the writes the data store failed to take with write-back's machinery, under keys
  // of its own, and indexes its range writes with it (see the package's contract).
  exports io.dendrite.writeback.kernel to
      io.dendrite.tardis;
}
