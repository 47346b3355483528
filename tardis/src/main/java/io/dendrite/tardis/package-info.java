/**
 * TARDIS for documents: {@link io.dendrite.tardis.Tardis} caches documents under I/Q leases and, when the data
 * store fails a write, buffers it in the cache tier instead; {@link io.dendrite.tardis.Technique} selects how
 * misses and writes are served until everything buffered is applied.
 */
package io.dendrite.tardis;
