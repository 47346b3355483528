package io.dendrite.writeback;

import io.dendrite.iq.client.IqClient;
import io.dendrite.iq.client.IqConnectionException;
import io.dendrite.iq.client.ServerAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Tells when a cache server came back empty: it answers after having been down, or answers as a new run (its
 * {@code stats} {@code run_id}, or {@code pid} and start time on servers without one, changed), as after a restart
 * that reused the address between two looks. A server that does not answer in time is neither down nor back: it may
 * be stalled with everything it held. Not thread-safe: one repair thread looks.
 */
final class ServerRuns {
  /** The run of a server that was down at the last look. */
  private static final String DOWN = "";

  private final IqClient cache;
  private final Map<ServerAddress, String> lastSeen = new HashMap<>();

  ServerRuns(IqClient cache) {
    this.cache = cache;
  }

  /**
   * Looks at every server once (one {@code stats} each) and returns those that are back since the previous look.
   * The first look returns every server that answers: nothing is known of what happened before it.
   */
  List<ServerAddress> backSinceLastLook() {
    List<ServerAddress> back = new ArrayList<>();
    for (ServerAddress server : cache.config().servers()) {
      String run;
      try {
        run = runOf(cache.stats(server));
      } catch (IqConnectionException unreachable) {
        if (!unreachable.timedOut()) {
          lastSeen.put(server, DOWN);
        }
        continue;
      }
      String before = lastSeen.put(server, run);
      if (!run.equals(before)) {
        back.add(server);
      }
    }
    return back;
  }

  private static String runOf(Map<String, String> stats) {
    String runId = stats.get("run_id");
    if (runId != null) {
      return runId;
    }
    long startedAt = Long.parseLong(stats.getOrDefault("time", "0")) - Long.parseLong(stats.getOrDefault("uptime", "0"));
    return stats.getOrDefault("pid", "?") + "@" + startedAt;
  }
}
