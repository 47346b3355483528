/** YCSB bindings for Dendrite, the databases alone and memcached look-aside, and the benchmark runner. */
package io.dendrite.ycsb;
