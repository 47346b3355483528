package io.dendrite.ycsb.bench;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;
import org.bson.Document;

/**
 * A MongoDB server's own count of statements, from {@code serverStatus}'s {@code opcounters}: inserts,
 * queries, updates, deletes, getMores and other commands together (the driver's own heartbeats among the
 * last). MongoDB keeps no count of commits or fsyncs that compares with a SQL server's: those are empty.
 * FerretDB 1.24 answers {@code serverStatus} without {@code opcounters}; reading it then fails, saying so.
 */
final class MongoStatusCounters implements StatusCounters {

  private static final List<String> OPERATIONS =
      List.of("insert", "query", "update", "delete", "getmore", "command");

  /** A read must not hold up the thread that follows YCSB's output for long when the server is gone. */
  private static final int TIMEOUT_SECONDS = 5;

  private final String url;

  MongoStatusCounters(String url) {
    this.url = url;
  }

  @Override
  public Session open() {
    MongoClient client =
        MongoClients.create(
            MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(url))
                .applyToClusterSettings(
                    b -> b.serverSelectionTimeout(TIMEOUT_SECONDS, TimeUnit.SECONDS))
                .applyToSocketSettings(
                    b ->
                        b.connectTimeout(TIMEOUT_SECONDS, TimeUnit.SECONDS)
                            .readTimeout(TIMEOUT_SECONDS, TimeUnit.SECONDS))
                .build());
    try {
      client
          .getDatabase("admin")
          .runCommand(new Document("ping", 1)); // connects now, before the run
    } catch (RuntimeException e) {
      client.close();
      throw e;
    }
    return new Session() {
      /** The serverStatus commands sent so far: each is counted in {@code opcounters.command}. */
      private long reads;

      @Override
      public StatusCounts read() {
        reads++;
        Document status = client.getDatabase("admin").runCommand(new Document("serverStatus", 1));
        Document counters = status.get("opcounters", Document.class);
        if (counters == null) {
          throw new IllegalStateException(
              "serverStatus of " + status.get("process", "the server") + " has no opcounters");
        }
        long statements = 0;
        for (String op : OPERATIONS) {
          Object count = counters.get(op);
          if (!(count instanceof Number n)) {
            throw new IllegalStateException("serverStatus opcounters has no " + op + " count");
          }
          statements += n.longValue();
        }
        return new StatusCounts(
            OptionalLong.of(statements - reads), OptionalLong.empty(), OptionalLong.empty());
      }

      @Override
      public void close() {
        client.close();
      }
    };
  }
}
