package io.dendrite.iq.server;

import io.dendrite.iq.protocol.MalformedRequestException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The session (C/O lease) family with IQ-Twemcached's names, argument order and reply shapes.
 * C leases are shared reads; an O lease is one session's exclusive ownership of a key and
 * quarantines it like a Q-ref (or, from {@code oqreg}, a Q-inv) lease. The writer wins: taking an
 * O lease aborts the key's C readers; asking for a key another session owns aborts the asker.
 *
 * <p>Differences from IQ-Twemcached, all on the safe side: every {@code oqappend} delta is kept;
 * {@code oqswap}/{@code oqwrite}/{@code oqadd} accept the optional pimem field; batch commands
 * check every key before changing any, so they never half-apply; {@code dcommit}/{@code dabort}
 * leave TTLs alone; an {@code oqswap} keeps the Q lease until the session ends.
 */
final class SessionCommands {

  private final ServerState state;

  SessionCommands(ServerState state) {
    this.state = state;
  }

  void registerAll(CommandTable table) {
    table.register("ciget", false, this::ciget);
    table.register("cogets", false, this::cogets);
    table.register("oqread", true, this::oqread);
    table.register("oqswap", true, (args, out) -> singleWrite(args, out, WriteKind.SWAP));
    table.register("oqwrite", true, (args, out) -> singleWrite(args, out, WriteKind.WRITE));
    table.register("oqadd", true, (args, out) -> singleWrite(args, out, WriteKind.ADD));
    table.register("oqappend", true, (args, out) -> singleConcat(args, out, true));
    table.register("oqprepend", true, (args, out) -> singleConcat(args, out, false));
    table.register("oqincr", true, (args, out) -> arithmetic(args, out, true));
    table.register("oqdecr", true, (args, out) -> arithmetic(args, out, false));
    table.register("oqreg", true, this::oqreg);
    table.register("oqappends", false, (args, out) -> batch(args, out, true));
    table.register("oqswaps", false, (args, out) -> batch(args, out, false));
    table.register("validate", true, this::validate);
    table.register("dcommit", true, this::dcommit);
    table.register("dabort", true, (args, out) -> end(args, out, false));
    table.register("counlease", true, (args, out) -> end(args, out, true));
  }

  /** Outcome of a C or O read of one key. */
  private record ReadResult(Outcome outcome, String label, Item item, long token) {
    enum Outcome {
      VALUE,
      LEASE,
      NO_VALUE,
      RETRY,
      ABORT
    }

    static final ReadResult NO_VALUE = new ReadResult(Outcome.NO_VALUE, null, null, 0);
    static final ReadResult RETRY = new ReadResult(Outcome.RETRY, null, null, 0);
    static final ReadResult ABORT = new ReadResult(Outcome.ABORT, null, null, 0);

    static ReadResult value(String label, Item item) {
      return new ReadResult(Outcome.VALUE, label, item, 0);
    }

    static ReadResult lease(long token) {
      return new ReadResult(Outcome.LEASE, null, null, token);
    }
  }

  /** {@code ciget <sid> <key> <token>}. */
  private void ciget(Arguments args, ReplyWriter out) {
    args.requireCount(3, 3);
    String sid = args.tid(0);
    String key = args.key(1);
    long token = args.number(2);
    SessionTable.Session session = begin(sid, args.client(), out);
    if (session == null) {
      return;
    }
    ReadResult result;
    try (KeyLocks.Held held = state.locks.lock(key)) {
      result = sharedRead(session, sid, key, token);
    }
    switch (result.outcome()) {
      case VALUE -> {
        out.line(
            "VALUE "
                + result.label()
                + " "
                + result.item().flags()
                + " "
                + result.item().value().length);
        out.data(result.item().value());
        out.line("END");
      }
      case LEASE -> {
        out.line("LVALUE ls:" + key + " 0 " + result.token());
        out.line("END");
      }
      case NO_VALUE -> {
        out.line("NOVALUE  0");
        out.line("END");
      }
      case RETRY -> out.line("RETRY");
      case ABORT -> abandon(sid, session, out);
    }
  }

