package io.dendrite.writeback.kernel;

import io.dendrite.iq.client.IqClient;
import java.time.Duration;

/**
 * The settings every write-back engine shares, as {@code EngineBuilder} collected and checked them: what an engine's
 * constructor reads, in a package the library does not export.
 */
public record EngineSettings(
    IqClient cache,
    int replicas,
    int drainThreads,
    long pinnedBudgetBytes,
    Duration storeRetryDeadline,
    Duration idlePause,
    Duration lockTimeout,
    Duration replicaCheckInterval,
    Duration replaceDownServerAfter,
    Duration drainOnClose) {}
