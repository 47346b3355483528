package io.dendrite.iq.server;

import io.dendrite.iq.protocol.MalformedRequestException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.BiPredicate;

/**
 * {@code stats}, {@code stats settings}, {@code stats items} and {@code stats cachedump}.
 *
 * <p>This server has no slab classes: memcached sorts items into up to 63 of them by size, and {@code stats items}
 * and {@code stats cachedump} speak of one class at a time. Here every item is in class {@value #ALL_ITEMS_CLASS}
 * (the class memcached's smallest items go to): {@code stats items} reports that class alone, as memcached reports
 * only the classes that hold items, and {@code stats cachedump} lists every item under it and none under another
 * class id memcached accepts. A client that asks each class {@code stats items} names, or every id in turn, so sees
 * each key once; one that treated every class as the whole store would see each key 63 times.
 *
 * <p>Nothing here is permission-checked beyond the login every command needs: any logged-in user may {@code get}
 * any key (the pin users' and reserved prefixes' rules are about changes), so listing the keys shows a user nothing
 * it may not read.
 */
final class StatsCommand implements CommandHandler {

  /** The class that holds every item (see above). */
  static final int ALL_ITEMS_CLASS = 1;

  /** memcached's {@code MAX_NUMBER_OF_SLAB_CLASSES}: a larger class id is {@code CLIENT_ERROR Illegal slab id}. */
  static final int SLAB_CLASS_IDS = 64;

  /** memcached stops a cachedump before its reply, {@code END} included, would pass 2 MiB. */
  static final int CACHEDUMP_MAX_BYTES = 2 << 20;

  private final ServerState state;

  StatsCommand(ServerState state) {
    this.state = state;
  }

  @Override
  public void execute(Arguments args, ReplyWriter out) {
    if (args.size() == 0) {
      StandardCommands.writeStats(out, general());
      return;
    }
    switch (args.word(0)) {
      case "settings" -> {
        args.requireCount(1, 1);
        StandardCommands.writeStats(out, settings());
      }
      case "items" -> {
        args.requireCount(1, 1);
        StandardCommands.writeStats(out, items());
      }
      case "cachedump" -> cachedump(args, out);
      default -> throw new MalformedRequestException("unknown stats group");
    }
  }

  /**
   * {@code stats cachedump <class> <limit>}: {@code ITEM <key> [<bytes> b; <exptime> s]} per item, {@code END};
   * {@code <exptime>} is a Unix time, {@code 0} for never, and {@code <limit>} {@code 0} lists all. As in memcached,
   * the listing stops before the reply would pass {@link #CACHEDUMP_MAX_BYTES}, whatever the limit.
   */
  private void cachedump(Arguments args, ReplyWriter out) {
    if (args.size() < 3) {
      throw new MalformedRequestException("bad command line"); // memcached's words for it
    }
    args.requireCount(3, 3);
    long slabClass = args.number(1);
    long limit = args.number(2);
    if (Long.compareUnsigned(slabClass, SLAB_CLASS_IDS) >= 0) {
      throw new MalformedRequestException("Illegal slab id");
    }
    if (slabClass == ALL_ITEMS_CLASS) {
      state.items.visitLive(new CachedumpLines(out, limit));
    }
    out.line("END");
  }

  /** Writes one cachedump line an item, and says when to stop: at the limit, or before the 2 MiB cap. */
  private static final class CachedumpLines implements BiPredicate<String, Item> {
    private final ReplyWriter out;
    private final long limit;
    private long shown;
    private long bytes = "END\r\n".length();

    CachedumpLines(ReplyWriter out, long limit) {
      this.out = out;
      this.limit = limit;
    }

    @Override
    public boolean test(String key, Item item) {
      String line =
          "ITEM "
              + key
              + " ["
              + item.value().length
              + " b; "
              + item.expiresAtMillis() / 1000
              + " s]";
      bytes += line.length() + 2;
      if (bytes > CACHEDUMP_MAX_BYTES) {
        return false;
      }
      out.line(line);
      shown++;
      return limit == 0 || Long.compareUnsigned(shown, limit) < 0;
    }
  }

  /** memcached's {@code stats items}, for the one class this server has, when it holds items. */
  private Map<String, Object> items() {
    Map<String, Object> values = new LinkedHashMap<>();
    long count = state.items.itemCount();
    if (count > 0) {
      String prefix = "items:" + ALL_ITEMS_CLASS + ":";
      values.put(prefix + "number", count);
      values.put(prefix + "evicted", state.items.evictions());
    }
    return values;
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
    values.put("limit_maxbytes", state.items.memoryLimit());
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
    values.put("maxbytes", state.items.memoryLimit());
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
