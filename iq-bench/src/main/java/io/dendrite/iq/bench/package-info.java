/**
 * Load generators comparing Dendrite's IQ server with memcached, and the /proc CPU reader every benchmark uses
 * ({@link io.dendrite.iq.bench.ProcCpu}); programs, not a library API.
 */
package io.dendrite.iq.bench;
