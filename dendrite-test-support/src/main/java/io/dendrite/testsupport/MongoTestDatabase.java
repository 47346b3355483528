package io.dendrite.testsupport;

/**
 * A MongoDB database name reserved for one test (dropped after it) on a MongoDB-wire server.
 *
 * @param connectionString the server's connection string, without a database name
 * @param name the database name this test owns
 */
public record MongoTestDatabase(String connectionString, String name) {}
