package io.dendrite.store.mongodb;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.exists;
import static com.mongodb.client.model.Filters.in;
import static com.mongodb.client.model.Filters.lte;
import static com.mongodb.client.model.Filters.or;

import com.mongodb.MongoBulkWriteException;
import com.mongodb.bulk.BulkWriteError;
import com.mongodb.bulk.BulkWriteResult;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.Projections;
import com.mongodb.client.model.WriteModel;
import io.dendrite.core.DataStoreException;
import io.dendrite.core.FenceToken;
import io.dendrite.core.StoreFencedOutException;
import io.dendrite.writeback.change.Change;
import io.dendrite.writeback.change.ChangeSequence;
import io.dendrite.writeback.change.EntityChanges;
import io.dendrite.writeback.change.FieldValues;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.bson.BsonDocument;
import org.bson.BsonInt64;
import org.bson.BsonValue;
import org.bson.conversions.Bson;

/**
 * Orders a document's writes even when one arrives late. MongoDB applies each update on its own as it arrives, so an
 * update whose reply timed out (or whose connection dropped) may still be applied after the writes sent after it,
 * and undo them: a drain's {@code $set score=5} that landed after the next drain's {@code $set score=6} lost an
 * acknowledged increment (TARDIS on FerretDB, finding 15). SQL does not need this: a transaction holds its rows'
 * locks until it commits, so a later one waits for a late {@code COMMIT}.
 *
 * <p>Every document Dendrite writes carries a random fence token in {@link #FIELD}. A write first reads the tokens
 * of its documents, then changes each document only if its token is still the one read, and sets a new one: a
 * write that arrives after another changed the document finds the token changed and does nothing. A write that finds
 * a token it did not expect (a late write landed between the read and the write) reads again and goes on from the
 * step the tokens show it reached; every token is new, so the tokens tell exactly which of its own steps landed. A
 * deleted document has no token; a delete found done is taken as done (a late delete leaves the same state).
 *
 * <p>A range owner's write ({@code owner} given) is fenced by epoch as well: each document it writes carries the
 * owner's epoch in {@link #EPOCH}, each step applies only while the document's epoch is not above the owner's, and a
 * new owner raises the epoch of every document of its range before it serves the range ({@link MongoStore#raise}).
 * A write that finds, on its read or on the read after a step that did not land, a document of a later owner's epoch
 * stops there ({@link StoreFencedOutException}): a former owner's late write is refused, not applied again on top of
 * the new owner's. Each check is atomic with its step (one conditional single-document update), which is what
 * FerretDB, without multi-document transactions, offers.
 *
 * <p>What it does not cover: a late insert of a document that a newer write deleted re-creates it (no tombstones),
 * and writes to these collections that do not go through a {@link MongoStore} are not ordered with it.
 */
final class MongoFence {
  /** The field holding a document's fence token; {@link MongoStore} reads never return it. */
  static final String FIELD = "_dendriteFence";

  /** The field holding the epoch of the range owner that last wrote, or raised, a document. */
  static final String EPOCH = "_dendriteEpoch";

  private static final String ID = "_id";
  private static final int ATTEMPTS = 16;
  private static final SecureRandom TOKENS = new SecureRandom();

  /**
   * Builds the write of one step of document {@code id}: {@code filter}, and the token to set ({@code null} for a
   * delete).
   */
  interface StepWrites {
    WriteModel<BsonDocument> of(
        BsonValue id, Bson filter, ChangeSequence step, BsonValue token, BsonValue epoch);
  }

  private MongoFence() {}