  /** {@code cogets <sid> <0|1> <key> [<key> ...]}: C reads (0) or O reads (1) of many keys. */
  private void cogets(Arguments args, ReplyWriter out) {
    args.requireCount(3, Integer.MAX_VALUE);
    String sid = args.tid(0);
    boolean exclusive = args.bit(1, "type");
    List<String> keys = args.words(2);
    keys.forEach(
        key -> {
          if (key.length() > Arguments.MAX_KEY_LENGTH) {
            throw new MalformedRequestException("key too long");
          }
        });
    SessionTable.Session session = begin(sid, args.client(), out);
    if (session == null) {
      return;
    }
    List<String> lines = new ArrayList<>();
    List<byte[]> data = new ArrayList<>();
    try (KeyLocks.Held held = state.locks.lockAll(keys)) {
      for (String key : keys) {
        ReadResult result =
            exclusive ? exclusiveRead(session, sid, key) : sharedRead(session, sid, key, 0);
        if (result.outcome() == ReadResult.Outcome.ABORT) {
          abandon(sid, session, out);
          return;
        }
        lines.add(
            switch (result.outcome()) {
              case VALUE ->
                  "VALUE " + key + " " + result.item().flags() + " " + result.item().value().length;
              case LEASE -> "LEASE " + key + " " + result.token();
              case NO_VALUE -> "NOVALUE " + key;
              default -> "RETRY " + key;
            });
        data.add(result.outcome() == ReadResult.Outcome.VALUE ? result.item().value() : null);
      }
    }
    for (int i = 0; i < lines.size(); i++) {
      out.line(lines.get(i));
      if (data.get(i) != null) {
        out.data(data.get(i));
      }
    }
    out.line("END");
  }

  /** {@code oqread <sid> <key> [noreply]}: take O + Q-ref, see the session's view of the value. */
  private void oqread(Arguments args, ReplyWriter out) {
    args.requireCount(2, 2);
    String sid = args.tid(0);
    String key = args.key(1);
    SessionTable.Session session = begin(sid, args.client(), out);
    if (session == null) {
      return;
    }
    ReadResult result;
    try (KeyLocks.Held held = state.locks.lock(key)) {
      result = exclusiveRead(session, sid, key);
    }
    if (result.outcome() == ReadResult.Outcome.VALUE) {
      out.line("VALUE " + key + " " + result.item().flags() + " " + result.item().value().length);
      out.data(result.item().value());
      out.line("END");
    } else if (result.outcome() == ReadResult.Outcome.NO_VALUE) {
      out.line("NOVALUE " + key + " 0");
      out.line("");
      out.line("END");
    } else {
      abandon(sid, session, out);
    }
  }

  /** The three staged whole-value writes. */
  private enum WriteKind {
    /** Requires the O lease already held (after {@code oqread}). */
    SWAP,
    /** Blind write: takes the O lease. */
    WRITE,
    /** Takes the O lease; stages only if the session sees no value. */
    ADD
  }

  /** {@code oqswap|oqwrite|oqadd <sid> <key> <flags> <exptime> <bytes> [<pimem>] [noreply]}. */
  private void singleWrite(Arguments args, ReplyWriter out, WriteKind kind) {
    String sid = args.tid(0);
    StorageRequest request = StorageRequest.parse(args.drop(1), StorageRequest.Shape.PIMEM, state);
    SessionTable.Session session = begin(sid, args.client(), out);
    if (session == null) {
      return;
    }
    String reply;
    try (KeyLocks.Held held = state.locks.lock(request.key())) {
      reply = stageWrite(session, sid, request, kind);
    }
    finish(sid, session, reply, out);
  }

  /** {@code oqappend|oqprepend <sid> <key> <bytes> [noreply]}. */
  private void singleConcat(Arguments args, ReplyWriter out, boolean append) {
    args.requireCount(3, 3);
    String sid = args.tid(0);
    String key = args.key(1);
    SessionTable.Session session = begin(sid, args.client(), out);
    if (session == null) {
      return;
    }
    String reply;
    try (KeyLocks.Held held = state.locks.lock(key)) {
      reply = stageConcat(session, sid, key, args.block(0), append);
    }
    finish(sid, session, reply, out);
  }

  /** {@code oqincr|oqdecr <sid> <key> <delta> [noreply]}: {@code VALUE <n>} + {@code END}. */
  private void arithmetic(Arguments args, ReplyWriter out, boolean increment) {
    args.requireCount(3, 3);
    String sid = args.tid(0);
    String key = args.key(1);
    long delta = args.delta(2);
    SessionTable.Session session = begin(sid, args.client(), out);
    if (session == null) {
      return;
    }
    try (KeyLocks.Held held = state.locks.lock(key)) {
      if (!acquireOwnership(session, sid, key, false)) {
        abandon(sid, session, out);
        return;
      }
      Item current = view(session, key);
      if (current == null) {
        out.line("NOVALUE  0");
        out.line("END");
        return;
      }
      byte[] value = Arithmetic.apply(current.value(), delta, increment);
      session.stage(key, new StagedChange.Replace(current.withValue(value)));
      out.line("VALUE " + new String(value, StandardCharsets.US_ASCII));
      out.line("END");
    }
  }

