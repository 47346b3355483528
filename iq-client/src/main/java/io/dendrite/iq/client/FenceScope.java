package io.dendrite.iq.client;

import java.nio.charset.StandardCharsets;

/**
 * While open, every request the opening thread sends through any {@link IqClient} is guarded by a fence ({@code
 * fenced <name> <epoch>} before it; see {@code docs/protocol.md}, "Fences"): it runs only where the fence stands at
 * this epoch, and fails with {@link FencedOutException} elsewhere. Requests held in a {@link Flight} are guarded by
 * the scope that was open when they were sent. Scopes nest; closing one restores the one before.
 */
public final class FenceScope implements AutoCloseable {
  private static final ThreadLocal<FenceScope> CURRENT = new ThreadLocal<>();

  final String name;
  final long epoch;
  final byte[] guard;
  private final FenceScope previous;
  private final Thread owner = Thread.currentThread();

  private FenceScope(String name, long epoch) {
    this.name = OutgoingRequest.checkKey(name);
    if (epoch < 1) {
      throw new IllegalArgumentException("a fence's epoch must be positive, got " + epoch);
    }
    this.epoch = epoch;
    this.guard = ("fenced " + name + " " + epoch + "\r\n").getBytes(StandardCharsets.US_ASCII);
    this.previous = CURRENT.get();
  }

  static FenceScope open(String name, long epoch) {
    FenceScope scope = new FenceScope(name, epoch);
    CURRENT.set(scope);
    return scope;
  }

  /** The scope open on the calling thread, or null. */
  static FenceScope current() {
    return CURRENT.get();
  }

  @Override
  public void close() {
    if (Thread.currentThread() != owner) {
      throw new IllegalStateException("a fence scope is closed by the thread that opened it");
    }
    CURRENT.set(previous);
  }
}