  /**
   * Applies {@code entities} (all of one collection) in order, each step only on the state the one before left and,
   * with an {@code owner}, only on documents no later owner of the range raised or wrote.
   *
   * @throws DataStoreException when the documents kept changing under the writes for {@link #ATTEMPTS} rounds
   * @throws StoreFencedOutException when a document carries an epoch above {@code owner}'s
   */
  static void apply(
      MongoCollection<BsonDocument> collection,
      List<EntityChanges> entities,
      StepWrites writes,
      FenceToken owner) {
    Map<Object, Chain> chains = new LinkedHashMap<>();
    for (EntityChanges entity : entities) {
      BsonValue id = FieldValues.toBson(entity.key().id());
      chains.computeIfAbsent(sameId(id), key -> new Chain(id)).add(entity.changes().steps());
    }
    for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
      List<Chain> pending = chains.values().stream().filter(Chain::unfinished).toList();
      if (pending.isEmpty()) {
        return;
      }
      Map<Object, BsonDocument> fences = readFences(collection, pending);
      if (owner != null) {
        refuseLaterOwners(fences, owner);
      }
      List<WriteModel<BsonDocument>> models = new ArrayList<>();
      Expected expected = new Expected();
      for (Chain chain : pending) {
        BsonDocument found = fences.get(sameId(chain.id));
        chain.catchUp(found != null, found == null ? null : found.get(FIELD));
        chain.writes(writes, models, expected, owner);
      }
      if (models.isEmpty()) {
        return;
      }
      try {
        BulkWriteResult result = collection.bulkWrite(models, new BulkWriteOptions().ordered(true));
        if (expected.matches(result)) {
          return;
        }
      } catch (MongoBulkWriteException conflict) {
        // An insert met a document that appeared meanwhile (a late write): read again.
        if (!conflict.getWriteErrors().stream().allMatch(MongoFence::duplicateKey)) {
          throw conflict;
        }
      }
    }
    throw new DataStoreException(
        "the documents "
            + chains.values().stream().map(chain -> chain.id).toList()
            + " kept changing under the writes for "
            + ATTEMPTS
            + " rounds (writes that bypass MongoStore?)",
        null);
  }

  private static boolean duplicateKey(BulkWriteError error) {
    return error.getCode() == 11000;
  }

  /** The token and epoch fields of those documents that exist. */
  private static Map<Object, BsonDocument> readFences(
      MongoCollection<BsonDocument> collection, List<Chain> chains) {
    Map<Object, BsonDocument> fences = new LinkedHashMap<>();
    collection
        .find(in(ID, chains.stream().map(chain -> chain.id).toList()))
        .projection(Projections.include(FIELD, EPOCH))
        .forEach(found -> fences.put(sameId(found.get(ID)), found));
    return fences;
  }

  /** Stops a former owner's write at the first document a later owner of the range raised or wrote. */
  private static void refuseLaterOwners(Map<Object, BsonDocument> found, FenceToken owner) {
    for (BsonDocument document : found.values()) {
      BsonValue epoch = document.get(EPOCH);
      if (epoch != null && epoch.isNumber() && epoch.asNumber().longValue() > owner.epoch()) {
        throw new StoreFencedOutException(owner, epoch.asNumber().longValue());
      }
    }
  }

  /** A key under which an id stored as another number type is the same id (MongoDB compares numbers by value). */
  private static Object sameId(BsonValue id) {
    if (id.isInt32() || id.isInt64()) {
      return id.asNumber().longValue();
    }
    return id;
  }

  /** What the ordered bulk write must report when every write found the state it expected. */
  private static final class Expected {
    int matched;
    int deleted;
    int upserted;

    boolean matches(BulkWriteResult result) {
      return result.getMatchedCount() == matched
          && result.getDeletedCount() == deleted
          && result.getUpserts().size() == upserted;
    }
  }

  /** One document's steps, the token each leaves, and how many are known to have landed. */
  private static final class Chain {
    final BsonValue id;
    final List<ChangeSequence> steps = new ArrayList<>();

    /** The token step i leaves; null for a delete (no document). */
    final List<BsonValue> tokens = new ArrayList<>();

    int landed;
    boolean present;
    BsonValue fence;

    Chain(BsonValue id) {
      this.id = id;
    }

    void add(List<ChangeSequence> more) {
      for (ChangeSequence step : more) {
        steps.add(step);
        tokens.add(
            step.changes().get(0) instanceof Change.Delete
                ? null
                : new BsonInt64(TOKENS.nextLong()));
      }
    }

    boolean unfinished() {
      return landed < steps.size();
    }

    /**
     * Sets where this chain stands from the document as read now: after the last of its own steps whose token the
     * document carries (or whose delete left it absent), else where it stood.
     */
    void catchUp(boolean presentNow, BsonValue fenceNow) {
      for (int step = steps.size() - 1; step >= landed; step--) {
        BsonValue token = tokens.get(step);
        boolean reached =
            token == null ? !presentNow : presentNow && Objects.equals(token, fenceNow);
        if (reached) {
          landed = step + 1;
          break;
        }
      }
      present = presentNow;
      fence = fenceNow;
    }

    /** Adds the writes of the steps not landed yet, each conditional on the state the one before leaves. */
    void writes(
        StepWrites writes,
        List<WriteModel<BsonDocument>> models,
        Expected expected,
        FenceToken owner) {
      boolean exists = present;
      BsonValue expectedFence = fence;
      BsonValue epoch = owner == null ? null : new BsonInt64(owner.epoch());
      for (int step = landed; step < steps.size(); step++) {
        ChangeSequence changes = steps.get(step);
        Change first = changes.changes().get(0);
        BsonValue token = tokens.get(step);
        Bson filter =
            and(
                eq(ID, id),
                expectedFence == null ? exists(FIELD, false) : eq(FIELD, expectedFence));
        if (owner != null) {
          filter = and(filter, or(exists(EPOCH, false), lte(EPOCH, epoch)));
        }
        if (first instanceof Change.Insert) {
          models.add(writes.of(id, filter, changes, token, epoch));
          if (exists) {
            expected.matched++;
          } else {
            expected.upserted++;
          }
          exists = true;
          expectedFence = token;
        } else if (!exists) {
          // Field changes and deletes of a missing document do nothing: nothing to send.
          continue;
        } else if (first instanceof Change.Delete) {
          models.add(writes.of(id, filter, changes, null, null));
          expected.deleted++;
          exists = false;
          expectedFence = null;
        } else {
          models.add(writes.of(id, filter, changes, token, epoch));
          expected.matched++;
          expectedFence = token;
        }
      }
    }
  }
}
