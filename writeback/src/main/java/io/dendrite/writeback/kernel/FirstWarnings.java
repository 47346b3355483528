package io.dendrite.writeback.kernel;

import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;

/**
 * Logs the first few warnings of one kind and drops the rest: for a line no engine wrote, which every round reads
 * and skips again until a rewrite drops it, and which would otherwise fill the log.
 */
public final class FirstWarnings {
  private final Logger log;
  private final int limit;
  private final AtomicInteger given = new AtomicInteger();

  public FirstWarnings(Logger log, int limit) {
    this.log = log;
    this.limit = limit;
  }

  /** {@link Logger#warn(String, Object...)}, unless {@code limit} warnings were logged already. */
  public void warn(String format, Object... arguments) {
    if (given.getAndIncrement() < limit) {
      log.warn(format, arguments);
    }
  }
}
