package io.dendrite.spring.boot;

import java.util.Optional;

/**
 * What one Dendrite keeps buffered in the cache tier, read for the health indicator and the shutdown's log: its
 * write-back ({@code WriteBack}) or its TARDIS ({@code TardisRanges}), behind one view so that neither module needs to
 * be on the class path of an application that uses the other.
 */
interface BufferedWrites {
  /** {@code write-back} or {@code tardis}. */
  String kind();

  /** The write-back or TARDIS object the Dendrite was built with, for its meters. */
  Object source();

  /** Now; reads the cache servers. */
  Backlog now();

  /** {@link #now()}, read just before the Dendrite closes: what {@link #afterClose()} counts from. */
  default Backlog beforeClose() {
    return now();
  }

  /**
   * After the Dendrite closed: what its engines drained in all, and left buffered for the next owner ({@link
   * Backlog#pending()}); empty when that cannot be told.
   */
  Optional<Backlog> afterClose();
}
