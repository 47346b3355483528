package io.dendrite.store.mongodb;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.gte;
import static com.mongodb.client.model.Filters.lte;
import static com.mongodb.client.model.Sorts.ascending;
import static com.mongodb.client.model.Updates.max;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.MongoException;
import com.mongodb.MongoOperationTimeoutException;
import com.mongodb.MongoSocketException;
import com.mongodb.MongoTimeoutException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.DeleteOneModel;
import com.mongodb.client.model.ReplaceOneModel;
import com.mongodb.client.model.ReplaceOptions;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.WriteModel;
import io.dendrite.core.DataStoreException;
import io.dendrite.core.DataStoreUnavailableException;
import io.dendrite.core.FenceToken;
import io.dendrite.core.StoreFence;
import io.dendrite.writeback.change.Change;
import io.dendrite.writeback.change.Change.FieldChange;
import io.dendrite.writeback.change.ChangeSequence;
import io.dendrite.writeback.change.EntityChanges;
import io.dendrite.writeback.change.EntityKey;
import io.dendrite.writeback.change.FieldValues;
import io.dendrite.writeback.store.DataStore;
import io.dendrite.writeback.store.Entity;
import io.dendrite.writeback.store.RangeBounds;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonInt64;
import org.bson.BsonValue;
import org.bson.conversions.Bson;

/**
 * A {@link DataStore} over MongoDB (or a MongoDB-wire server) with the synchronous driver. A batch becomes one
 * ordered {@code bulkWrite} per collection; each {@link ChangeSequence#steps() step} of an entity's changes is one
 * write model, atomic on its document. MongoDB offers no more than single-document atomicity here (FerretDB has
 * no multi-document transactions at all), so exactly-once comes from converting non-idempotent changes first
 * ({@link ChangeSequence#toIdempotent}). {@code $pull} is sent as {@code $pullAll} of one value: exact equality,
 * where {@code $pull} would treat a document value as a query.
 */
public final class MongoStore implements DataStore, StoreFence {
  private static final String ID = "_id";

  /** The collection recording each range fence's epoch, {@code {_id: <fence>, epoch}}. */
  static final String FENCES = "dendrite_fences";

  private final MongoClient client;
  private final MongoDatabase database;

  /** Whether {@link #close()} closes the client: not an application's own ({@link #over}). */
  private final boolean closesClient;

  /** Whether writes are ordered by {@link MongoFence}: always, but for a test's control of the fence. */
  private final boolean fenced;

  private MongoStore(
      MongoClient client, String databaseName, boolean fenced, boolean closesClient) {
    this.client = client;
    this.database = client.getDatabase(databaseName);
    this.fenced = fenced;
    this.closesClient = closesClient;
  }

  /**
   * A store over an application's own client (a Spring Boot {@code MongoClient}, say), in {@code databaseName};
   * the client stays the application's to close: {@link #close()} leaves it open. Its settings are the
   * application's too, so give it a socket read timeout: the driver's default waits forever for a reply that a
   * network dropped, holding the caller's lease.
   */
  public static MongoStore over(MongoClient client, String databaseName) {
    return new MongoStore(
        Objects.requireNonNull(client, "client"), checkedName(databaseName), true, false);
  }

  private static String checkedName(String databaseName) {
    if (databaseName == null || databaseName.isBlank()) {
      throw new IllegalArgumentException("database name must be non-blank, got " + databaseName);
    }
    return databaseName;
  }

  /**
   * Connects to {@code databaseName} on the servers of {@code connectionString}.
   *
   * @param timeout how long to wait for a server (connection and server selection), and then for each reply,
   *     before an operation fails with {@link DataStoreUnavailableException}. The reply limit is what ends a call
   *     into a network that silently drops packets; the driver's default waits forever.
   */
  public static MongoStore open(String connectionString, String databaseName, Duration timeout) {
    return open(connectionString, databaseName, timeout, true);
  }

  /**
   * {@link #open}, with writes not fenced when {@code fenced} is false: for the negative control of the test that
   * shows a late write undoing a newer one, so not public.
   */
  static MongoStore open(
      String connectionString, String databaseName, Duration timeout, boolean fenced) {
    checkedName(databaseName);
    int millis = Math.toIntExact(timeout.toMillis());
    MongoClientSettings settings =
        MongoClientSettings.builder()
            .applyConnectionString(new ConnectionString(connectionString))
            .applyToClusterSettings(
                cluster -> cluster.serverSelectionTimeout(millis, TimeUnit.MILLISECONDS))
            .applyToSocketSettings(
                socket ->
                    socket
                        .connectTimeout(millis, TimeUnit.MILLISECONDS)
                        .readTimeout(millis, TimeUnit.MILLISECONDS))
            .build();
    return new MongoStore(MongoClients.create(settings), databaseName, fenced, true);
  }

