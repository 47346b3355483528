package io.dendrite.tardis;

import io.dendrite.writeback.engine.BufferRefusedException;
import java.time.Instant;
import java.util.Optional;

/**
 * A {@link Tardis}'s state at one moment.
 *
 * @param technique the technique it runs
 * @param mode this process's mode
 * @param modeTransitions how often this process's mode changed
 * @param bufferedDocuments documents listed as having a buffered write, by any process (the TeleW backlog)
 * @param oldestBuffered when the oldest of them was listed
 * @param failedWritesAbsorbed writes this process buffered and acknowledged instead of failing them
 * @param recovered buffered writes this process applied to the data store (workers and foreground)
 * @param recoveredByForeground buffered writes misses and writes of this process found and had applied before going
 *     on (lazy recovery; one a worker applied while they waited for its lock counts here too)
 * @param unavailableMisses misses refused with {@link TardisUnavailableException}
 * @param outcomeUnknown writes refused with {@link TardisOutcomeUnknownException}
 * @param teleportsRefused writes refused with {@link BufferRefusedException}
 * @param pinnedBytes bytes this process pinned for buffered writes, every replica counted
 */
public record TardisMetrics(
    Technique technique,
    Mode mode,
    long modeTransitions,
    int bufferedDocuments,
    Optional<Instant> oldestBuffered,
    long failedWritesAbsorbed,
    long recovered,
    long recoveredByForeground,
    long unavailableMisses,
    long outcomeUnknown,
    long teleportsRefused,
    long pinnedBytes) {}
