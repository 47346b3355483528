package io.dendrite.spring.boot;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;

/**
 * Closes every Dendrite in Spring's shutdown, in a phase of its own after the web server's graceful shutdown and stop
 * (phases {@code DEFAULT_PHASE - 1024} and {@code - 2048}), so that no request writes while write-back drains: each
 * Dendrite's write-back drains what it buffered for up to {@code dendrite.write-back.drain-on-close} and hands the
 * rest over (pinned and listed in the cache tier for the next owner), and each logs the counts. The cache client and
 * the store are beans, destroyed after this phase.
 */
final class DendriteShutdown implements SmartLifecycle {
  /** Below the web server's phases, so it stops after them. */
  static final int PHASE = SmartLifecycle.DEFAULT_PHASE - 4096;

  private static final Logger log = LoggerFactory.getLogger(DendriteShutdown.class);

  private final Dendrites dendrites;
  private volatile boolean running;

  DendriteShutdown(Dendrites dendrites) {
    this.dendrites = dendrites;
  }

  @Override
  public void start() {
    running = true;
  }

  @Override
  public void stop() {
    running = false;
    long open = dendrites.built().stream().filter(ManagedDendrite::isOpen).count();
    if (open == 0) {
      return;
    }
    log.info("Closing {} Dendrites: draining or handing over their buffered writes", open);
    long start = System.nanoTime();
    dendrites.closeAll();
    log.info("Closed {} Dendrites in {} ms", open, (System.nanoTime() - start) / 1_000_000);
  }

  @Override
  public boolean isRunning() {
    return running;
  }

  @Override
  public int getPhase() {
    return PHASE;
  }
}
