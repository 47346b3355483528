package io.dendrite.iq.server;

import io.dendrite.iq.protocol.MalformedRequestException;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * The stock memcached text commands, with their stock syntax, plus the pinning extensions
 * ({@code [<pimem>]} after {@code <bytes>}, {@code unpin}, {@code mappend}). Plain writes leave
 * leases alone and {@code delete} voids them, exactly as IQ-Twemcached's compatibility matrix says.
 */
final class StandardCommands {

  static final String VERSION = "1.6.0-dendrite-iq";

  private final ServerState state;

  StandardCommands(ServerState state) {
    this.state = state;
  }

  void registerAll(CommandTable table) {
    table.register("get", false, (args, out) -> get(args, out, false));
    table.register("gets", false, (args, out) -> get(args, out, true));
    table.register("set", true, this::set);
    table.register("add", true, this::add);
    table.register("replace", true, this::replace);
    table.register("append", true, (args, out) -> concat(args, out, true));
    table.register("prepend", true, (args, out) -> concat(args, out, false));
    table.register("cas", true, this::cas);
    table.register("delete", true, this::delete);
    table.register("incr", true, (args, out) -> arithmetic(args, out, true));
    table.register("decr", true, (args, out) -> arithmetic(args, out, false));
    table.register("touch", true, this::touch);
    table.register("flush_all", true, this::flushAll);
    table.register("cache_memlimit", true, this::cacheMemlimit);
    table.register(
        "version",
        false,
        (args, out) -> {
          args.requireCount(0, 0);
          out.line("VERSION " + VERSION);
        });
    table.register(
        "verbosity",
        true,
        (args, out) -> {
          args.requireCount(1, 1);
          args.number(0);
          out.line("OK");
        });
    table.register("unpin", true, this::unpin);
    table.register("mappend", true, this::multiAppend);
    table.register("fence", false, this::fence);
    table.register("stats", false, new StatsCommand(state));
  }

  private void get(Arguments args, ReplyWriter out, boolean withCas) {
    if (args.size() == 0) {
      throw new MalformedRequestException("bad command line format");
    }
    for (int i = 0; i < args.size(); i++) {
      args.key(i);
    }
    for (int i = 0; i < args.size(); i++) {
      String key = args.word(i);
      Item item;
      try (KeyLocks.Held held = state.locks.lock(key)) {
        item = state.items.get(key);
      }
      if (item == null) {
        state.stats.getMisses.increment();
        continue;
      }
      state.stats.getHits.increment();
      out.line(
          "VALUE "
              + key
              + " "
              + item.flags()
              + " "
              + item.value().length
              + (withCas ? " " + item.cas() : ""));
      out.data(item.value());
    }
    out.line("END");
  }

  private void set(Arguments args, ReplyWriter out) {
    StorageRequest request = StorageRequest.parse(args, StorageRequest.Shape.PIMEM, state);
    try (KeyLocks.Held held = state.locks.lock(request.key())) {
      state.requireMayChange(args.client(), request.key(), request.pin());
      out.line(state.store(request.key(), request.toItem()));
    }
  }

  private void add(Arguments args, ReplyWriter out) {
    StorageRequest request = StorageRequest.parse(args, StorageRequest.Shape.PIMEM, state);
    try (KeyLocks.Held held = state.locks.lock(request.key())) {
      state.requireMayChange(args.client(), request.key(), request.pin());
      out.line(
          state.items.get(request.key()) != null
              ? "NOT_STORED"
              : state.store(request.key(), request.toItem()));
    }
  }

  private void replace(Arguments args, ReplyWriter out) {
    StorageRequest request = StorageRequest.parse(args, StorageRequest.Shape.PIMEM, state);
    try (KeyLocks.Held held = state.locks.lock(request.key())) {
      state.requireMayChange(args.client(), request.key(), request.pin());
      out.line(
          state.items.get(request.key()) == null
              ? "NOT_STORED"
              : state.store(request.key(), request.toItem()));
    }
  }

