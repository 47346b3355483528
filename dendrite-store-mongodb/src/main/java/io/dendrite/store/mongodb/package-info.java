/**
 * {@link io.dendrite.store.mongodb.MongoStore}: a {@link io.dendrite.writeback.store.DataStore} over MongoDB, and a
 * {@link io.dendrite.core.StoreFence} in the same database.
 */
package io.dendrite.store.mongodb;
