/**
 * TARDIS for documents: {@link io.dendrite.tardis.Tardis} caches documents under I/Q leases and, when the data
 * store fails a write, buffers it in the cache tier instead; {@link io.dendrite.tardis.Technique} selects how
 * misses and writes are served until everything buffered is applied. It runs on our IQ servers, and (per document)
 * on unmodified memcached with lock keys instead of leases ({@link io.dendrite.tardis.Tardis.Builder#stockMemcached}).
 *
 * <p>The thesis calls such a write <em>teleported</em>; here a teleported write is a buffered write, kept with
 * write-back's engine kernel under keys of its own ({@code TW:}), so its refusal and its shared settings are
 * write-back's: {@link io.dendrite.writeback.engine.BufferRefusedException} when the cache tier cannot buffer it, and
 * the settings both share declared once in {@link io.dendrite.writeback.engine.EngineBuilder}, which {@link
 * io.dendrite.tardis.Tardis.Builder} extends.
 */
package io.dendrite.tardis;