  /** {@code oqreg <sid> <key> [noreply]}: O-inv + Q-inv; the key is deleted at dcommit. */
  private void oqreg(Arguments args, ReplyWriter out) {
    args.requireCount(2, 2);
    String sid = args.tid(0);
    String key = args.key(1);
    SessionTable.Session session = begin(sid, args.client(), out);
    if (session == null) {
      return;
    }
    try (KeyLocks.Held held = state.locks.lock(key)) {
      if (!acquireOwnership(session, sid, key, true)) {
        abandon(sid, session, out);
        return;
      }
      session.stage(key, new StagedChange.Delete());
      out.line("OK");
    }
  }

  /**
   * {@code oqappends|oqswaps <sid> (<key> <flags> <exptime> <bytes>)+}: every tuple's key is
   * checked first, with all stripes held, so an {@code ABORT} leaves nothing half-applied.
   */
  private void batch(Arguments args, ReplyWriter out, boolean append) {
    String sid = args.tid(0);
    int tuples = (args.size() - 1) / 4;
    List<String> keys = new ArrayList<>(tuples);
    List<StorageRequest> requests = new ArrayList<>(tuples);
    int block = 0;
    for (int t = 0; t < tuples; t++) {
      int at = 1 + t * 4;
      // The length as a number, as the decoder read it: "00" carries no block, as "0" does.
      boolean hasData = args.number(at + 3) > 0;
      String key = args.key(at);
      keys.add(key);
      requests.add(
          new StorageRequest(
              key,
              args.flags(at + 1),
              state.expiryOf(args.exptime(at + 2)),
              false,
              0,
              hasData ? args.block(block++) : new byte[0]));
    }
    SessionTable.Session session = begin(sid, args.client(), out);
    if (session == null) {
      return;
    }
    List<String> replies = new ArrayList<>(tuples);
    try (KeyLocks.Held held = state.locks.lockAll(keys)) {
      for (String key : keys) {
        KeyLease lease = state.leases.find(key, state.now());
        boolean ownedByOther = lease != null && lease.owner != null && !lease.owner.equals(sid);
        boolean quarantined = lease != null && lease.isQuarantine();
        if (ownedByOther || quarantined) {
          abandon(sid, session, out);
          return;
        }
        if (!append && (lease == null || !sid.equals(lease.owner))) {
          out.line("INVALID");
          return;
        }
        state.requireMayChange(session.client(), key, false);
      }
      for (StorageRequest request : requests) {
        if (append) {
          replies.add(
              request.data().length == 0
                  ? ""
                  : stageConcat(session, sid, request.key(), request.data(), true));
        } else {
          replies.add(stageWrite(session, sid, request, WriteKind.SWAP));
        }
      }
    }
    replies.forEach(out::line);
    out.line("END");
  }

  /** {@code validate <sid> [noreply]}: {@code OK} only if the session still holds every lease. */
  private void validate(Arguments args, ReplyWriter out) {
    args.requireCount(1, 1);
    String sid = args.tid(0);
    SessionTable.Session session = state.sessions.find(sid);
    if (session == null) {
      out.line("ABORT");
      return;
    }
    List<String> keys = List.copyOf(session.keys);
    try (KeyLocks.Held held = state.locks.lockAll(keys)) {
      if (!holdsAll(session, sid, keys)) {
        abandon(sid, session, out);
        return;
      }
    }
    out.line("OK");
  }

