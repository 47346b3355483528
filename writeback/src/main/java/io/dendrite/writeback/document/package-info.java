/**
 * Write-back at document granularity (the thesis' Design 1): {@link io.dendrite.writeback.document.DocumentWriteBack} buffers
 * each document's changes as one pinned, replicated buffered write, lists it in a pending-writes partition, drains it
 * in the background, and applies it before a read of the document misses to the store.
 */
package io.dendrite.writeback.document;
