package io.dendrite.tardis;

/**
 * How a process learns, per document, that a buffered write the data store lacks may exist, whatever mode the
 * process itself is in (the thesis' §4.4.2). A process in normal mode must not read or write past another process's
 * buffered write: a document that may have one takes the technique's recovery row.
 */
public enum Solution {
  /**
   * Recon: before every miss and write in normal mode, one lock-free read of the document's buffered write on its
   * replicas. Works with any cache server the rest of TARDIS works with.
   */
  RECON,
  /**
   * Contextual: the pending marker our IQ server returns with every lease grant ({@code <p>}), set ({@code pmark})
   * before a write is buffered and cleared by the next lease holder that applied it. No extra read; needs our
   * server, whose markers are charged to its pinned memory and survive eviction. After a server restarts, its grants
   * say "maybe" until the processes have marked every listed document again and sent {@code pready}.
   */
  CONTEXTUAL
}
