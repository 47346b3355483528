package io.dendrite.testsupport;

import static com.mongodb.client.model.Filters.and;
import static com.mongodb.client.model.Filters.eq;
import static com.mongodb.client.model.Filters.gte;
import static com.mongodb.client.model.Filters.lte;
import static com.mongodb.client.model.Sorts.ascending;
import static com.mongodb.client.model.Updates.combine;
import static com.mongodb.client.model.Updates.inc;
import static com.mongodb.client.model.Updates.set;
import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.bulk.BulkWriteResult;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.DeleteOneModel;
import com.mongodb.client.model.InsertOneModel;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.WriteModel;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

@ExtendWith(RealServers.class)
class MongoFixtureIT {

  @Test
  void insertRangeFindUpdateAndBulkWrite(MongoTestDatabase database) {
    try (MongoClient client = MongoClients.create(database.connectionString())) {
      MongoCollection<Document> users =
          client.getDatabase(database.name()).getCollection("usertable");
      users.insertMany(
          IntStream.rangeClosed(1, 20)
              .mapToObj(id -> new Document("_id", id).append("score", id * 10).append("visits", 0))
              .toList());

      List<Integer> ids =
          users
              .find(and(gte("score", 50), lte("score", 120)))
              .sort(ascending("score"))
              .limit(3)
              .map(doc -> doc.getInteger("_id"))
              .into(new ArrayList<>());
      assertThat(ids).containsExactly(5, 6, 7);

      users.updateOne(eq("_id", 5), combine(set("name", "five"), inc("visits", 2)));
      users.updateOne(eq("_id", 5), inc("visits", 3));
      Document five = users.find(eq("_id", 5)).first();
      assertThat(five).isNotNull();
      assertThat(five.getString("name")).isEqualTo("five");
      assertThat(five.getInteger("visits")).isEqualTo(5);

      List<WriteModel<Document>> batch =
          List.of(
              new InsertOneModel<>(
                  new Document("_id", 21).append("score", 210).append("visits", 0)),
              new UpdateOneModel<>(eq("_id", 1), inc("visits", 1)),
              new DeleteOneModel<>(eq("_id", 2)));
      BulkWriteResult result = users.bulkWrite(batch);
      assertThat(result.getInsertedCount()).isEqualTo(1);
      assertThat(result.getModifiedCount()).isEqualTo(1);
      assertThat(result.getDeletedCount()).isEqualTo(1);
      assertThat(users.countDocuments()).isEqualTo(20);
      assertThat(users.find(eq("_id", 1)).first().getInteger("visits")).isEqualTo(1);
    }
  }
}
