package io.dendrite.core.interval;

import io.dendrite.core.Interval;
import java.util.ArrayList;
import java.util.ConcurrentModificationException;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.Objects;

/**
 * A mutable, balanced, augmented interval tree: a multimap from closed {@link Interval intervals}
 * to values, with overlap and containment queries.
 *
 * <p>This is the one ordered structure behind PrInT ({@link PredicateIndex}), LeMInT ({@link
 * IntervalLeases}) and BuWrInT ({@link BufferedWriteIndex}). It is a red-black tree ordered by
 * {@code (lo, hi)}; every node also records the largest upper bound in its subtree, which lets a
 * query skip whole subtrees that end before the query starts. Height is at most {@code 2 log2(n +
 * 1)}, and every operation is iterative, so a tree of millions of entries never threatens the
 * stack.
 *
 * <ul>
 *   <li>{@link #insert} and {@link #remove}: {@code O(log n)}, plus the number of entries with the
 *       same interval for {@code remove}.
 *   <li>{@link #overlapping}: {@code O(min(n, (k + 1) log n))} for {@code k} reported entries,
 *       usually close to {@code O(log n + k)}: the walk never enters a subtree whose entries all
 *       end before the query starts, and stops at the first entry that starts after it ends.
 *   <li>{@link #containing}: the same pruned walk, entering only subtrees holding an entry that
 *       ends at or after the query's end.
 *   <li>{@link #containedIn}: {@code O(log n + m)} where {@code m} is the number of entries whose
 *       lower bound lies in the query.
 * </ul>
 *
 * <p>The same interval may be inserted many times, with equal or different values; entries with
 * equal intervals keep their insertion order. Query results and iteration are in ascending {@code
 * (lo, hi)} order, ties in insertion order. Values must not be null.
 *
 * <p><b>Concurrency.</b> This class is not thread-safe. Any number of threads may query it at
 * once (queries and iteration never write to the tree), but a mutation must exclude every other
 * access. The thread-safe uses in this package guard their tree themselves: {@link PredicateIndex}
 * and {@link BufferedWriteIndex} with a read-write lock, {@link IntervalLeases} with one mutex.
 * Iterators fail fast with {@link ConcurrentModificationException} on a best-effort basis.
 *
 * @param <K> the key type of the interval bounds
 * @param <V> the value type
 */
