/**
 * Write-back of documents (the thesis' Design 1): {@link io.dendrite.writeback.document.DocumentWriteBack} buffers
 * each document's changes as one pinned, replicated buffered write, lists it in a pending-writes partition, drains it
 * in the background, and applies it before a read of the document misses to the store. {@link
 * io.dendrite.writeback.document.RangeWriteBack} is a Dendrite's write buffer on top of one (the CPR paper's
 * BuWrInT): it indexes each range write's interval with the documents it buffered, so that a range miss applies
 * every buffered write it overlaps first; {@link io.dendrite.writeback.document.DocumentCommand} is the write command
 * such a Dendrite is built with.
 *
 * <p>Range write-back lives here, beside the engine it is built on, because it takes that engine's steps that are not
 * API ({@code DocumentWriteBack.engine()}, package-private): Java hands one package's internals to another only
 * through a public member or a global hook, and this package wants neither.
 */
package io.dendrite.writeback.document;
