package io.dendrite.iq.client;

import io.dendrite.iq.protocol.Reply;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * The fences of the servers of an {@link IqClient} (Dendrite's server; see {@code docs/protocol.md}, "Fences"), got
 * from {@link IqClient#fences()}. For the owner of a range, who raises the range's fence when it takes the range over
 * and guards every request it sends for the range with its epoch, so that an old owner that resumes after a pause
 * changes nothing. An ordinary cache user, whose keys have no owner, needs none of this. Thread-safe, as the client
 * is.
 */
public final class Fences {
  private final IqClient client;

  Fences(IqClient client) {
    this.client = client;
  }

  /**
   * Raises the fence {@code name} to {@code epoch} on every server (the user must be a fence user: by default, a pin
   * user), as a new owner of a range does before it serves it.
   *
   * @return each server's fence epoch now: {@code epoch}, or a larger one another owner raised it to
   * @throws IqException when a server refuses or cannot be reached
   */
  public Map<ServerAddress, Long> raise(String name, long epoch) {
    Map<ServerAddress, CompletableFuture<Reply>> sent = new LinkedHashMap<>();
    for (ServerAddress server : client.config().servers()) {
      sent.put(server, client.connection(server).send(OutgoingRequest.fence(name, epoch)));
    }
    Map<ServerAddress, Long> raised = new LinkedHashMap<>();
    sent.forEach(
        (server, reply) -> {
          Reply answer = ServerConnection.await(reply);
          String line =
              answer instanceof Reply.Status status ? status.line() : String.valueOf(answer);
          if (!line.startsWith("FENCED ")) {
            throw new IqException(server + " did not raise fence " + name + ": " + line);
          }
          raised.put(server, Long.parseUnsignedLong(line.substring("FENCED ".length()).trim()));
        });
    return raised;
  }

  /**
   * Guards every request the calling thread sends, until the scope is closed, by the fence {@code name} at {@code
   * epoch}: see {@link FenceScope}.
   */
  public FenceScope guard(String name, long epoch) {
    return FenceScope.open(name, epoch);
  }
}
