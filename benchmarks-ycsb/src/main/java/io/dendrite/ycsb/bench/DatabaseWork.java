package io.dendrite.ycsb.bench;

import java.util.OptionalDouble;
import java.util.OptionalLong;

/**
 * The database server's work over one run's window as its own counters tell it: the statements clients sent
 * it, the transactions it committed and the fsyncs it made between the window's first and last YCSB status
 * line, next to the operations YCSB completed meanwhile. A count the server does not keep is empty, never
 * estimated.
 *
 * @param operations completed between the window's first and last YCSB status line
 */
public record DatabaseWork(
    long operations, OptionalLong statements, OptionalLong commits, OptionalLong fsyncs) {

  /** The work between two reads of the counters, taken as YCSB printed {@code first} and {@code last}. */
  static DatabaseWork between(
      YcsbOutputParser.Status first,
      StatusCounts from,
      YcsbOutputParser.Status last,
      StatusCounts to) {
    return new DatabaseWork(
        last.operations() - first.operations(),
        difference(from.statements(), to.statements()),
        difference(from.commits(), to.commits()),
        difference(from.fsyncs(), to.fsyncs()));
  }

  private static OptionalLong difference(OptionalLong from, OptionalLong to) {
    return from.isPresent() && to.isPresent()
        ? OptionalLong.of(to.getAsLong() - from.getAsLong())
        : OptionalLong.empty();
  }

  /** Statements per operation; empty when the server does not count them, or no operation completed. */
  public OptionalDouble statementsPerOperation() {
    return perOperation(statements);
  }

  /** As {@link #statementsPerOperation()}, for committed transactions. */
  public OptionalDouble commitsPerOperation() {
    return perOperation(commits);
  }

  /** As {@link #statementsPerOperation()}, for fsyncs. */
  public OptionalDouble fsyncsPerOperation() {
    return perOperation(fsyncs);
  }

  private OptionalDouble perOperation(OptionalLong count) {
    return count.isPresent() && operations > 0
        ? OptionalDouble.of((double) count.getAsLong() / operations)
        : OptionalDouble.empty();
  }
}