  /**
   * Applies the batch, one collection at a time, each entity's steps in order. Each write is fenced ({@link
   * MongoFence}): it changes a document only in the state its own read found, so a write that arrives late, after its
   * reply timed out, cannot undo a newer one. That costs one read of the batch's documents first.
   */
  @Override
  public void apply(List<EntityChanges> batch) {
    apply(batch, null, "apply changes to ");
  }

  /**
   * Applies the batch as the range owner holding {@code owner}: as {@link #apply(List)}, and every document written
   * takes the owner's epoch; a step applies only while its document's epoch is not above it, and a document of a
   * later owner's epoch stops the write ({@link MongoFence}).
   *
   * @throws io.dendrite.core.StoreFencedOutException when a later owner raised or wrote a document of the batch
   */
  @Override
  public void apply(List<EntityChanges> batch, FenceToken owner) {
    apply(batch, owner, "apply changes as " + owner.fence() + " epoch " + owner.epoch() + " to ");
  }

  /**
   * Raises the range: every document of {@code range.collection()} whose attribute lies in its bounds takes the new
   * epoch ({@code $max}), each atomically, so a former owner's write of it that has not landed yet is refused; the
   * fence's epoch is recorded in the {@value #FENCES} collection. Costs one multi-document update per takeover.
   */
  @Override
  public void raise(StoreFence.Range range) {
    BsonInt64 epoch = new BsonInt64(range.epoch());
    call(
        "raise " + range.fence() + " to " + range.epoch(),
        () -> {
          collection(FENCES)
              .updateOne(
                  eq(ID, new org.bson.BsonString(range.fence())),
                  max("epoch", epoch),
                  new UpdateOptions().upsert(true));
          return collection(range.collection())
              .updateMany(
                  and(
                      gte(range.attribute(), FieldValues.toBson(range.lowerBound())),
                      lte(range.attribute(), FieldValues.toBson(range.upperBound()))),
                  max(MongoFence.EPOCH, epoch));
        });
  }

  private void apply(List<EntityChanges> batch, FenceToken owner, String what) {
    batch.forEach(MongoStore::refuseIdField);
    Map<String, List<EntityChanges>> byCollection = new LinkedHashMap<>();
    for (EntityChanges entity : batch) {
      byCollection
          .computeIfAbsent(entity.key().collection(), collection -> new ArrayList<>())
          .add(entity);
    }
    byCollection.forEach(
        (collection, entities) ->
            call(
                what + collection,
                () -> {
                  if (fenced) {
                    MongoFence.apply(collection(collection), entities, MongoStore::writeOf, owner);
                  } else {
                    List<WriteModel<BsonDocument>> writes = new ArrayList<>();
                    for (EntityChanges entity : entities) {
                      for (ChangeSequence step : entity.changes().steps()) {
                        writes.add(
                            writeOf(
                                FieldValues.toBson(entity.key().id()),
                                idIs(entity.key()),
                                step,
                                null,
                                null));
                      }
                    }
                    collection(collection).bulkWrite(writes, new BulkWriteOptions().ordered(true));
                  }
                  return null;
                }));
  }

  @Override
  public Optional<Entity> read(EntityKey key) {
    BsonDocument document =
        call("read " + key, () -> collection(key.collection()).find(idIs(key)).first());
    return Optional.ofNullable(document).map(found -> entityOf(key.collection(), found));
  }

  @Override
  public List<Entity> readRange(
      String collection, String field, Object lowerBound, Object upperBound) {
    RangeBounds.check(collection, field, lowerBound, upperBound);
    Bson inRange =
        and(gte(field, FieldValues.toBson(lowerBound)), lte(field, FieldValues.toBson(upperBound)));
    return call(
        "read a range of " + collection,
        () ->
            collection(collection)
                .find(inRange)
                .sort(ascending(field, ID))
                .map(document -> entityOf(collection, document))
                .into(new ArrayList<>()));
  }

  @Override
  public void close() {
    if (closesClient) {
      client.close();
    }
  }

