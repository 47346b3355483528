package io.dendrite.ycsb.bench;

/** Pinned and total item bytes over all cache servers of a run, {@code seconds} after the run started. */
public record PinnedSample(double seconds, long pinnedBytes, long bytes) {}
