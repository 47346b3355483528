package io.dendrite.ycsb.bench;

import io.dendrite.testsupport.faults.CuttableProxy;
import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Cuts one run's database on schedule: a {@link CuttableProxy} in front of the database URL the configuration's
 * binding is given ({@code mysql.url} or {@code mongodb.url}), which the run's binding is pointed at instead; once
 * the measured run's workload starts, the proxy refuses connections (and drops the open ones) from {@link
 * Outage#atSeconds()} until {@link Outage#endSeconds()}. The database server itself, and its data, stay up, as in
 * a network partition between the application and the database.
 */
final class OutageProxy implements AutoCloseable {
  /** The properties the bindings read their database from. */
  static final List<String> URL_PROPERTIES = List.of("mysql.url", "mongodb.url");

  private final CuttableProxy proxy;
  private final String property;
  private final String routedUrl;
  private final ScheduledExecutorService clock =
      Executors.newSingleThreadScheduledExecutor(
          r -> {
            Thread thread = new Thread(r, "outage-clock");
            thread.setDaemon(true);
            return thread;
          });
  private volatile long startedAt = -1;
  private volatile long cutAt = -1;
  private volatile long restoredAt = -1;

  private OutageProxy(CuttableProxy proxy, String property, String routedUrl) {
    this.proxy = proxy;
    this.property = property;
    this.routedUrl = routedUrl;
  }

  /** A relaying proxy in front of the database {@code config}'s binding is configured with. */
  static OutageProxy inFrontOf(Configuration config) throws IOException {
    for (String property : URL_PROPERTIES) {
      String url = config.properties().get(property);
      if (url != null) {
        CuttableProxy proxy = CuttableProxy.inFrontOf(url);
        return new OutageProxy(proxy, property, proxy.routed(url));
      }
    }
    throw new IllegalArgumentException(
        "configuration "
            + config.name()
            + " names no database URL to cut ("
            + String.join(", ", URL_PROPERTIES)
            + ")");
  }

  /** {@code properties} with the database URL pointing at the proxy. */
  Map<String, String> route(Map<String, String> properties) {
    Map<String, String> routed = new LinkedHashMap<>(properties);
    routed.put(property, routedUrl);
    return routed;
  }

  /** Starts the outage's clock: the workload started now. Later calls do nothing. */
  synchronized void workloadStarted(Outage outage) {
    if (startedAt >= 0) {
      return;
    }
    startedAt = System.currentTimeMillis();
    clock.schedule(
        () -> {
          proxy.cut();
          cutAt = System.currentTimeMillis();
        },
        outage.atSeconds(),
        TimeUnit.SECONDS);
    clock.schedule(
        () -> {
          proxy.restore();
          restoredAt = System.currentTimeMillis();
        },
        outage.endSeconds(),
        TimeUnit.SECONDS);
  }

  /** When the workload started, in milliseconds since the epoch; empty before. */
  OptionalLong startedAtMillis() {
    return startedAt < 0 ? OptionalLong.empty() : OptionalLong.of(startedAt);
  }

  /** When the database was cut; empty if the run ended first. */
  OptionalLong cutAtMillis() {
    return cutAt < 0 ? OptionalLong.empty() : OptionalLong.of(cutAt);
  }

  /** When the database was restored; empty if the run ended first. */
  OptionalLong restoredAtMillis() {
    return restoredAt < 0 ? OptionalLong.empty() : OptionalLong.of(restoredAt);
  }

  /** Stops the clock and the proxy (restoring nothing: the run is over). */
  @Override
  public void close() {
    clock.shutdownNow();
    proxy.close();
  }
}
