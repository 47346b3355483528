/**
 * Write-back for a Dendrite's cached range results: {@link io.dendrite.writeback.range.RangeWriteBack} keeps an index
 * of the intervals that have buffered writes (BuWrInT) and its log records in the cache tier, on top of a per-document
 * {@link io.dendrite.writeback.document.DocumentWriteBack} that holds and drains the writes themselves.
 */
package io.dendrite.writeback.range;
