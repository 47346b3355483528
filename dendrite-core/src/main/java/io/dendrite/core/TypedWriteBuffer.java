package io.dendrite.core;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
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
   * {@code buffer} with every command bound on a Dendrite ({@code commands}, by name), each checked to take changes
   * of the type {@code buffers} hold ({@link Dendrite.Builder#writeBack(WriteBuffers)}).
   *
   * @throws IllegalStateException naming a command whose argument the buffer cannot hold, or when none is bound
   */
  static <K extends Comparable<? super K>, C> TypedWriteBuffer<K, C> checked(
      WriteBuffer<K, C> buffer,
      Class<C> changeType,
      Map<String, ? extends WriteCommand<?, ?, ?>> commands) {
    return new TypedWriteBuffer<>(buffer, checkedKinds(changeType, commands));
  }

  /**
   * The commands bound on a write-back Dendrite, each checked to take changes of {@code changeType}: every write of a
   * write-back Dendrite hands its argument to the buffer as it is.
   *
   * @throws IllegalStateException naming a command whose argument is not a {@code changeType}, or when none is bound
   */
  static <C> List<WriteCommand<?, ?, ? extends C>> checkedKinds(
      Class<C> changeType, Map<String, ? extends WriteCommand<?, ?, ?>> commands) {
    if (commands.isEmpty()) {
      throw new IllegalStateException(
          "a write-back Dendrite writes only the commands bound on it: bind at least one with"
              + " command(name, kind)");
    }
    return checkedKinds(changeType, commands, "write-back cannot buffer", "its buffers hold");
  }

  /**
   * The commands, each checked to take changes of {@code changeType}, which {@code what} (say, "write-back cannot
   * buffer") and {@code holder} (say, "its buffers hold") name in the refusal.
   *
   * @throws IllegalStateException naming a command whose argument is not a {@code changeType}
   */
  @SuppressWarnings("unchecked")
  static <C> List<WriteCommand<?, ?, ? extends C>> checkedKinds(
      Class<C> changeType,
      Map<String, ? extends WriteCommand<?, ?, ?>> commands,
      String what,
      String holder) {
    List<WriteCommand<?, ?, ? extends C>> kinds = new ArrayList<>();
    commands.forEach(
        (name, kind) -> {
          if (!changeType.isAssignableFrom(kind.changeType())) {
            throw new IllegalStateException(
                "write command \""
                    + name
                    + "\" takes a "
                    + kind.changeType().getName()
                    + ", which "
                    + what
                    + ": every command's argument must be a "
                    + changeType.getName()
                    + ", the change "
                    + holder);
          }
          kinds.add((WriteCommand<?, ?, ? extends C>) kind);
        });
    return kinds;
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

  void close() {
    buffer.close();
  }

  /** A command that {@link #check} passed: one of a registered kind, hence a {@code C}. */
  @SuppressWarnings("unchecked")
  private C registered(Object command) {
    return (C) command;
  }
}
