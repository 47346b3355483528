/**
 * The plumbing the write-back engines share: pinned replicas, buffered writes and their locks, pending-writes
 * partitions, drain threads, replica repair, retries. Public only so that the engines' packages can use it; the
 * module does not export it, and nothing here is API.
 */
package io.dendrite.writeback.kernel;
