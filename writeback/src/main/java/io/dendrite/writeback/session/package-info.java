/**
 * Write-back at session granularity for SQL (the thesis' Design 2): {@link
 * io.dendrite.writeback.session.SessionWriteBack} buffers a multi-statement transaction as one session and applies
 * sessions in commit order from their queue, exactly once.
 */
package io.dendrite.writeback.session;
