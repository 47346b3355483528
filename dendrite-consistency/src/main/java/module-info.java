/** The stale-read checker: histories of reads and writes, and the check that finds a read of a stale value. */
module io.dendrite.consistency {
  exports io.dendrite.consistency;
}