  /** {@code dcommit <sid> [noreply]}: apply the session's staged changes, release everything. */
  private void dcommit(Arguments args, ReplyWriter out) {
    args.requireCount(1, 1);
    String sid = args.tid(0);
    SessionTable.Session session = state.sessions.find(sid);
    if (session == null) {
      out.line("NOT_FOUND");
      return;
    }
    List<String> keys = List.copyOf(session.keys);
    try (KeyLocks.Held held = state.locks.lockAll(keys)) {
      if (!holdsAll(session, sid, keys)) {
        abandon(sid, session, out);
        return;
      }
      long now = state.now();
      boolean refused = false;
      for (String key : keys) {
        KeyLease lease = state.leases.find(key, now);
        StagedChange change = session.staged(key);
        if (lease != null
            && sid.equals(lease.owner)
            && change != null
            && state.mayChange(session.client(), key)) {
          Item next = change.applyTo(state.items.get(key));
          if (next == null) {
            state.items.remove(key);
          } else if (state.items.put(key, next) != ItemStore.StoreResult.STORED) {
            // A pinned value that no longer fits keeps its previous version and the commit says
            // so, as commit does: removing it would drop data only the cache tier holds.
            refused = true;
          }
        }
        releaseSession(key, lease, sid);
      }
      state.sessions.remove(sid, session);
      out.line(refused ? ServerState.OUT_OF_PINNED_MEMORY : "OK");
    }
  }

  /** {@code dabort} / {@code counlease <sid> [noreply]}: discard staged state, release everything. */
  private void end(Arguments args, ReplyWriter out, boolean unleaseOnly) {
    args.requireCount(1, 1);
    String sid = args.tid(0);
    SessionTable.Session session = state.sessions.find(sid);
    if (session == null) {
      out.line("NOT_FOUND");
      return;
    }
    if (session.aborted) {
      state.sessions.remove(sid, session);
      out.line(unleaseOnly ? "SERVER_ERROR session aborted" : "ABORT");
      return;
    }
    List<String> keys = List.copyOf(session.keys);
    try (KeyLocks.Held held = state.locks.lockAll(keys)) {
      long now = state.now();
      for (String key : keys) {
        releaseSession(key, state.leases.find(key, now), sid);
      }
      state.sessions.remove(sid, session);
    }
    out.line("OK");
  }

  // ---- per-key rules, each run under the key's stripe ----

  /** The C-read rules of {@code ciget} and {@code cogets 0}. */
  private ReadResult sharedRead(SessionTable.Session session, String sid, String key, long token) {
    long now = state.now();
    KeyLease lease = state.leases.find(key, now);
    if (lease != null && lease.owner != null) {
      if (!lease.owner.equals(sid)) {
        return ReadResult.ABORT;
      }
      Item own = view(session, key);
      return own == null ? ReadResult.NO_VALUE : ReadResult.value("nv:" + key, own);
    }
    if (lease != null && lease.kind == KeyLease.Kind.I) {
      return lease.tokenMatches(token) ? ReadResult.NO_VALUE : ReadResult.RETRY;
    }
    if (lease != null && lease.isQuarantine()) {
      return ReadResult.ABORT;
    }
    session.addKey(key);
    lease = state.leases.findOrCreate(key, now);
    lease.readers.add(sid);
    Item item = state.items.get(key);
    if (item != null) {
      state.stats.getHits.increment();
      return ReadResult.value(key, item);
    }
    state.stats.getMisses.increment();
    long granted = state.tokens.next();
    lease.grant(
        KeyLease.Kind.I, granted, null, state.leaseExpiry(), key, session.client().charge());
    state.stats.leasesGranted.increment();
    return ReadResult.lease(granted);
  }

  /** The O-read rules of {@code oqread} and {@code cogets 1}. */
  private ReadResult exclusiveRead(SessionTable.Session session, String sid, String key) {
    if (!acquireOwnership(session, sid, key, false)) {
      return ReadResult.ABORT;
    }
    Item item = view(session, key);
    return item == null ? ReadResult.NO_VALUE : ReadResult.value(key, item);
  }

  /** Stages a whole value; returns the reply word, or {@code ABORT}/{@code INVALID}. */
  private String stageWrite(
      SessionTable.Session session, String sid, StorageRequest request, WriteKind kind) {
    String key = request.key();
    if (kind == WriteKind.SWAP) {
      KeyLease lease = state.leases.find(key, state.now());
      if (lease == null || lease.owner == null) {
        return "INVALID";
      }
      if (!lease.owner.equals(sid)) {
        return "ABORT";
      }
    } else if (!acquireOwnership(session, sid, key, false)) {
      return "ABORT";
    }
    Item current = view(session, key);
    if (kind == WriteKind.ADD && current != null) {
      return "NOT_STORED";
    }
    if (request.data().length == 0) {
      session.stage(key, new StagedChange.Delete());
      return "STORED";
    }
    long expiry =
        request.expiresAtMillis() != 0 || current == null
            ? request.expiresAtMillis()
            : current.expiresAtMillis();
    Item staged =
        new Item(
            request.data(),
            request.flags(),
            expiry,
            0,
            request.pin() || (current != null && current.pinned()));
    state.requireMayChange(session.client(), key, request.pin());
    if (staged.pinned() && !state.items.fitsPinnedQuota(key, staged)) {
      return ServerState.OUT_OF_PINNED_MEMORY;
    }
    session.stage(key, new StagedChange.Replace(staged));
    return "STORED";
  }

