package io.dendrite.spring.boot;

import java.time.Duration;

/**
 * The buffered writes of one Dendrite at one moment, whoever buffers them (write-back, or TARDIS while the database is
 * down).
 *
 * @param pending documents with a buffered write
 * @param oldest how long the oldest of them has waited; zero when none is
 * @param pinnedBytes bytes pinned for them in the cache tier, every replica counted
 * @param drained buffered writes applied to the database so far
 * @param mode TARDIS's mode (NORMAL, FAILED or RECOVERY); null for write-back
 */
record Backlog(long pending, Duration oldest, long pinnedBytes, long drained, String mode) {}
