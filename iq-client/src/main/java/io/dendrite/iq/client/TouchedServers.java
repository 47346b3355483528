package io.dendrite.iq.client;

import io.dendrite.iq.protocol.Reply;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * The servers a transaction or session has created state on, each with the epoch it had then. Its commands go
 * to each server on one connection ({@link ServerConnection#sendInOrder}), so they arrive in the order sent.
 * IQ servers keep a tid's or sid's record per server, so ending it means telling every one of
 * them; a server whose epoch has moved since has lost that record.
 */
final class TouchedServers {

  private final Map<ServerConnection, Long> epochs = new ConcurrentHashMap<>();

  /**
   * Records that state is about to be created on {@code server}; call before sending.
   *
   * @return false if the server already lost state created earlier by this owner
   */
  boolean touch(ServerConnection server) {
    long now = server.epoch();
    return epochs.computeIfAbsent(server, s -> now) == now;
  }

  /** Touches the server and sends a one-line-reply command; {@link Outcome#STATE_LOST} if earlier state there is gone. */
  Outcome call(ServerConnection server, OutgoingRequest command) {
    if (!touch(server)) {
      return Outcome.STATE_LOST;
    }
    return Outcome.of(server.callInOrder(command));
  }

  Set<ServerAddress> addresses() {
    return epochs.keySet().stream()
        .map(ServerConnection::address)
        .collect(Collectors.toUnmodifiableSet());
  }

  /**
   * Sends an end-of-transaction command to every touched server at once and reports the worst
   * outcome: {@link Outcome#STATE_LOST} for a server whose epoch moved or whose connection failed,
   * {@link Outcome#EXPIRED} where the server answered {@code unknownReply} (record gone).
   */
  Outcome endOnAll(Function<ServerConnection, OutgoingRequest> command, Outcome unknownReply) {
    return endOnEach(command, unknownReply).values().stream().reduce(Outcome.OK, Outcome::worst);
  }

  /** {@link #endOnAll}, sent now: completes once every touched server answered (never exceptionally). */
  CompletableFuture<Outcome> endOnAllAsync(
      Function<ServerConnection, OutgoingRequest> command, Outcome unknownReply) {
    List<CompletableFuture<Outcome>> sent = new ArrayList<>();
    epochs.forEach((server, epoch) -> sent.add(endOn(server, epoch, command, unknownReply, false)));
    return ReplyFuture.allOf(sent)
        .thenApply(
            done ->
                sent.stream().map(ServerConnection::completed).reduce(Outcome.OK, Outcome::worst));
  }

  /** {@link #endOnAll}, with each touched server's own outcome. */
  Map<ServerAddress, Outcome> endOnEach(
      Function<ServerConnection, OutgoingRequest> command, Outcome unknownReply) {
    return endOnEach(command, unknownReply, false);
  }

  /**
   * Abandons the owner's state on every touched server: like {@link #endOnAll}, but the command is also sent to a
   * server whose epoch moved. A request that timed out closed its connection, yet the server may still have
   * executed it and granted a lease under this owner's id; without the release that lease would block every other
   * taker until it expires. Ids are random UUIDs, so a release that reaches a server which never knew it (or
   * restarted) touches nothing.
   */
  Outcome abandonOnAll(Function<ServerConnection, OutgoingRequest> command, Outcome unknownReply) {
    return endOnEach(command, unknownReply, true).values().stream()
        .reduce(Outcome.OK, Outcome::worst);
  }

  private Map<ServerAddress, Outcome> endOnEach(
      Function<ServerConnection, OutgoingRequest> command,
      Outcome unknownReply,
      boolean evenIfEpochMoved) {
    Map<ServerAddress, CompletableFuture<Outcome>> sent = new LinkedHashMap<>();
    epochs.forEach(
        (server, epoch) ->
            sent.put(
                server.address(), endOn(server, epoch, command, unknownReply, evenIfEpochMoved)));
    Map<ServerAddress, Outcome> outcomes = new LinkedHashMap<>();
    sent.forEach((address, outcome) -> outcomes.put(address, ServerConnection.await(outcome)));
    return outcomes;
  }

  private static CompletableFuture<Outcome> endOn(
      ServerConnection server,
      long epoch,
      Function<ServerConnection, OutgoingRequest> command,
      Outcome unknownReply,
      boolean evenIfEpochMoved) {
    if (server.epoch() != epoch && !evenIfEpochMoved) {
      return CompletableFuture.completedFuture(Outcome.STATE_LOST);
    }
    return server
        .sendInOrder(command.apply(server))
        .handle(
            (Reply reply, Throwable failure) -> {
              if (failure != null || server.epoch() != epoch) {
                // The reply is lost with the connection: whether the server applied it is unknown.
                return Outcome.STATE_LOST;
              }
              Outcome outcome = Outcome.of(reply);
              return outcome == unknownReply ? Outcome.EXPIRED : outcome;
            });
  }
}
