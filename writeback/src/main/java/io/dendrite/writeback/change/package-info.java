/**
 * Changes as data: what a write-back buffered write holds, so that any process can apply it later.
 *
 * <p>A {@link io.dendrite.writeback.change.Change} is one change to one document or row in the MongoDB update
 * vocabulary ({@code $set}, {@code $unset}, {@code $inc}, {@code $addToSet}, {@code $push}, {@code $pull}, plus
 * whole-document insert and delete); a row change is the subset a relational row can take. A
 * {@link io.dendrite.writeback.change.ChangeSequence} is the ordered changes buffered for one document or row: it
 * compacts itself, converts itself into an idempotent equivalent before it is applied, has a stable BSON encoding
 * and an in-memory semantics (the reference the data-store adapters must agree with).
 */
package io.dendrite.writeback.change;
