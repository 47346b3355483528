/**
 * Client for IQ lease cache servers.
 *
 * <p>{@link io.dendrite.iq.client.IqClient} is the entry point: one per application, thread-safe,
 * keys spread over the servers by consistent hashing, many requests pipelined per connection.
 * Reads that may fill the cache go through {@link io.dendrite.iq.client.IqClient#read} and its
 * {@link io.dendrite.iq.client.LeaseHandle}; writers use a {@link io.dendrite.iq.client.Transaction}
 * (Q leases) or a {@link io.dendrite.iq.client.Session} (C/O leases). Protocol outcomes are typed
 * ({@link io.dendrite.iq.client.ReadResult}, {@link io.dendrite.iq.client.RefreshResult},
 * {@link io.dendrite.iq.client.Outcome}); transport failures are
 * {@link io.dendrite.iq.client.IqException}s. What only some callers need comes from one object per
 * job that the client hands out: {@link io.dendrite.iq.client.ServerCommands},
 * {@link io.dendrite.iq.client.ReplicaPlacement}, {@link io.dendrite.iq.client.Fences},
 * {@link io.dendrite.iq.client.PendingMarkers} and {@link io.dendrite.iq.client.ThreadCounters}.
 */
package io.dendrite.iq.client;
