package io.dendrite.writeback.engine;

import io.dendrite.iq.client.IqClient;
import java.time.Duration;

/**
 * The settings every engine over buffered writes shares, as an {@link EngineBuilder} collected and checked them:
 * what the engine's constructor reads. Each component is documented at its setter in {@link EngineBuilder}, {@code
 * replicas} resolved to the R the engine runs with and {@code drainOnClose} at {@link WriteBackEngineBuilder} (zero
 * for TARDIS, whose {@code close()} hands everything over at once).
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
