package io.dendrite.core;

import java.util.Objects;

/**
 * What a range owner's data-store statements carry: the range's fence and the owner's epoch. A statement carrying it
 * applies only while no later owner raised the fence in the data store above {@code epoch} ({@link StoreFence});
 * otherwise it is refused with {@link StoreFencedOutException} and changes nothing.
 *
 * @param fence the range's fence name ({@code Fence:<range>}, the same name the cache servers know it by)
 * @param epoch the owner's epoch: higher for every later owner of the range
 */
public record FenceToken(String fence, long epoch) {
  public FenceToken {
    Objects.requireNonNull(fence, "fence");
  }
}
