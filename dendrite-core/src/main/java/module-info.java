/**
 * Dendrite: cached range predicates kept consistent with I/Q leases. Exports the API; the interval trees and leases
 * ({@code io.dendrite.core.interval}) only to write-back, which indexes buffered writes with them, and the predicate
 * log ({@code io.dendrite.core.log}) not at all.
 */
module io.dendrite.core {
  requires transitive io.dendrite.iq.client;
  requires org.slf4j;
  requires com.github.benmanes.caffeine;
  requires static micrometer.core;
  requires transitive java.sql;

  exports io.dendrite.core;
  exports io.dendrite.core.interval to
      io.dendrite.writeback;
}
