package io.dendrite.spring.boot;

import io.dendrite.iq.client.IqClient;
import io.dendrite.iq.client.ServerAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.boot.actuate.health.AbstractHealthIndicator;
import org.springframework.boot.actuate.health.Health;

/**
 * Dendrite's health: DOWN when no cache server answers (every get then reads the database, and no write can be
 * acknowledged), UP otherwise, with each server's state. Per Dendrite, its buffered writes; a warning when the oldest
 * has waited longer than {@code dendrite.health.max-buffered-write-age} (the database is not keeping up, or is down)
 * or when TARDIS is in failed mode (the database refuses writes, which are being buffered): the cache tier still
 * serves, so the status stays UP, and an operator reads the warning.
 */
final class DendriteHealthIndicator extends AbstractHealthIndicator {
  private final Dendrites dendrites;
  private final Duration maxBufferedWriteAge;

  DendriteHealthIndicator(Dendrites dendrites, Duration maxBufferedWriteAge) {
    super("Dendrite health check failed");
    this.dendrites = dendrites;
    this.maxBufferedWriteAge = maxBufferedWriteAge;
  }

  @Override
  protected void doHealthCheck(Health.Builder health) {
    IqClient cache = dendrites.cache();
    Map<String, String> servers = new LinkedHashMap<>();
    boolean anyAnswers = false;
    for (ServerAddress server : cache.config().servers()) {
      try {
        cache.servers().stats(server);
        servers.put(server.toString(), "answers");
        anyAnswers = true;
      } catch (RuntimeException unreachable) {
        servers.put(server.toString(), "unreachable: " + unreachable.getMessage());
      }
    }
    health.status(anyAnswers ? "UP" : "DOWN").withDetail("servers", servers);
    if (!anyAnswers) {
      return; // the buffered writes live on the servers: nothing to read
    }
    Map<String, Object> buffered = new LinkedHashMap<>();
    List<String> warnings = new ArrayList<>();
    for (ManagedDendrite<?, ?> dendrite : dendrites.built()) {
      if (dendrite.isOpen()) {
        for (BufferedWrites writes : dendrite.buffered()) {
          buffered.put(
              dendrite.rangeName() + " " + writes.kind(),
              describe(dendrite.rangeName(), writes, warnings));
        }
      }
    }
    if (!buffered.isEmpty()) {
      health.withDetail("bufferedWrites", buffered);
    }
    if (!warnings.isEmpty()) {
      health.withDetail("warnings", warnings);
    }
  }

  private Object describe(String range, BufferedWrites writes, List<String> warnings) {
    Backlog now;
    try {
      now = writes.now();
    } catch (RuntimeException unreadable) {
      return "could not be read: " + unreadable.getMessage();
    }
    Map<String, Object> detail = new LinkedHashMap<>();
    detail.put("pending", now.pending());
    detail.put("oldestAge", now.oldest().toString());
    detail.put("pinnedBytes", now.pinnedBytes());
    if (now.mode() != null) {
      detail.put("mode", now.mode());
      if (now.mode().equals("FAILED")) {
        warnings.add(
            range
                + ": TARDIS is in failed mode: the database refuses writes, and they are buffered in the"
                + " cache tier until it answers");
      }
    }
    if (now.oldest().compareTo(maxBufferedWriteAge) > 0) {
      warnings.add(
          range
              + ": the oldest buffered write has waited "
              + now.oldest()
              + ", longer than dendrite.health.max-buffered-write-age ("
              + maxBufferedWriteAge
              + "): the database is not keeping up, or is down");
    }
    return detail;
  }
}
