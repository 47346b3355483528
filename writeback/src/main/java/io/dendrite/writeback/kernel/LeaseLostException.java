package io.dendrite.writeback.kernel;

import java.util.function.Supplier;

/**
 * A lease expired, or was lost with its server, before a step that needed it; the servers refused the step, so it
 * was not taken. What was done before it is either nothing or safe to do again (an idempotent form persisted or
 * applied, a session applied exactly once), so the whole step can start over under a fresh lease: {@link
 * #untilKept}.
 */
public final class LeaseLostException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public LeaseLostException(String key) {
    super("lost the lease " + key);
  }

  /** Runs {@code step} again for as long as it ends in a lost lease. */
  public static <T> T untilKept(Supplier<T> step) {
    while (true) {
      try {
        return step.get();
      } catch (LeaseLostException lost) {
        // Another holder took over meanwhile, or the lease ran out: start again under a fresh one.
      }
    }
  }

  /** {@link #untilKept(Supplier)} for a step without a result. */
  public static void untilKept(Runnable step) {
    untilKept(
        () -> {
          step.run();
          return null;
        });
  }
}
