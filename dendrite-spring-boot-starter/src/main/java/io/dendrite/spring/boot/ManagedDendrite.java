package io.dendrite.spring.boot;

import io.dendrite.core.Dendrite;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A Dendrite built by {@link Dendrites}: the Dendrite itself, and what it buffers. Closing it closes the Dendrite once
 * (the shutdown closes it in its phase; Spring's destroy of the bean later finds it closed) and logs what its
 * buffered writes became: drained into the database, or left buffered for the next owner.
 */
final class ManagedDendrite<K extends Comparable<? super K>, R> implements Dendrite<K, R> {
  private static final Logger log = LoggerFactory.getLogger(ManagedDendrite.class);

  private final Dendrite<K, R> dendrite;
  private final List<BufferedWrites> buffered;
  private final AtomicBoolean closed = new AtomicBoolean();

  ManagedDendrite(Dendrite<K, R> dendrite, List<BufferedWrites> buffered) {
    this.dendrite = dendrite;
    this.buffered = List.copyOf(buffered);
  }

  /** The Dendrite as its deployment built it ({@code RangeCache}, {@code PartitionedDendrite}), for its meters. */
  Dendrite<K, R> dendrite() {
    return dendrite;
  }

  List<BufferedWrites> buffered() {
    return buffered;
  }

  boolean isOpen() {
    return !closed.get();
  }

  @Override
  public List<R> get(String query, K lowerBound, K upperBound) {
    return dendrite.get(query, lowerBound, upperBound);
  }

  @Override
  public <C> void write(String command, K lowerBound, K upperBound, C argument) {
    dendrite.write(command, lowerBound, upperBound, argument);
  }

  @Override
  public String rangeName() {
    return dendrite.rangeName();
  }

  /** Closes the Dendrite the first time (its write-back drains for up to its drain-on-close), and logs the outcome. */
  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    List<Backlog> before = new ArrayList<>();
    for (BufferedWrites writes : buffered) {
      before.add(readOrNull(writes));
    }
    long start = System.nanoTime();
    dendrite.close();
    Duration took = Duration.ofNanos(System.nanoTime() - start);
    StringBuilder outcome = new StringBuilder();
    for (int i = 0; i < buffered.size(); i++) {
      outcome.append("; ").append(outcome(buffered.get(i), before.get(i)));
    }
    log.info("Dendrite {} closed in {} ms{}", rangeName(), took.toMillis(), outcome);
  }

  private static Backlog readOrNull(BufferedWrites writes) {
    try {
      return writes.beforeClose();
    } catch (RuntimeException unreadable) {
      return null;
    }
  }

  private static String outcome(BufferedWrites writes, Backlog before) {
    String had =
        before == null
            ? writes.kind() + " (its buffered writes could not be counted before closing)"
            : writes.kind()
                + (before.mode() == null ? "" : " in mode " + before.mode())
                + " had "
                + before.pending()
                + " buffered writes"
                + (before.pending() == 0 ? "" : " (oldest " + before.oldest().toMillis() + " ms)");
    Optional<Backlog> after = writes.afterClose();
    if (after.isEmpty()) {
      return had
          + (before == null || before.pending() > 0
              ? ", left buffered in the cache tier for the next owner of the range"
              : "");
    }
    long drained = after.get().drained() - (before == null ? 0 : before.drained());
    long left = after.get().pending();
    return had
        + "; drained "
        + drained
        + ", left "
        + left
        + (left == 0
            ? ""
            : " buffered, handed over: pinned and listed in the cache tier, where the next owner"
                + " drains them");
  }

  @Override
  public String toString() {
    return "Dendrite " + rangeName() + (isOpen() ? "" : " (closed)");
  }
}