  /** Stages an append/prepend delta; every delta is kept. */
  private String stageConcat(
      SessionTable.Session session, String sid, String key, byte[] delta, boolean append) {
    if (!acquireOwnership(session, sid, key, false)) {
      return "ABORT";
    }
    Item current = view(session, key);
    if (current == null || current.value().length + delta.length > state.config.maxItemSize()) {
      return "NOT_STORED";
    }
    StagedChange previous = session.staged(key);
    StagedChange next;
    if (previous instanceof StagedChange.Replace replace) {
      Item item = replace.item();
      next =
          new StagedChange.Replace(
              item.withValue(
                  append ? Bytes.concat(item.value(), delta) : Bytes.concat(delta, item.value())));
    } else {
      byte[] prefix = previous instanceof StagedChange.Deltas d ? d.prefix() : new byte[0];
      byte[] suffix = previous instanceof StagedChange.Deltas d ? d.suffix() : new byte[0];
      next =
          append
              ? new StagedChange.Deltas(prefix, Bytes.concat(suffix, delta))
              : new StagedChange.Deltas(Bytes.concat(delta, prefix), suffix);
    }
    session.stage(key, next);
    return "STORED";
  }

  /**
   * Takes (or keeps) the O lease on {@code key} for {@code sid}: aborts the key's other C readers
   * and voids an I lease. Returns false, taking nothing, when another session owns the key or a
   * tid holds a Q lease on it.
   */
  private boolean acquireOwnership(
      SessionTable.Session session, String sid, String key, boolean invalidate) {
    KeyLease lease = state.leases.findOrCreate(key, state.now());
    if ((lease.owner != null && !lease.owner.equals(sid)) || lease.isQuarantine()) {
      state.leases.removeIfEmpty(key, lease);
      return false;
    }
    state.requireMayChange(session.client(), key, false);
    session.addKey(key);
    state.voidInhibit(lease);
    state.abortReaders(lease, sid);
    if (lease.owner == null) {
      state.stats.leasesGranted.increment();
    }
    lease.owner = sid;
    lease.ownerInvalidates |= invalidate;
    state.leases.attach(key, lease);
    return true;
  }

  /** The value as this session sees it: its staged change applied to the cached value. */
  private Item view(SessionTable.Session session, String key) {
    Item cached = state.items.get(key);
    StagedChange change = session.staged(key);
    return change == null ? cached : change.applyTo(cached);
  }

  /** Whether the session is alive and still listed on every key it touched. */
  private boolean holdsAll(SessionTable.Session session, String sid, List<String> keys) {
    if (session.aborted || state.sessions.find(sid) != session) {
      return false;
    }
    long now = state.now();
    for (String key : keys) {
      KeyLease lease = state.leases.find(key, now);
      if (lease == null || !(sid.equals(lease.owner) || lease.readers.contains(sid))) {
        return false;
      }
    }
    return true;
  }

  private void releaseSession(String key, KeyLease lease, String sid) {
    if (lease == null) {
      return;
    }
    lease.readers.remove(sid);
    if (sid.equals(lease.owner)) {
      lease.clearOwner();
    }
    state.leases.removeIfEmpty(key, lease);
  }

  /**
   * The session record for a command, created on first use. A session that was aborted by a
   * writer learns it here: it is forgotten and the reply is {@code ABORT}; returns null then.
   */
  private SessionTable.Session begin(String sid, Client client, ReplyWriter out) {
    SessionTable.Session session = state.sessions.findOrCreate(sid, client);
    if (session.aborted) {
      state.sessions.remove(sid, session);
      out.line("ABORT");
      return null;
    }
    return session;
  }

  /** Replies {@code ABORT} and forgets the session; its leases lapse with it. */
  private void abandon(String sid, SessionTable.Session session, ReplyWriter out) {
    state.sessions.abort(sid);
    state.sessions.remove(sid, session);
    out.line("ABORT");
  }

  private void finish(String sid, SessionTable.Session session, String reply, ReplyWriter out) {
    if (reply.equals("ABORT")) {
      abandon(sid, session, out);
    } else {
      out.line(reply);
    }
  }
}