public final class IntervalTree<K extends Comparable<? super K>, V>
    implements Iterable<IntervalTree.Entry<K, V>> {

  /**
   * An interval and the value stored with it. An entry returned by a query stays valid (its
   * interval and value never change) even after it is removed from the tree.
   *
   * @param <K> the key type of the interval bounds
   * @param <V> the value type
   */
  public interface Entry<K extends Comparable<? super K>, V> {
    /** The interval this entry was inserted with. */
    Interval<K> interval();

    /** The value this entry was inserted with. */
    V value();
  }

  /**
   * Red-black trees of up to {@link Integer#MAX_VALUE} nodes are at most 62 levels high, so a
   * traversal stack of this size never overflows.
   */
  private static final int MAX_HEIGHT = 64;

  private Node<K, V> root;
  private int size;
  private int modCount;

  /** Creates an empty tree. */
  public IntervalTree() {}

  /** Returns the number of entries. */
  public int size() {
    return size;
  }

  /** Returns true if the tree has no entries. */
  public boolean isEmpty() {
    return size == 0;
  }

  /**
   * Adds an entry. An existing entry with the same interval, even with an equal value, is kept: the
   * tree is a multimap.
   */
  public void insert(Interval<K> interval, V value) {
    Objects.requireNonNull(value, "value");
    Node<K, V> node = new Node<>(interval, value);
    K lo = node.lo;
    K hi = node.hi;
    Node<K, V> parent = null;
    Node<K, V> cursor = root;
    boolean goLeft = false;
    while (cursor != null) {
      // The new node will sit below every node on this path, so their subtree maxima can be raised
      // now.
      if (cursor.max.compareTo(hi) < 0) {
        cursor.max = hi;
      }
      parent = cursor;
      // Ties go right so that equal intervals stay in insertion order.
      goLeft = compare(lo, hi, cursor) < 0;
      cursor = goLeft ? cursor.left : cursor.right;
    }
    node.parent = parent;
    if (parent == null) {
      root = node;
    } else if (goLeft) {
      parent.left = node;
    } else {
      parent.right = node;
    }
    size++;
    modCount++;
    fixAfterInsertion(node);
  }

  /**
   * Removes one entry with this interval and a value {@linkplain Object#equals equal} to {@code
   * value}: the oldest such entry if there are several.
   *
   * @return true if an entry was removed
   */
  public boolean remove(Interval<K> interval, V value) {
    Node<K, V> node = find(interval, value);
    if (node == null) {
      return false;
    }
    delete(node);
    return true;
  }

  /** Returns true if an entry with this interval and an equal value exists. */
  public boolean contains(Interval<K> interval, V value) {
    return find(interval, value) != null;
  }

  /** Returns the entries whose interval shares at least one key with {@code query}. */
  public List<Entry<K, V>> overlapping(Interval<K> query) {
    return search(null, query.hi(), query.lo(), null);
  }

  /** Returns the entries whose interval contains {@code query} (including equal intervals). */
  public List<Entry<K, V>> containing(Interval<K> query) {
    return search(null, query.lo(), query.hi(), null);
  }

  /** Returns the entries whose interval lies inside {@code query} (including equal intervals). */
  public List<Entry<K, V>> containedIn(Interval<K> query) {
    return search(query.lo(), query.hi(), null, query.hi());
  }

  /** Iterates over all entries in ascending {@code (lo, hi)} order, ties in insertion order. */
  @Override
  public Iterator<Entry<K, V>> iterator() {
    return new InOrderIterator();
  }

  /**
   * Collects, in order, the entries with {@code loMin <= lo <= loMax} and {@code hiMin <= hi <=
   * hiMax}; a null bound is unbounded. Every public query is one such box, which keeps a single
   * pruned traversal instead of one copy per query kind.
   */
  private List<Entry<K, V>> search(K loMin, K loMax, K hiMin, K hiMax) {
    List<Entry<K, V>> out = new ArrayList<>();
    @SuppressWarnings("unchecked")
    Node<K, V>[] stack = new Node[MAX_HEIGHT];
    int depth = 0;
    Node<K, V> cursor = root;
    while (true) {
      while (cursor != null) {
        if (hiMin != null && cursor.max.compareTo(hiMin) < 0) {
          break; // nothing in this subtree reaches hiMin
        }
        if (loMin != null && cursor.lo.compareTo(loMin) < 0) {
          cursor = cursor.right; // this node and its left subtree start too early
          continue;
        }
        stack[depth++] = cursor;
        cursor = cursor.left;
      }
      if (depth == 0) {
        return out;
      }
      Node<K, V> node = stack[--depth];
      if (node.lo.compareTo(loMax) > 0) {
        return out; // every node still to visit starts at or after this one
      }
      if ((hiMin == null || node.hi.compareTo(hiMin) >= 0)
          && (hiMax == null || node.hi.compareTo(hiMax) <= 0)) {
        out.add(node);
      }
      cursor = node.right;
    }
  }

  /** Finds the oldest node with this interval and an equal value. */
  private Node<K, V> find(Interval<K> interval, V value) {
    K lo = interval.lo();
    K hi = interval.hi();
    Node<K, V> first = null;
    Node<K, V> cursor = root;
    while (cursor != null) {
      int c = compare(lo, hi, cursor);
      if (c <= 0) {
        if (c == 0) {
          first = cursor; // keep going left: older equal intervals sit before this one
        }
        cursor = cursor.left;
      } else {
        cursor = cursor.right;
      }
    }
    for (Node<K, V> node = first;
        node != null && compare(lo, hi, node) == 0;
        node = successor(node)) {
      if (node.value.equals(value)) {
        return node;
      }
    }
    return null;
  }

  private static <K extends Comparable<? super K>> int compare(K lo, K hi, Node<K, ?> node) {
    int c = lo.compareTo(node.lo);
    return c != 0 ? c : hi.compareTo(node.hi);
  }

  private static <K extends Comparable<? super K>, V> Node<K, V> successor(Node<K, V> node) {
    if (node.right != null) {
      return minimum(node.right);
    }
    Node<K, V> child = node;
    Node<K, V> parent = node.parent;
    while (parent != null && child == parent.right) {
      child = parent;
      parent = parent.parent;
    }
    return parent;
  }

  private static <K extends Comparable<? super K>, V> Node<K, V> minimum(Node<K, V> node) {
    while (node.left != null) {
      node = node.left;
    }
    return node;
  }

  /**
   * Unlinks {@code z} by relinking nodes rather than copying a successor's contents into it, so
   * that entries handed out by queries keep their identity and contents (CLRS, RB-DELETE).
   */
  private void delete(Node<K, V> z) {
    Node<K, V> x;
    Node<K, V> xParent;
    boolean removedBlack;
    if (z.left == null || z.right == null) {
      x = z.left != null ? z.left : z.right;
      xParent = z.parent;
      removedBlack = !z.red;
      transplant(z, x);
      refreshMaxUpward(xParent, null);
    } else {
      Node<K, V> y = minimum(z.right);
      removedBlack = !y.red;
      x = y.right;
      if (y.parent == z) {
        xParent = y;
      } else {
        xParent = y.parent;
        transplant(y, y.right);
        y.right = z.right;
        y.right.parent = y;
      }
      transplant(z, y);
      y.left = z.left;
      y.left.parent = y;
      y.red = z.red;
      // The subtrees between y's old place and y lost y; y now roots z's entries minus z, so its
      // ancestors must be refreshed unless y ends up with the maximum z had.
      refreshMaxUpward(xParent, y);
      y.updateMax();
      if (y.max != z.max) {
        refreshMaxUpward(y.parent, null);
      }
    }
    if (removedBlack) {
      fixAfterDeletion(x, xParent);
    }
    z.left = z.right = z.parent = null;
    size--;
    modCount++;
  }

  /**
   * Recomputes subtree maxima from {@code node} towards the root after an entry left {@code node}'s
   * subtree. Stops early once a maximum is unchanged (ancestors depend only on it), and at {@code
   * stop}, exclusive, which the caller refreshes itself. Stopping early matters: refreshing reads
   * both children of every node, and at the bottom of a large tree those reads miss the cache.
   */
  private static <K extends Comparable<? super K>, V> void refreshMaxUpward(
      Node<K, V> node, Node<K, V> stop) {
    for (Node<K, V> n = node; n != null && n != stop; n = n.parent) {
      K before = n.max;
      n.updateMax();
      if (n.max == before) {
        return;
      }
    }
  }

  private void transplant(Node<K, V> u, Node<K, V> v) {
    if (u.parent == null) {
      root = v;
    } else if (u == u.parent.left) {
      u.parent.left = v;
    } else {
      u.parent.right = v;
    }
    if (v != null) {
      v.parent = u.parent;
    }
  }

  private void fixAfterInsertion(Node<K, V> x) {
    x.red = true;
    while (x != root && x.parent.red) {
      Node<K, V> parent = x.parent;
      Node<K, V> grandparent = parent.parent;
      if (parent == grandparent.left) {
        Node<K, V> uncle = grandparent.right;
        if (isRed(uncle)) {
          parent.red = false;
          uncle.red = false;
          grandparent.red = true;
          x = grandparent;
        } else {
          if (x == parent.right) {
            x = parent;
            rotateLeft(x);
            parent = x.parent;
          }
          parent.red = false;
          grandparent.red = true;
          rotateRight(grandparent);
        }
      } else {
        Node<K, V> uncle = grandparent.left;
        if (isRed(uncle)) {
          parent.red = false;
          uncle.red = false;
          grandparent.red = true;
          x = grandparent;
        } else {
          if (x == parent.left) {
            x = parent;
            rotateRight(x);
            parent = x.parent;
          }
          parent.red = false;
          grandparent.red = true;
          rotateLeft(grandparent);
        }
      }
    }
    root.red = false;
  }

  /** {@code x} may be null (an empty leaf), hence the explicit parent. */
  private void fixAfterDeletion(Node<K, V> x, Node<K, V> xParent) {
    while (x != root && !isRed(x)) {
      if (x == xParent.left) {
        Node<K, V> sibling = xParent.right;
        if (isRed(sibling)) {
          sibling.red = false;
          xParent.red = true;
          rotateLeft(xParent);
          sibling = xParent.right;
        }
        if (!isRed(sibling.left) && !isRed(sibling.right)) {
          sibling.red = true;
          x = xParent;
          xParent = x.parent;
        } else {
          if (!isRed(sibling.right)) {
            sibling.left.red = false;
            sibling.red = true;
            rotateRight(sibling);
            sibling = xParent.right;
          }
          sibling.red = xParent.red;
          xParent.red = false;
          sibling.right.red = false;
          rotateLeft(xParent);
          x = root;
        }
      } else {
        Node<K, V> sibling = xParent.left;
        if (isRed(sibling)) {
          sibling.red = false;
          xParent.red = true;
          rotateRight(xParent);
          sibling = xParent.left;
        }
        if (!isRed(sibling.left) && !isRed(sibling.right)) {
          sibling.red = true;
          x = xParent;
          xParent = x.parent;
        } else {
          if (!isRed(sibling.left)) {
            sibling.right.red = false;
            sibling.red = true;
            rotateLeft(sibling);
            sibling = xParent.left;
          }
          sibling.red = xParent.red;
          xParent.red = false;
          sibling.left.red = false;
          rotateRight(xParent);
          x = root;
        }
      }
    }
    if (x != null) {
      x.red = false;
    }
  }

  private static boolean isRed(Node<?, ?> node) {
    return node != null && node.red;
  }

  private void rotateLeft(Node<K, V> x) {
    Node<K, V> y = x.right;
    x.right = y.left;
    if (y.left != null) {
      y.left.parent = x;
    }
    transplant(x, y);
    y.left = x;
    x.parent = y;
    y.max = x.max; // y now roots exactly the entries x rooted
    x.updateMax();
  }

  private void rotateRight(Node<K, V> x) {
    Node<K, V> y = x.left;
    x.left = y.right;
    if (y.right != null) {
      y.right.parent = x;
    }
    transplant(x, y);
    y.right = x;
    x.parent = y;
    y.max = x.max;
    x.updateMax();
  }

  /**
   * Verifies the red-black and max-endpoint invariants and returns the tree's height. For tests:
   * walks every node.
   *
   * @throws IllegalStateException on the first broken invariant
   */
  int checkInvariants() {
    if (isRed(root)) {
      throw new IllegalStateException("red root");
    }
    if (root != null && root.parent != null) {
      throw new IllegalStateException("root has a parent");
    }
    int count = 0;
    int height = 0;
    int blackHeight = -1;
    Node<K, V> previous = null;
    for (Node<K, V> node = root == null ? null : minimum(root);
        node != null;
        node = successor(node)) {
      count++;
      if (previous != null && compare(node.lo, node.hi, previous) < 0) {
        throw new IllegalStateException("out of order: " + previous + " before " + node);
      }
      previous = node;
      K expectedMax = checkChild(node, node.left, node.hi);
      expectedMax = checkChild(node, node.right, expectedMax);
      if (node.max.compareTo(expectedMax) != 0) {
        throw new IllegalStateException(
            "max of " + node + " is " + node.max + ", expected " + expectedMax);
      }
      if (node.left == null || node.right == null) {
        int blacks = 0;
        int depth = 0;
        for (Node<K, V> n = node; n != null; n = n.parent) {
          depth++;
          if (!n.red) {
            blacks++;
          }
        }
        height = Math.max(height, depth);
        if (blackHeight == -1) {
          blackHeight = blacks;
        } else if (blackHeight != blacks) {
          throw new IllegalStateException("black height differs at " + node);
        }
      }
    }
    if (count != size) {
      throw new IllegalStateException("size is " + size + " but the tree holds " + count);
    }
    return height;
  }

  /** Checks the link and colour of one child and returns the larger of {@code max} and its max. */
  private static <K extends Comparable<? super K>, V> K checkChild(
      Node<K, V> parent, Node<K, V> child, K max) {
    if (child == null) {
      return max;
    }
    if (child.parent != parent) {
      throw new IllegalStateException("broken parent link below " + parent);
    }
    if (parent.red && child.red) {
      throw new IllegalStateException("red node " + parent + " has a red child");
    }
    return child.max.compareTo(max) > 0 ? child.max : max;
  }

  private final class InOrderIterator implements Iterator<Entry<K, V>> {
    private Node<K, V> next = root == null ? null : minimum(root);
    private final int expectedModCount = modCount;

    @Override
    public boolean hasNext() {
      return next != null;
    }

    @Override
    public Entry<K, V> next() {
      if (next == null) {
        throw new NoSuchElementException();
      }
      if (modCount != expectedModCount) {
        throw new ConcurrentModificationException();
      }
      Node<K, V> current = next;
      next = successor(current);
      return current;
    }
  }

  private static final class Node<K extends Comparable<? super K>, V> implements Entry<K, V> {
    final Interval<K> interval;
    // Bounds are copied out of the interval so comparisons skip one indirection.
    final K lo;
    final K hi;
    final V value;
    K max;
    Node<K, V> left;
    Node<K, V> right;
    Node<K, V> parent;
    boolean red;

    Node(Interval<K> interval, V value) {
      this.interval = interval;
      this.lo = interval.lo();
      this.hi = interval.hi();
      this.value = value;
      this.max = hi;
    }

    void updateMax() {
      K m = hi;
      if (left != null && left.max.compareTo(m) > 0) {
        m = left.max;
      }
      if (right != null && right.max.compareTo(m) > 0) {
        m = right.max;
      }
      max = m;
    }

    @Override
    public Interval<K> interval() {
      return interval;
    }

    @Override
    public V value() {
      return value;
    }

    @Override
    public String toString() {
      return interval + "=" + value;
    }
  }
}
