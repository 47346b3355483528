/**
 * TARDIS for documents: {@link io.dendrite.tardis.Tardis} caches documents under I/Q leases and, when the data
 * store fails a write, buffers it in the cache tier instead; {@link io.dendrite.tardis.Technique} selects how
 * misses and writes are served until everything buffered is applied. It runs on our IQ servers, and (per document)
 * on unmodified memcached with lock keys instead of leases ({@link io.dendrite.tardis.Tardis.Builder#stockMemcached}).
 */
package io.dendrite.tardis;