  /** The write of one step on the document {@code filter} selects, setting fence {@code token} unless null. */
  private static WriteModel<BsonDocument> writeOf(
      BsonValue id, Bson filter, ChangeSequence step, BsonValue token, BsonValue epoch) {
    Change first = step.changes().get(0);
    if (first instanceof Change.Insert insert) {
      // The id is in the replacement too: FerretDB's upsert takes it from a filter on the id alone,
      // and
      // gave a document filtered on the fence as well a new ObjectId.
      BsonDocument replacement = new BsonDocument(ID, id);
      replacement.putAll((BsonDocument) FieldValues.toBson(insert.fields()));
      if (token != null) {
        replacement.append(MongoFence.FIELD, token);
      }
      if (epoch != null) {
        replacement.append(MongoFence.EPOCH, epoch);
      }
      return new ReplaceOneModel<>(filter, replacement, new ReplaceOptions().upsert(true));
    }
    if (first instanceof Change.Delete) {
      return new DeleteOneModel<>(filter);
    }
    BsonDocument update = new BsonDocument();
    for (Change change : step.changes()) {
      FieldChange fieldChange = (FieldChange) change;
      boolean pull = change instanceof Change.Pull;
      BsonValue operand = FieldValues.toBson(fieldChange.operand());
      String operator = pull ? "$pullAll" : fieldChange.operator();
      if (!update.containsKey(operator)) {
        update.append(operator, new BsonDocument());
      }
      update
          .getDocument(operator)
          .append(fieldChange.field(), pull ? new BsonArray(List.of(operand)) : operand);
    }
    if (token != null) {
      if (!update.containsKey("$set")) {
        update.append("$set", new BsonDocument());
      }
      update.getDocument("$set").append(MongoFence.FIELD, token);
    }
    if (epoch != null) {
      if (!update.containsKey("$set")) {
        update.append("$set", new BsonDocument());
      }
      update.getDocument("$set").append(MongoFence.EPOCH, epoch);
    }
    return new UpdateOneModel<>(filter, update);
  }

  /** Refuses changes to the key field, or to the fence's. */
  private static void refuseIdField(EntityChanges entity) {
    for (Change change : entity.changes().changes()) {
      boolean touches =
          change instanceof Change.Insert insert
              ? insert.fields().containsKey(ID)
                  || insert.fields().containsKey(MongoFence.FIELD)
                  || insert.fields().containsKey(MongoFence.EPOCH)
              : change instanceof FieldChange field
                  && (field.field().equals(ID)
                      || field.field().equals(MongoFence.FIELD)
                      || field.field().equals(MongoFence.EPOCH));
      if (touches) {
        throw new IllegalArgumentException(
            "changes to "
                + entity.key()
                + " must not touch "
                + ID
                + " (the key) or "
                + MongoFence.FIELD
                + " (the fence)");
      }
    }
  }

  private static Bson idIs(EntityKey key) {
    return eq(ID, FieldValues.toBson(key.id()));
  }

  @SuppressWarnings("unchecked")
  private static Entity entityOf(String collection, BsonDocument document) {
    Map<String, Object> fields =
        new LinkedHashMap<>((Map<String, Object>) FieldValues.fromBson(document));
    Object id = fields.remove(ID);
    fields.remove(MongoFence.FIELD);
    fields.remove(MongoFence.EPOCH);
    return new Entity(new EntityKey(collection, id), fields);
  }

  private MongoCollection<BsonDocument> collection(String name) {
    return database.getCollection(name, BsonDocument.class);
  }

  private static <T> T call(String what, Supplier<T> operation) {
    try {
      return operation.get();
    } catch (MongoOperationTimeoutException e) {
      // A timeout of the whole operation (timeoutMS) may come after the request went out.
      throw new DataStoreUnavailableException(
          "MongoDB unavailable; could not " + what + ": " + e.getMessage(), e, false);
    } catch (MongoTimeoutException e) {
      // No server was selected, or no pooled connection came, in time: nothing was sent.
      throw new DataStoreUnavailableException(
          "MongoDB unavailable; could not " + what + ": " + e.getMessage(), e, true);
    } catch (MongoSocketException e) {
      throw new DataStoreUnavailableException(
          "MongoDB unavailable; could not " + what + ": " + e.getMessage(), e, false);
    } catch (MongoException e) {
      throw new DataStoreException("MongoDB failed to " + what + ": " + e.getMessage(), e);
    }
  }
}
