package io.dendrite.coordination;

/**
 * Who owns a range now, as this process last saw it.
 *
 * @param member the owning process's member id
 * @param endpoint where that process takes forwarded requests (what it joined with)
 * @param epoch the ownership's epoch: every new owner of a range has a larger one than the owners before it
 */
public record RangeOwner(String member, String endpoint, long epoch) {}
