package io.dendrite.ycsb.bench;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import io.dendrite.testsupport.MongoTestDatabase;
import io.dendrite.testsupport.MySqlTestDatabase;
import io.dendrite.testsupport.RealServers;
import java.sql.Connection;
import java.sql.Statement;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The counter sources against the real servers, read twice around a few statements of a client of their own.
 * The servers may be serving other tests meanwhile: the counts may rise by more, never by less.
 */
@ExtendWith(RealServers.class)
class StatusCountersIT {

  @Test
  void mariaDbCountsTheStatementsAndCommitsOfAnotherClient(MySqlTestDatabase database)
      throws Exception {
    try (StatusCounters.Session counters = new MySqlStatusCounters(database.jdbcUrl()).open();
        Connection client = database.connect();
        Statement s = client.createStatement()) {
      s.execute("CREATE TABLE t (id INT PRIMARY KEY, v INT) ENGINE=InnoDB");
      StatusCounts before = counters.read();

      for (int i = 0; i < 5; i++) {
        s.executeUpdate("INSERT INTO t VALUES (" + i + ", " + i + ")"); // each autocommitted
      }
      s.executeQuery("SELECT v FROM t WHERE id = 3").close();
      StatusCounts after = counters.read();

      assertThat(after.statements().getAsLong() - before.statements().getAsLong())
          .isGreaterThanOrEqualTo(6);
      assertThat(after.commits().getAsLong() - before.commits().getAsLong())
          .isGreaterThanOrEqualTo(5);
      assertThat(after.fsyncs().getAsLong()).isGreaterThanOrEqualTo(before.fsyncs().getAsLong());
    }
  }

  /**
   * MongoDB answers {@code serverStatus} with opcounters; FerretDB 1.24 does not, and the read then says so,
   * for the report's warning. Either way the read must not pass off a missing count as a number.
   */
  @Test
  void mongoCountsTheCommandsOfAnotherClientOrSaysItCannot(MongoTestDatabase database)
      throws Exception {
    try (StatusCounters.Session counters =
            new MongoStatusCounters(database.connectionString()).open();
        MongoClient client = MongoClients.create(database.connectionString())) {
      MongoCollection<Document> collection = client.getDatabase(database.name()).getCollection("t");
      StatusCounts before;
      try {
        before = counters.read();
      } catch (IllegalStateException e) {
        assertThat(e).hasMessageContaining("has no opcounters");
        return;
      }
      for (int i = 0; i < 5; i++) {
        collection.insertOne(new Document("_id", i));
      }
      collection.find(new Document("_id", 3)).first();
      StatusCounts after = counters.read();

      assertThat(after.statements().getAsLong() - before.statements().getAsLong())
          .isGreaterThanOrEqualTo(6);
      assertThat(after.commits()).isEmpty();
      assertThat(after.fsyncs()).isEmpty();
    }
  }
}
