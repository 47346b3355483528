package io.dendrite.ycsb.bench;

/**
 * Where the report reads a database server's own count of the work it did: the statements its clients
 * sent, the transactions it committed and the fsyncs it made. The counters are cumulative and count the
 * whole server, whoever its clients are; a run's share is the difference between two reads.
 */
public interface StatusCounters {

  /**
   * Connects for one run. The connection is opened before the run starts and kept for all its reads, so
   * that the statements a driver sends as it connects fall outside every window.
   */
  Session open() throws Exception;

  /** One connection that reads the counters; its own reads are not counted as statements. */
  interface Session extends AutoCloseable {

    /**
     * The counters now, with the statements this session sent to read them taken off, so that the
     * difference between two reads is the others' statements only.
     *
     * @throws Exception when the server cannot be asked or does not answer with the counters; the message
     *     says which, for the warning
     */
    StatusCounts read() throws Exception;

    @Override
    void close();
  }
}
