package io.dendrite.writeback.engine;

import java.time.Duration;

/**
 * The settings of a write-back engine ({@code DocumentWriteBack.Builder}, {@code SessionWriteBack.Builder}): those of
 * {@link EngineBuilder}, which TARDIS shares, and what the engine's {@code close()} does with what is still buffered.
 * A write-back engine's buffered writes are its normal state, so closing one drains them for a while before handing
 * the rest over; TARDIS's exist because the data store failed, and its {@code close()} leaves them to recovery at
 * once, so its builder has no such setting.
 *
 * @param <B> the engine's builder, returned by every setter
 */
public abstract class WriteBackEngineBuilder<B extends WriteBackEngineBuilder<B>>
    extends EngineBuilder<B> {

  /** For the engines' builders, in their engines' packages. */
  protected WriteBackEngineBuilder() {
    drainOnClose = Duration.ofSeconds(5);
  }

  /**
   * How long the engine's {@code close()} keeps draining what is still buffered (default 5 s) before it hands the
   * rest over: leaves it pinned and listed in the cache, where any engine over the same servers drains it. {@link
   * Duration#ZERO} hands everything over at once. Either way {@code close()} logs how many writes it drained and how
   * many it left buffered.
   */
  public B drainOnClose(Duration drainOnClose) {
    this.drainOnClose = notNegative("drainOnClose", drainOnClose);
    return self();
  }
}
