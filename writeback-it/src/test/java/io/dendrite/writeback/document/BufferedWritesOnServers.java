package io.dendrite.writeback.document;

import io.dendrite.iq.client.IqClient;
import io.dendrite.iq.client.IqConnectionException;
import io.dendrite.iq.client.ServerAddress;
import io.dendrite.writeback.change.EntityKey;
import io.dendrite.writeback.kernel.BufferedWriteKey;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/**
 * What each cache server holds of the documents' buffered writes, asked of every server on its own (not through
 * the replica logic under test), so that a buffered write the engine no longer lists still shows.
 */
final class BufferedWritesOnServers {
  private BufferedWritesOnServers() {}

  /** {@code <server> holds <buffered-write key>} for every copy found on a reachable server. */
  static List<String> find(Collection<ServerAddress> servers, Collection<EntityKey> documents) {
    List<String> found = new ArrayList<>();
    for (ServerAddress server : servers) {
      try (IqClient one =
          IqClient.builder()
              .servers(List.of(server))
              .connectTimeout(Duration.ofSeconds(1))
              .requestTimeout(Duration.ofSeconds(5))
              .build()) {
        one.getAll(documents.stream().map(BufferedWriteKey::of).toList())
            .keySet()
            .forEach(key -> found.add(server + " holds " + key));
      } catch (IqConnectionException lost) {
        // a killed server holds nothing
      }
    }
    return found;
  }
}
