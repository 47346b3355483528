package io.dendrite.spring.boot;

import io.dendrite.writeback.WriteBack;
import io.dendrite.writeback.engine.WriteBackMetrics;
import java.util.List;
import java.util.Optional;

/** A Dendrite's write-back, as {@link BufferedWrites}: one engine per range this process owns. */
final class WriteBackBuffers implements BufferedWrites {
  private final WriteBack writeBack;

  /** How many engines had closed when {@link #beforeClose()} read: those closed before the Dendrite's close. */
  private volatile int closedBefore;

  /** How many were open then: those the Dendrite's close closes. */
  private volatile int openBefore;

  WriteBackBuffers(WriteBack writeBack) {
    this.writeBack = writeBack;
  }

  @Override
  public String kind() {
    return "write-back";
  }

  @Override
  public Object source() {
    return writeBack;
  }

  @Override
  public Backlog now() {
    return backlog(WriteBackMetrics.total(writeBack.metrics()));
  }

  @Override
  public Backlog beforeClose() {
    closedBefore = writeBack.closedMetrics().size();
    List<WriteBackMetrics> open = writeBack.metrics();
    openBefore = open.size();
    return backlog(WriteBackMetrics.total(open));
  }

  /**
   * What the engines that closed with the Dendrite drained in all, and left buffered; empty when one's final counts
   * could not be read (a cache server down: it logged its own).
   */
  @Override
  public Optional<Backlog> afterClose() {
    List<WriteBackMetrics> closed = writeBack.closedMetrics();
    List<WriteBackMetrics> closedNow = closed.subList(closedBefore, closed.size());
    return closedNow.size() == openBefore
        ? Optional.of(backlog(WriteBackMetrics.total(closedNow)))
        : Optional.empty();
  }

  private static Backlog backlog(WriteBackMetrics metrics) {
    return new Backlog(
        metrics.pendingWrites(),
        metrics.oldestPendingAge(),
        metrics.pinnedBytes(),
        metrics.drained(),
        null);
  }
}
