package io.dendrite.core;

/**
 * A Dendrite's {@link WriteBuffer} with its change type: the one place where a write's change, whose type {@link
 * Dendrite#write} takes per call, is checked against the type the buffer holds and handed over as that type.
 *
 * @param <K> the attribute's type
 * @param <C> the type of change the buffer holds
 */
final class TypedWriteBuffer<K extends Comparable<? super K>, C> {
  private final WriteBuffer<K, C> buffer;
  private final Class<C> type;

  private TypedWriteBuffer(WriteBuffer<K, C> buffer) {
    this.buffer = buffer;
    this.type = buffer.changeType();
  }

  static <K extends Comparable<? super K>, C> TypedWriteBuffer<K, C> of(WriteBuffer<K, C> buffer) {
    return new TypedWriteBuffer<>(buffer);
  }

  /**
   * Refuses, before anything is changed, a change of another type or one the buffer cannot hold.
   *
   * @throws IllegalArgumentException naming what is wrong with {@code change}
   */
  void check(Interval<K> interval, Object change) {
    buffer.check(interval, typed(change));
  }

  void buffer(Interval<K> interval, Object change) {
    buffer.buffer(interval, typed(change));
  }

  WriteBuffer.Started start(Interval<K> interval, Object change) {
    return buffer.start(interval, typed(change));
  }

  void applyOverlapping(Interval<K> interval) {
    buffer.applyOverlapping(interval);
  }

  private C typed(Object change) {
    if (!type.isInstance(change)) {
      throw new IllegalArgumentException(
          "this Dendrite's write buffer holds "
              + type.getName()
              + " changes, got "
              + (change == null ? "null" : change.getClass().getName()));
    }
    return type.cast(change);
  }
}
