/**
 * TARDIS: writes that MySQL or MongoDB fails to take are buffered in the cache tier (pinned, replicated, listed) and
 * applied once it answers again, so that a write-through or write-around application keeps accepting writes during
 * an outage and loses none. Chapter 4 of the write-back and TARDIS thesis; {@code docs/tardis.md}.
 */
module io.dendrite.tardis {
  requires transitive io.dendrite.writeback;
  // Optional, as in the pom: only TardisMeters uses it.
  requires static micrometer.core;
  requires org.slf4j;

  exports io.dendrite.tardis;
}
