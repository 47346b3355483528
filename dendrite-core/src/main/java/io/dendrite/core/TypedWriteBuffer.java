package io.dendrite.core;

import java.util.Collection;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * A write-back Dendrite's {@link WriteBuffer} with the {@link WriteCommand} kinds it was built to write: each kind's
 * commands are changes of the buffer's type, which {@link Dendrite.Builder#writeBack} checked when the Dendrite was
 * built (its signature requires it), so a write need only name a registered kind for its command to be handed to the
 * buffer as one; nothing looks at a command's class.
 *
 * @param <K> the attribute's type
 * @param <C> the type of change the buffer holds
 */
final class TypedWriteBuffer<K extends Comparable<? super K>, C> {
  private final WriteBuffer<K, C> buffer;
  private final Set<WriteCommand<?, ?, ?>> kinds =
      Collections.newSetFromMap(new IdentityHashMap<>());

  private TypedWriteBuffer(
      WriteBuffer<K, C> buffer, Collection<? extends WriteCommand<?, ?, ? extends C>> kinds) {
    this.buffer = Objects.requireNonNull(buffer, "buffer");
    Objects.requireNonNull(kinds, "commands");
    if (kinds.isEmpty()) {
      throw new IllegalArgumentException(
          "a write-back Dendrite writes only the commands it is built with: give at least one");
    }
    kinds.forEach(kind -> this.kinds.add(Objects.requireNonNull(kind, "a command kind")));
  }

  static <K extends Comparable<? super K>, C> TypedWriteBuffer<K, C> of(
      WriteBuffer<K, C> buffer, Collection<? extends WriteCommand<?, ?, ? extends C>> kinds) {
    return new TypedWriteBuffer<>(buffer, kinds);
  }

  /**
   * Refuses a kind of write this Dendrite was not built with, then a change the buffer cannot hold, before anything
   * is changed.
   *
   * @throws IllegalArgumentException naming what is wrong
   */
  void check(Interval<K> interval, WriteCommand<?, ?, ?> kind, Object command) {
    if (!kinds.contains(kind)) {
      throw new IllegalArgumentException(
          "write command "
              + kind
              + " is not one this write-back Dendrite was built with (Builder.writeBack(buffer,"
              + " commands)): its commands could not be told to be changes the buffer holds");
    }
    buffer.check(interval, registered(command));
  }

  void buffer(Interval<K> interval, Object command) {
    buffer.buffer(interval, registered(command));
  }

  WriteBuffer.Started start(Interval<K> interval, Object command) {
    return buffer.start(interval, registered(command));
  }

  void applyOverlapping(Interval<K> interval) {
    buffer.applyOverlapping(interval);
  }

  Optional<Coordinator.RangeClaim> rangeClaim(String collection, String domain) {
    return buffer.rangeClaim(collection, domain);
  }

  /** A command that {@link #check} passed: one of a registered kind, hence a {@code C}. */
  @SuppressWarnings("unchecked")
  private C registered(Object command) {
    return (C) command;
  }
}
