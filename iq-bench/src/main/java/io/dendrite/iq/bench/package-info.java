/** Load generator comparing Dendrite's IQ server with memcached; a program, not a library API. */
package io.dendrite.iq.bench;
