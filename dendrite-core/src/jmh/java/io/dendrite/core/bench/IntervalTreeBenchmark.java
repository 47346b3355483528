package io.dendrite.core.bench;

import io.dendrite.core.Interval;
import io.dendrite.core.interval.IntervalTree;
import java.util.List;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * Cost of {@link IntervalTree} updates and overlap queries as the tree grows, to show that both
 * grow with {@code log n}.
 *
 * <p>Lower bounds are spread over {@code 100 n} keys and intervals are up to 100 keys wide, so a
 * query of the same width overlaps about two entries whatever the size: the measured growth is
 * the descent, not a growing result. Operands are generated in setup so that the benchmark does
 * not measure allocation of intervals or boxing of keys.
 *
 * <p>{@code treeMapBaseline} does the same put and remove on a {@link TreeMap} keyed by the lower
 * bounds: the JDK's red-black tree without augmentation, duplicates or intervals. It shows how
 * much of the growth at large sizes is cache misses that any pointer-based tree pays.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(value = 1, jvmArgsAppend = "-Xmx2g")
public class IntervalTreeBenchmark {

  private static final int WIDTH = 100;
  private static final int OPERANDS = 1 << 12;

  @Param({"1000", "10000", "100000", "1000000"})
  int size;

  private IntervalTree<Long, Integer> tree;
  private TreeMap<Long, Integer> treeMap;
  private Interval<Long>[] operands;
  private int next;

  @Setup
  @SuppressWarnings("unchecked")
  public void fill() {
    SplittableRandom random = new SplittableRandom(42);
    tree = new IntervalTree<>();
    treeMap = new TreeMap<>();
    for (int i = 0; i < size; i++) {
      Interval<Long> interval = randomInterval(random, 0);
      tree.insert(interval, i);
      treeMap.put(interval.lo(), i);
    }
    operands = new Interval[OPERANDS];
    for (int i = 0; i < OPERANDS; i++) {
      operands[i] = randomInterval(random, 1);
    }
  }

  /** Filled entries start at even keys, operands at odd ones, so an operand never replaces an entry. */
  private Interval<Long> randomInterval(SplittableRandom random, int parity) {
    long lo = 2 * random.nextLong((long) size * WIDTH / 2) + parity;
    return Interval.of(lo, lo + random.nextInt(WIDTH));
  }

  private Interval<Long> nextOperand() {
    next = (next + 1) & (OPERANDS - 1);
    return operands[next];
  }

  /** One insert and one remove of the same entry, which keeps the tree at {@code size}. */
  @Benchmark
  public boolean insertAndRemove() {
    Interval<Long> interval = nextOperand();
    tree.insert(interval, -1);
    return tree.remove(interval, -1);
  }

  /** Every entry overlapping a query interval of up to 100 keys (about two entries). */
  @Benchmark
  public List<IntervalTree.Entry<Long, Integer>> overlapping() {
    return tree.overlapping(nextOperand());
  }

  /** The same update on the JDK's red-black tree, as a yardstick. */
  @Benchmark
  public Integer treeMapBaseline() {
    Long lo = nextOperand().lo();
    treeMap.put(lo, -1);
    return treeMap.remove(lo);
  }
}
