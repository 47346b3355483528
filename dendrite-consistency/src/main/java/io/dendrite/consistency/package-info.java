/**
 * The stale-read checker: record every read and acknowledged write with its real-time interval in a {@link
 * io.dendrite.consistency.History}, then {@link io.dendrite.consistency.StaleReadChecker} finds the reads that
 * returned a value older than a write acknowledged before the read began. Plain Java with no dependencies, so the
 * tests and the YCSB binding's runtime share one checker.
 */
package io.dendrite.consistency;
