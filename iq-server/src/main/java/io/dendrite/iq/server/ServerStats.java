package io.dendrite.iq.server;

import io.netty.channel.Channel;
import io.netty.channel.ChannelOutboundBuffer;
import java.util.Map;
import java.util.Set;
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
  final LongAdder repliesTooLarge = new LongAdder();
  final LongAdder heldLimitRefusals = new LongAdder();
  final LongAdder loginTimeouts = new LongAdder();
  final LongAdder pendingLoginsEvicted = new LongAdder();
  final AtomicInteger currentConnections = new AtomicInteger();

  /** The open connections, for what they hold (replies written but not yet sent). */
  final Set<Channel> openChannels = ConcurrentHashMap.newKeySet();

  /** Replies written to every connection and not yet sent to the peer, in bytes. */
  long replyBytesUnsent() {
    long unsent = 0;
    for (Channel channel : openChannels) {
      ChannelOutboundBuffer buffer = channel.unsafe().outboundBuffer();
      unsent += buffer == null ? 0 : buffer.totalPendingWriteBytes();
    }
    return unsent;
  }

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