  /** append/prepend: flags and expiry stay those of the existing item; pinning is sticky. */
  private void concat(Arguments args, ReplyWriter out, boolean append) {
    StorageRequest request = StorageRequest.parse(args, StorageRequest.Shape.PIMEM, state);
    try (KeyLocks.Held held = state.locks.lock(request.key())) {
      state.requireMayChange(args.client(), request.key(), request.pin());
      Item current = state.items.get(request.key());
      if (current == null) {
        out.line("NOT_STORED");
        return;
      }
      byte[] value =
          append
              ? Bytes.concat(current.value(), request.data())
              : Bytes.concat(request.data(), current.value());
      out.line(
          storeIfFits(
              request.key(),
              current.withValue(value).withPinned(current.pinned() || request.pin())));
    }
  }

  private void cas(Arguments args, ReplyWriter out) {
    StorageRequest request = StorageRequest.parse(args, StorageRequest.Shape.CAS, state);
    try (KeyLocks.Held held = state.locks.lock(request.key())) {
      state.requireMayChange(args.client(), request.key(), request.pin());
      Item current = state.items.get(request.key());
      if (current == null) {
        out.line("NOT_FOUND");
      } else if (current.cas() != request.number()) {
        out.line("EXISTS");
      } else {
        out.line(state.store(request.key(), request.toItem()));
      }
    }
  }

  /** {@code delete <key> [0] [noreply]}: also voids the key's leases. */
  private void delete(Arguments args, ReplyWriter out) {
    args.requireCount(1, 2);
    if (args.size() == 2 && !args.word(1).equals("0")) {
      throw new MalformedRequestException("bad command line format. Usage: delete <key> [noreply]");
    }
    String key = args.key(0);
    try (KeyLocks.Held held = state.locks.lock(key)) {
      state.requireMayChange(args.client(), key, false);
      state.voidLeases(key);
      out.line(state.items.remove(key) ? "DELETED" : "NOT_FOUND");
    }
  }

  private void arithmetic(Arguments args, ReplyWriter out, boolean increment) {
    args.requireCount(2, 2);
    String key = args.key(0);
    long delta = args.delta(1);
    try (KeyLocks.Held held = state.locks.lock(key)) {
      Item current = state.items.get(key);
      if (current == null) {
        out.line("NOT_FOUND");
        return;
      }
      state.requireMayChange(args.client(), key, false);
      byte[] value = Arithmetic.apply(current.value(), delta, increment);
      String stored = state.store(key, current.withValue(value));
      out.line(stored.equals("STORED") ? new String(value, StandardCharsets.US_ASCII) : stored);
    }
  }

  private void touch(Arguments args, ReplyWriter out) {
    args.requireCount(2, 2);
    String key = args.key(0);
    long expiry = state.expiryOf(args.exptime(1));
    try (KeyLocks.Held held = state.locks.lock(key)) {
      Item current = state.items.get(key);
      if (current == null) {
        out.line("NOT_FOUND");
        return;
      }
      state.requireMayChange(args.client(), key, false);
      state.items.put(key, current.withExpiry(expiry));
      out.line("TOUCHED");
    }
  }

  /**
   * {@code flush_all [<delay>] [noreply]}: drops unpinned items now or after the delay; pinned items and leases stay,
   * and so do reserved keys when the sender may not change them.
   */
  private void flushAll(Arguments args, ReplyWriter out) {
    args.requireCount(0, 1);
    state.flush(args.size() == 1 ? args.number(0) : 0, args.client());
    out.line("OK");
  }

