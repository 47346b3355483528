package io.dendrite.core.interval;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dendrite.core.Interval;
import java.util.ArrayList;
import java.util.Collections;
import java.util.ConcurrentModificationException;
import java.util.Iterator;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class IntervalTreeTest {

  @Test
  void rejectsInvertedBoundsWithAClearMessage() {
    assertThatThrownBy(() -> Interval.of(5, 4))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("lower bound 5 is above upper bound 4");
  }

  @Test
  void closedBoundsMakeTouchingIntervalsOverlap() {
    IntervalTree<Integer, String> tree = new IntervalTree<>();
    tree.insert(Interval.of(1, 3), "a");
    tree.insert(Interval.of(4, 6), "b");
    tree.insert(Interval.point(6), "c");

    assertThat(values(tree.overlapping(Interval.point(3)))).containsExactly("a");
    assertThat(values(tree.overlapping(Interval.of(3, 4)))).containsExactly("a", "b");
    assertThat(values(tree.overlapping(Interval.point(6)))).containsExactly("b", "c");
    assertThat(values(tree.overlapping(Interval.of(7, 9)))).isEmpty();
  }

  @Test
  void containmentQueriesIncludeEqualIntervals() {
    IntervalTree<Integer, String> tree = new IntervalTree<>();
    tree.insert(Interval.of(0, 100), "wide");
    tree.insert(Interval.of(10, 20), "equal");
    tree.insert(Interval.of(12, 15), "inner");
    tree.insert(Interval.of(15, 30), "straddling");

    assertThat(values(tree.containing(Interval.of(10, 20)))).containsExactly("wide", "equal");
    assertThat(values(tree.containedIn(Interval.of(10, 20)))).containsExactly("equal", "inner");
  }

  @Test
  void duplicatesAreKeptAndRemovedOldestFirst() {
    IntervalTree<Integer, String> tree = new IntervalTree<>();
    Interval<Integer> interval = Interval.of(1, 2);
    tree.insert(interval, "x");
    tree.insert(interval, "y");
    tree.insert(interval, "x");

    assertThat(values(tree.overlapping(interval))).containsExactly("x", "y", "x");
    assertThat(tree.remove(interval, "x")).isTrue();
    assertThat(values(tree.overlapping(interval))).containsExactly("y", "x");
    assertThat(tree.remove(interval, "z")).isFalse();
    assertThat(tree.remove(Interval.of(1, 3), "y")).isFalse();
    assertThat(tree.size()).isEqualTo(2);
  }

  @Test
  void anEntryOutlivesItsRemoval() {
    IntervalTree<Integer, String> tree = new IntervalTree<>();
    for (int i = 0; i < 10; i++) {
      tree.insert(Interval.of(i, i + 5), "v" + i);
    }
    List<IntervalTree.Entry<Integer, String>> found = tree.overlapping(Interval.point(3));
    found.forEach(e -> tree.remove(e.interval(), e.value()));

    assertThat(found).extracting(IntervalTree.Entry::value).containsExactly("v0", "v1", "v2", "v3");
    assertThat(found.get(0).interval()).isEqualTo(Interval.of(0, 5));
    assertThat(tree.overlapping(Interval.point(3))).isEmpty();
  }

  @Test
  void rejectsNullValues() {
    IntervalTree<Integer, String> tree = new IntervalTree<>();
    assertThatThrownBy(() -> tree.insert(Interval.point(1), null))
        .isInstanceOf(NullPointerException.class);
  }

  @Test
  void iteratorIsOrderedAndFailsFast() {
    IntervalTree<String, Integer> tree = new IntervalTree<>();
    tree.insert(Interval.of("m", "z"), 1);
    tree.insert(Interval.of("a", "c"), 2);
    tree.insert(Interval.of("a", "b"), 3);

    List<Integer> order = new ArrayList<>();
    tree.forEach(e -> order.add(e.value()));
    assertThat(order).containsExactly(3, 2, 1);

    Iterator<IntervalTree.Entry<String, Integer>> iterator = tree.iterator();
    iterator.next();
    tree.insert(Interval.point("q"), 4);
    assertThatThrownBy(iterator::next).isInstanceOf(ConcurrentModificationException.class);
  }

  /** Sorted insertion is the worst case for an unbalanced tree; a recursive walk would also overflow. */
  @Test
  void staysBalancedWithAMillionSortedIntervals() {
    int n = 1_000_000;
    IntervalTree<Integer, Integer> tree = new IntervalTree<>();
    for (int i = 0; i < n; i++) {
      tree.insert(Interval.of(i, i + 2), i);
    }
    assertThat((double) tree.checkInvariants())
        .isLessThanOrEqualTo(2 * Math.log(n + 1) / Math.log(2));
    assertThat(values(tree.overlapping(Interval.of(500_000, 500_001))))
        .containsExactly(499_998, 499_999, 500_000, 500_001);

    List<Integer> order = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      order.add(i);
    }
    Collections.shuffle(order, new Random(42));
    for (int i : order.subList(0, n / 2)) {
      assertThat(tree.remove(Interval.of(i, i + 2), i)).isTrue();
    }
    assertThat(tree.size()).isEqualTo(n / 2);
    assertThat((double) tree.checkInvariants())
        .isLessThanOrEqualTo(2 * Math.log(n / 2 + 1) / Math.log(2));
  }

  private static <V> List<V> values(List<IntervalTree.Entry<Integer, V>> entries) {
    return entries.stream().map(IntervalTree.Entry::value).toList();
  }
}
