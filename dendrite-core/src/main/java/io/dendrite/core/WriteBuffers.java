package io.dendrite.core;

import io.dendrite.iq.client.IqClient;

/**
 * Write-back for a {@link Dendrite} ({@link Dendrite.Builder#writeBack(WriteBuffers)}): opens the {@link WriteBuffer}
 * of each range the Dendrite owns, so that one setting serves every deployment. In one process that is one buffer
 * for the Dendrite's whole range; over many processes, one for each range this process takes over, opened when it
 * takes it and closed when it gives it up. The write-back module's {@code WriteBack} is the implementation; a
 * Dendrite closes the buffers it opened.
 *
 * @param <C> the type of change the buffers hold: every write command of a write-back Dendrite must take one, which
 *     the Dendrite checks when it is built
 */
public interface WriteBuffers<C> {

  /** The type of change the buffers hold. */
  Class<C> changeType();

  /**
   * The buffer of the range {@code collection}.{@code domain}, which one process owns alone (its Dendrite's
   * coordinator claimed it, or the buffer claims it: {@link WriteBuffer#rangeClaim}).
   */
  <K extends Comparable<? super K>> WriteBuffer<K, C> open(
      DomainType<K> type, String collection, String domain, IqClient cache);

  /**
   * The buffer of {@code range}, which this process owns under a lease from a multi-process coordinator: its
   * Dendrite's collection and domain, and the fenced ownership a buffer may act on alone while it is {@link
   * OwnedRange#held() held}.
   */
  <K extends Comparable<? super K>> WriteBuffer<K, C> open(
      DomainType<K> type, OwnedRange range, IqClient cache);
}
