/**
 * Real servers for integration tests.
 *
 * <p>Annotate a test class with {@code @ExtendWith(RealServers.class)} and declare parameters of type
 * {@link io.dendrite.testsupport.MySqlTestDatabase}, {@link io.dendrite.testsupport.MongoTestDatabase},
 * {@link io.dendrite.testsupport.MemcachedAddress} or {@link io.dendrite.testsupport.ZooKeeperAddress}. Endpoints come from the environment
 * ({@code DENDRITE_MYSQL_URL}, {@code DENDRITE_MONGO_URL}, {@code DENDRITE_MEMCACHED}, {@code DENDRITE_ZOOKEEPER}, printed by
 * {@code dev/services env}); otherwise from Testcontainers when a Docker engine answers; otherwise the test
 * fails with a message that says how to start the servers. It never skips.
 *
 * <p>{@link io.dendrite.testsupport.ModuleDescriptors} reads the library modules' descriptors for the tests that pin
 * what each module exports and requires.
 */
package io.dendrite.testsupport;
