package io.dendrite.iq.server;

import io.dendrite.iq.protocol.MalformedRequestException;
import java.util.LinkedHashMap;
import java.util.Map;

/** {@code stats} and {@code stats settings}. */
final class StatsCommand implements CommandHandler {

  private final ServerState state;

  StatsCommand(ServerState state) {
    this.state = state;
  }

  @Override
  public void execute(Arguments args, ReplyWriter out) {
    args.requireCount(0, 1);
    if (args.size() == 0) {
      StandardCommands.writeStats(out, general());
    } else if (args.word(0).equals("settings")) {
      StandardCommands.writeStats(out, settings());
    } else {
      throw new MalformedRequestException("unknown stats group");
    }
  }

  private Map<String, Object> general() {
    ServerStats stats = state.stats;
    long now = state.now();
    Map<String, Object> values = new LinkedHashMap<>();
    values.put("pid", ProcessHandle.current().pid());
    values.put("uptime", (now - state.startedAtMillis) / 1000);
    values.put("time", now / 1000);
    values.put("run_id", state.runId);
    values.put("leaving", state.leaving ? 1 : 0);
    values.put("handover_confirmed", state.handover.confirmed());
    values.put("handover_unconfirmed", state.handover.unconfirmed());
    values.put("version", StandardCommands.VERSION);
    values.put("curr_connections", stats.currentConnections.get());
    values.put("total_connections", stats.totalConnections.sum());
    values.put("rejected_connections", stats.rejectedConnections.sum());
    values.put("pending_logins", state.pendingLogins.size());
    values.put("pending_logins_evicted", stats.pendingLoginsEvicted.sum());
    values.put("login_timeouts", stats.loginTimeouts.sum());
    values.put("replies_too_large", stats.repliesTooLarge.sum());
    values.put("reply_bytes_unsent", stats.replyBytesUnsent());
    values.put("held_bytes", state.clients.held());
    values.put("held_limit_refusals", stats.heldLimitRefusals.sum());
    values.put("limit_held_total", state.config.maxHeldTotal());
    values.put("curr_fences", state.fences.size());
    values.put("get_hits", stats.getHits.sum());
    values.put("get_misses", stats.getMisses.sum());
    values.put("curr_items", state.items.itemCount());
    values.put("bytes", state.items.unpinnedBytes() + state.items.pinnedBytes());
    values.put("unpinned_bytes", state.items.unpinnedBytes());
    values.put("pinned_items", state.items.pinnedItemCount());
    values.put("pinned_bytes", state.items.pinnedBytes());
    values.put("limit_maxbytes", state.config.memoryBytes());
    values.put("limit_pinned_maxbytes", state.config.pinnedMemoryBytes());
    values.put("evictions", state.items.evictions());
    values.put("leases_granted", stats.leasesGranted.sum());
    values.put("leases_voided", stats.leasesVoided.sum());
    values.put("leases_expired", stats.leasesExpired.sum());
    values.put("sessions_aborted", stats.sessionsAborted.sum());
    values.put("curr_leases", state.leases.size());
    values.put("curr_transactions", state.transactions.size());
    values.put("curr_sessions", state.sessions.size());
    values.put("pending_markers", state.pendingMarkers.size());
    values.put("pending_marker_bytes", state.pendingMarkers.bytes());
    values.put("pending_markers_ready", state.pendingMarkers.isReady() ? 1 : 0);
    values.put("threads", state.config.threads());
    stats.commandCounts().forEach((command, count) -> values.put("cmd_" + command, count));
    return values;
  }

  private Map<String, Object> settings() {
    IqServerConfig config = state.config;
    Map<String, Object> values = new LinkedHashMap<>();
    values.put("maxbytes", config.memoryBytes());
    values.put("pinned_maxbytes", config.pinnedMemoryBytes());
    values.put("maxconns", config.maxConnections());
    values.put("tcpport", config.port());
    values.put("interface", config.listenAddress());
    values.put("num_threads", config.threads());
    values.put("item_size_max", config.maxItemSize());
    values.put("lease_ms", config.leaseLifetime().toMillis());
    values.put("idle_timeout_ms", config.idleTimeout().toMillis());
    values.put("login_timeout_ms", config.loginTimeout().toMillis());
    values.put("max_pending_logins", config.maxPendingLogins());
    values.put("max_held_per_conn", config.maxHeldPerConnection());
    values.put("max_held_per_user", config.maxHeldPerUser());
    values.put("max_held_total", config.maxHeldTotal());
    values.put("pready_gate", config.preadyGate() ? "on" : "off");
    values.put("lapse_drops_value", config.lapseDropsValue() ? "on" : "off");
    values.put("evictions", "on");
    values.put("cas_enabled", "yes");
    return values;
  }
}
