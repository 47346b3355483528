package io.dendrite.writeback.kernel;

import io.dendrite.iq.client.IqClient;
import io.dendrite.iq.client.IqConnectionException;
import io.dendrite.iq.client.ServerAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Tells when a cache server came back, and how: it answers after having been down, or answers as a new run (its
 * {@code stats} {@code run_id}, or {@code pid} and start time on servers without one, changed), as after a restart
 * that reused the address between two looks. Also tells how long a server has been down. Down means a fresh request
 * is refused or dropped; a server that does not answer in time is neither down nor back: it may be stalled with
 * everything it held. Looked at by one repair thread; {@link #down} may be asked from any.
 */
final class ServerRuns {

  /**
   * A server that answers again. {@code sameRun}: it was down and answers as the run it was before, so it was cut
   * off, not restarted, and kept copies that may have missed changes meanwhile.
   */
  public record Back(ServerAddress server, boolean sameRun) {}

  private final IqClient cache;
  private final Map<ServerAddress, String> lastRun = new HashMap<>();

  /** The servers down at the last look, with the {@link System#nanoTime()} of the first look that found them down. */
  private final Map<ServerAddress, Long> downSince = new ConcurrentHashMap<>();

  /** The servers that said at the last look that they are leaving (stopping after a handover). */
  private final Set<ServerAddress> leaving = ConcurrentHashMap.newKeySet();

  private long lastLookNanos = System.nanoTime();

  public ServerRuns(IqClient cache) {
    this.cache = cache;
  }

  /**
   * Looks at every server once (one {@code stats} each) and returns those that are back since the previous look.
   * The first look returns every server that answers: nothing is known of what happened before it.
   */
  public List<Back> backSinceLastLook() {
    List<Back> back = new ArrayList<>();
    long previousLook = lastLookNanos;
    lastLookNanos = System.nanoTime();
    for (ServerAddress server : cache.config().servers()) {
      String run;
      try {
        Map<String, String> stats = cache.servers().stats(server);
        run = runOf(stats);
        if ("1".equals(stats.get("leaving"))) {
          leaving.add(server);
        } else {
          leaving.remove(server);
        }
      } catch (IqConnectionException unreachable) {
        // A connection left from before a restart can fail while a fresh one is answered: ask again
        // to be sure.
        if (!unreachable.timedOut() && cache.servers().isDown(server)) {
          downSince.putIfAbsent(server, System.nanoTime());
          leaving.remove(server); // it has left
        }
        continue;
      }
      // Down at a look, or found down by a request in between (a writer that left its replicas out
      // of a change): a short cut between two looks counts too.
      boolean wasDown =
          downSince.remove(server) != null
              | cache.servers().downSeenAt(server).stream().anyMatch(at -> at - previousLook > 0);
      String before = lastRun.put(server, run);
      if (wasDown || !run.equals(before)) {
        back.add(new Back(server, wasDown && run.equals(before)));
      }
    }
    return back;
  }

  /**
   * Asks each server that was not down at the last look whether it is leaving (one {@code stats} each), between
   * looks: a server that says so is looked at at once, so that its copies move while it still serves. Returns
   * whether one said so that is not yet among {@link #leaving}. A server that fails to answer is left to the looks.
   */
  public boolean newlyLeaving() {
    for (ServerAddress server : cache.config().servers()) {
      if (downSince.containsKey(server) || leaving.contains(server)) {
        continue;
      }
      try {
        if ("1".equals(cache.servers().stats(server).get("leaving"))) {
          return true;
        }
      } catch (RuntimeException unanswered) {
        // the next look finds out what it is
      }
    }
    return false;
  }

  /** The servers that said at the last look that they are leaving: their copies must move before they stop. */
  public Set<ServerAddress> leaving() {
    return Set.copyOf(leaving);
  }

  /** The servers that were down at the last look, with how long each has been down since. */
  public Map<ServerAddress, Duration> down() {
    long now = System.nanoTime();
    Map<ServerAddress, Duration> down = new LinkedHashMap<>();
    downSince.forEach((server, since) -> down.put(server, Duration.ofNanos(now - since)));
    return down;
  }

  private static String runOf(Map<String, String> stats) {
    String runId = stats.get("run_id");
    if (runId != null) {
      return runId;
    }
    long startedAt =
        Long.parseLong(stats.getOrDefault("time", "0"))
            - Long.parseLong(stats.getOrDefault("uptime", "0"));
    return stats.getOrDefault("pid", "?") + "@" + startedAt;
  }
}