  /**
   * {@code cache_memlimit <megabytes> [noreply]}: sets the budget for unpinned items ({@code --memory}) from now on,
   * with memcached's replies: {@code OK}; {@code ERROR} for a word that is not a 32-bit unsigned number; {@code
   * MEMLIMIT_TOO_SMALL ...} below 8 MiB; {@code MEMLIMIT_ADJUST_FAILED ...} above 10^9 MiB, which must have meant
   * bytes. A smaller budget evicts unpinned items at once, least recently used first, where memcached frees its slab
   * pages over time. Pinned items and the pinned quota stay as they are, and so does {@code --max-held-total}, whose
   * default was taken from {@code --memory} at start.
   *
   * <p>Only a user who may change pinned items and reserved keys may send it ({@code --pin-users}; every user without
   * them). That is {@code flush_all}'s rule made whole: a smaller budget drops unpinned items as a flush does, and a
   * flush from another user leaves the reserved keys (write-back's locks are unpinned items; dropping one lets two
   * writers in), but eviction cannot choose what it drops, so the command is the pin users' alone. The fence users'
   * rule is about who owns a range, not the server's memory.
   */
  private void cacheMemlimit(Arguments args, ReplyWriter out) {
    args.requireCount(1, 1);
    if (!args.client().mayChangePinned()) {
      throw new NotPermittedException(
          "user " + args.client().user() + " may not change the memory limit");
    }
    long megabytes;
    try {
      megabytes = Long.parseLong(args.word(0));
    } catch (NumberFormatException e) {
      megabytes = -1;
    }
    if (megabytes < 0 || megabytes > 0xFFFF_FFFFL) {
      out.line("ERROR");
    } else if (megabytes < 8) {
      out.line("MEMLIMIT_TOO_SMALL cannot set maxbytes to less than 8m");
    } else if (megabytes > 1_000_000_000) {
      out.line("MEMLIMIT_ADJUST_FAILED input value is megabytes not bytes");
    } else {
      state.items.setMemoryLimit(megabytes << 20);
      out.line("OK");
    }
  }

  /** {@code unpin <key> [noreply]}: the item stays, but becomes evictable and leaves the quota. */
  private void unpin(Arguments args, ReplyWriter out) {
    args.requireCount(1, 1);
    String key = args.key(0);
    try (KeyLocks.Held held = state.locks.lock(key)) {
      Item current = state.items.get(key);
      if (current == null) {
        out.line("NOT_FOUND");
        return;
      }
      state.requireMayChange(args.client(), key, false);
      if (current.pinned()) {
        state.items.put(key, current.withPinned(false));
      }
      out.line("OK");
    }
  }

  /**
   * {@code mappend <key> <pimem> <bytes1> [<bytes2> ...] [noreply]}: appends every block in order
   * to one key in one round trip, creating the key when absent (CPR batches log records this way).
   */
  private void multiAppend(Arguments args, ReplyWriter out) {
    args.requireCount(3, Integer.MAX_VALUE);
    String key = args.key(0);
    boolean pin = args.pimem(1);
    byte[] appended = Bytes.concat(args.blocks().toArray(new byte[0][]));
    try (KeyLocks.Held held = state.locks.lock(key)) {
      state.requireMayChange(args.client(), key, pin);
      Item current = state.items.get(key);
      Item next =
          current == null
              ? new Item(appended, 0, 0, 0, pin)
              : current
                  .withValue(Bytes.concat(current.value(), appended))
                  .withPinned(current.pinned() || pin);
      out.line(storeIfFits(key, next));
    }
  }

  /**
   * {@code fence <name> <epoch>}: raises a range's fence (see {@link Fences}); {@code FENCED <epoch now>}. Only a
   * fence user ({@code --fence-users}, by default the pin users) may: a stranger's raised fence would shut the owner
   * out. An epoch past {@link Fences#MAX_EPOCH} is refused: no owner would ever reach it, and the range could never
   * be served again while the server lives.
   */
  private void fence(Arguments args, ReplyWriter out) {
    args.requireCount(2, 2);
    String name = args.key(0);
    long epoch = args.number(1);
    if (!args.client().mayRaiseFences()) {
      throw new NotPermittedException("user " + args.client().user() + " may not raise fences");
    }
    if (Long.compareUnsigned(epoch, Fences.MAX_EPOCH) > 0) {
      throw new MalformedRequestException(
          "fence epoch "
              + Long.toUnsignedString(epoch)
              + " is beyond "
              + Fences.MAX_EPOCH
              + ", the largest an owner can have; fence "
              + name
              + " is unchanged");
    }
    long standing = state.fences.raise(name, epoch, args.client());
    // Nothing runs under an older epoch any more: what was leased under one is of no use to anyone.
    state.voidLeasesFencedOut(name, standing);
    out.line("FENCED " + standing);
  }

  private String storeIfFits(String key, Item item) {
    if (item.value().length > state.config.maxItemSize()) {
      return "SERVER_ERROR object too large for cache";
    }
    return state.store(key, item);
  }

  /** Named values for {@code stats}; a map keeps the reply code one loop. */
  static void writeStats(ReplyWriter out, Map<String, ?> stats) {
    stats.forEach((name, value) -> out.line("STAT " + name + " " + value));
    out.line("END");
  }
}
