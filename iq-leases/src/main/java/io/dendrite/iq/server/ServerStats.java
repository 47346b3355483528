package io.dendrite.iq.server;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/** Counters reported by {@code stats}; every field is safe to bump from any event-loop thread. */
final class ServerStats {

  final LongAdder getHits = new LongAdder();
  final LongAdder getMisses = new LongAdder();
  final LongAdder leasesGranted = new LongAdder();
  final LongAdder leasesVoided = new LongAdder();
  final LongAdder leasesExpired = new LongAdder();
  final LongAdder sessionsAborted = new LongAdder();
  final LongAdder totalConnections = new LongAdder();
  final LongAdder rejectedConnections = new LongAdder();
  final AtomicInteger currentConnections = new AtomicInteger();

  /** Keyed by known command names only, so garbage input cannot grow this map. */
  private final Map<String, LongAdder> commandCounts = new ConcurrentHashMap<>();

  void countCommand(String knownCommand) {
    commandCounts.computeIfAbsent(knownCommand, k -> new LongAdder()).increment();
  }

  Map<String, Long> commandCounts() {
    Map<String, Long> counts = new TreeMap<>();
    commandCounts.forEach((name, count) -> counts.put(name, count.sum()));
    return counts;
  }
}
