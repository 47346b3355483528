package io.dendrite.iq.server;

import java.util.List;
import java.util.function.Predicate;
import java.util.function.UnaryOperator;

/**
 * The I/Q lease family with IQ-Twemcached's names, argument order and reply shapes: I leases on
 * read misses ({@code iqget}/{@code iqset}/{@code unlease}), shared Q-inv leases for write-around
 * ({@code qareg}/{@code dar}), exclusive Q-ref leases for read-modify-write ({@code qaread}/
 * {@code swap}/{@code sar}/{@code commit}/{@code release}) and Q-inc leases for incremental updates
 * ({@code iqappend}/{@code iqprepend}/{@code iqincr}/{@code iqdecr}).
 *
 * <p>Where IQ-Twemcached is unsafe this class deliberately differs (see {@code docs/protocol.md}):
 * {@code release} leaves other tids' share of a Q-inv lease alone; {@code commit} keeps original
 * TTLs, voids I leases and deletes the value of a key whose lease the tid lost; a tid-less
 * {@code qaread} is not filed under a shared empty tid; {@code sar} with an empty body deletes; a
 * Q-ref or Q-inc lease that lapses without a commit takes its key's unpinned value with it, as a
 * Q-inv lease does ({@link ServerState#quarantineValue}).
 */
final class LeaseCommands {

  /** Token meaning "refused, somebody else holds a lease": back off and retry. */
  static final long HOT_MISS = 3;

  private final ServerState state;

  LeaseCommands(ServerState state) {
    this.state = state;
  }

  void registerAll(CommandTable table) {
    table.register("iqget", false, this::iqget);
    table.register("iqset", true, this::iqset);
    table.register("unlease", true, this::unlease);
    table.register("qareg", true, this::qareg);
    table.register("dar", true, this::dar);
    table.register("qaread", true, this::qaread);
    table.register("swap", true, this::swap);
    table.register("sar", true, this::sar);
    table.register("commit", true, this::commit);
    table.register("release", true, this::release);
    table.register("iqappend", true, (args, out) -> concat(args, out, true));
    table.register("iqprepend", true, (args, out) -> concat(args, out, false));
    table.register("iqincr", true, (args, out) -> arithmetic(args, out, true));
    table.register("iqdecr", true, (args, out) -> arithmetic(args, out, false));
  }

  /** {@code iqget <key> <token> [<tid>]}. */
  private void iqget(Arguments args, ReplyWriter out) {
    args.requireCount(2, 3);
    String key = args.key(0);
    long token = args.number(1);
    String tid = args.size() == 3 ? args.tid(2) : null;
    try (KeyLocks.Held held = state.locks.lock(key)) {
      long now = state.now();
      KeyLease lease = state.leases.find(key, now);
      if (tid != null && state.transactions.contains(tid, key, now)) {
        // A read inside one's own write transaction sees its staged Q-inc value, or goes to the
        // database.
        if (lease != null
            && lease.kind == KeyLease.Kind.Q_INC
            && lease.heldByTid(tid)
            && lease.staged != null) {
          writeValue(out, "nv:" + key, key, lease.staged);
        } else {
          noValue(out);
        }
        return;
      }
      Item item = state.items.get(key);
      boolean ownsQuarantine = lease != null && lease.isQuarantine() && lease.tokenMatches(token);
      if (item != null) {
        state.stats.getHits.increment();
        if (ownsQuarantine) {
          noValue(out);
        } else {
          writeValue(out, key, key, item);
        }
        return;
      }
      state.stats.getMisses.increment();
      int pending = state.pendingMarkers.pendingBit(key);
      if (lease != null && lease.tokenMatches(token)) {
        noValue(out);
      } else if (lease == null || (lease.kind == KeyLease.Kind.NONE && lease.owner == null)) {
        long granted =
            grant(state.leases.findOrCreate(key, now), key, KeyLease.Kind.I, null, args.client());
        out.line("LVALUE ls:" + key + " 0 " + pending + " " + granted);
        out.line("END");
      } else {
        out.line("LVALUE ls:" + key + " 0 " + pending + " " + HOT_MISS);
        out.line("END");
      }
    }
  }

  /**
   * {@code iqset <key> <flags> <exptime> <bytes> <token> [noreply]}: the I-lease holder's fill. A fill clears the
   * key's pending marker: the holder was told {@code <p>} and applied the buffered write before it read what it
   * fills with, and any later teleport of a write takes a Q lease first, which voids this I lease. Only a client
   * that may set markers (a pin user) clears one, here and in {@code commit <tid> 0}; another's fill leaves it.
   */
  private void iqset(Arguments args, ReplyWriter out) {
    StorageRequest request = StorageRequest.parse(args, StorageRequest.Shape.TOKEN, state);
    String key = request.key();
    try (KeyLocks.Held held = state.locks.lock(key)) {
      KeyLease lease = state.leases.find(key, state.now());
      if (lease == null || lease.kind != KeyLease.Kind.I || !lease.tokenMatches(request.number())) {
        out.line("NOT_STORED");
        return;
      }
      state.requireMayChange(args.client(), key, false);
      lease.clearIq();
      state.leases.removeIfEmpty(key, lease);
      if (request.data().length == 0) {
        out.line("NOT_STORED");
        return;
      }
      if (args.client().mayChangePinned()) {
        state.pendingMarkers.remove(key);
      }
      out.line(state.store(key, request.toItem()));
    }
  }

  /** {@code unlease <key> <token> [noreply]}. */
  private void unlease(Arguments args, ReplyWriter out) {
    args.requireCount(2, 2);
    String key = args.key(0);
    long token = args.number(1);
    try (KeyLocks.Held held = state.locks.lock(key)) {
      KeyLease lease = state.leases.find(key, state.now());
      if (lease != null && lease.tokenMatches(token)) {
        state.endQuarantine(key, lease);
        lease.clearIq();
        state.leases.removeIfEmpty(key, lease);
      }
      out.line("DELETED");
    }
  }

  /** {@code qareg <key> <tid> [noreply]}: join or take the key's Q-inv lease. */
  private void qareg(Arguments args, ReplyWriter out) {
    args.requireCount(2, 2);
    String key = args.key(0);
    String tid = args.tid(1);
    try (KeyLocks.Held held = state.locks.lock(key)) {
      long now = state.now();
      if (state.transactions.wasReleased(tid, now)) {
        out.line("ABORT"); // a late request of a transaction its client already gave up
        return;
      }
      state.requireMayChange(args.client(), key, false);
      long expiry = state.leaseExpiry();
      state.transactions.register(tid, key, now, expiry, args.client());
      KeyLease lease = state.leases.findOrCreate(key, now);
      state.abortReaders(lease, null);
      if (lease.owner != null) {
        // A session's O lease is a Q-ref lease: Q-inv takes it over and the session aborts.
        state.sessions.abort(lease.owner);
        lease.clearOwner();
      }
      state.voidInhibit(lease);
      state.leases.attach(key, lease);
      if (lease.kind == KeyLease.Kind.Q_REF || lease.kind == KeyLease.Kind.Q_INC) {
        // Convert to Q-inv: the refresher's swap now fails and its commit deletes the key.
        String refresher = lease.ownerTid;
        lease.clearIq();
        state.stats.leasesVoided.increment();
        lease.chargeTo(args.client().charge(), key);
        lease.kind = KeyLease.Kind.Q_INV;
        if (refresher != null) {
          lease.invalidatingTids.add(refresher);
        }
      } else if (lease.kind == KeyLease.Kind.NONE) {
        lease.chargeTo(args.client().charge(), key);
        lease.kind = KeyLease.Kind.Q_INV;
        state.stats.leasesGranted.increment();
      }
      lease.invalidatingTids.add(tid);
      lease.expiresAtMillis = expiry;
      // If dar never comes, the value about to go stale disappears with the lease.
      Item item = state.items.get(key);
      if (item != null && (item.expiresAtMillis() == 0 || item.expiresAtMillis() > expiry)) {
        state.items.put(key, item.withExpiry(expiry));
      }
      out.line("LEASE 1");
    }
  }

  /** {@code dar <tid> [noreply]}: delete the tid's keys and release its Q leases. */
  private void dar(Arguments args, ReplyWriter out) {
    args.requireCount(1, 1);
    String tid = args.tid(0);
    boolean found =
        forEachKeyOfTransaction(
            tid,
            (key, lease) -> {
              if (state.mayChange(args.client(), key)) {
                state.items.remove(key);
              }
              if (lease != null) {
                state.voidInhibit(lease);
                releaseTid(lease, tid);
              }
            });
    out.line(found ? "DELETED" : "INVALID");
  }

  /** {@code qaread <key> [<token> [<tid>]] [noreply]}: take a Q-ref lease and the current value. */
  private void qaread(Arguments args, ReplyWriter out) {
    args.requireCount(1, 3);
    String key = args.key(0);
    long token = args.size() >= 2 ? args.number(1) : 0;
    String tid = args.size() == 3 ? args.tid(2) : null;
    try (KeyLocks.Held held = state.locks.lock(key)) {
      long now = state.now();
      if (tid != null && state.transactions.wasReleased(tid, now)) {
        writeLease(
            out, key, null, HOT_MISS); // a late request of a transaction its client already gave up
        return;
      }
      KeyLease lease = state.leases.findOrCreate(key, now);
      Item item = state.items.get(key);
      boolean reentry =
          (lease.kind == KeyLease.Kind.Q_REF || lease.kind == KeyLease.Kind.Q_INC)
              && lease.tokenMatches(token);
      if (reentry) {
        writeLease(out, key, lease.hasStaged ? lease.staged : item, lease.token);
        return;
      }
      // Leaving: a pinned item is a replica the clients are moving to other servers. A holder that
      // read it here might read an older copy than the one the clients that already moved wrote
      // elsewhere; taken as busy, the taker retries, on the servers its placement gives once it has
      // seen this one leave.
      boolean leavingReplica = state.leaving && item != null && item.pinned();
      if (lease.owner != null || lease.isQuarantine() || leavingReplica) {
        state.leases.removeIfEmpty(key, lease);
        writeLease(out, key, null, HOT_MISS);
        return;
      }
      state.requireMayChange(args.client(), key, false);
      state.voidInhibit(lease);
      state.abortReaders(lease, null);
      long granted = grant(lease, key, KeyLease.Kind.Q_REF, tid, args.client());
      if (item != null) {
        lease.stage(item); // with the value's own expiry, which a commit keeps
      }
      state.quarantineValue(key, lease);
      writeLease(out, key, item, granted);
    }
  }

  /** {@code swap <key> <flags> <exptime> <bytes> <token> [<pimem>] [noreply]}: stage a value. */
  private void swap(Arguments args, ReplyWriter out) {
    StorageRequest request = StorageRequest.parse(args, StorageRequest.Shape.TOKEN_PIMEM, state);
    String key = request.key();
    try (KeyLocks.Held held = state.locks.lock(key)) {
      KeyLease lease = state.leases.find(key, state.now());
      if (lease == null || !lease.tokenMatches(request.number())) {
        out.line("INVALID");
        return;
      }
      state.requireMayChange(args.client(), key, request.pin());
      if (request.data().length == 0) {
        lease.stage(null);
        out.line("STORED");
        return;
      }
      Item staged = replacementFor(request, lease.hasStaged ? lease.staged : state.items.get(key));
      if (staged.pinned() && !state.items.fitsPinnedQuota(key, staged)) {
        out.line(ServerState.OUT_OF_PINNED_MEMORY);
        return;
      }
      lease.stage(staged);
      out.line("STORED");
    }
  }

  /** {@code sar <key> <flags> <exptime> <bytes> <token> [noreply]}: write and release at once. */
  private void sar(Arguments args, ReplyWriter out) {
    StorageRequest request = StorageRequest.parse(args, StorageRequest.Shape.TOKEN, state);
    String key = request.key();
    try (KeyLocks.Held held = state.locks.lock(key)) {
      KeyLease lease = state.leases.find(key, state.now());
      if (lease == null || !lease.tokenMatches(request.number())) {
        out.line("INVALID");
        return;
      }
      state.requireMayChange(args.client(), key, request.pin());
      state.endQuarantine(key, lease); // exptime 0 keeps the value's own expiry
      lease.clearIq();
      state.leases.removeIfEmpty(key, lease);
      if (request.data().length == 0) {
        // The writer's new value is "nothing": keeping the old one would leave it stale.
        state.items.remove(key);
        out.line("STORED");
        return;
      }
      out.line(state.store(key, replacementFor(request, state.items.get(key))));
    }
  }

  /**
   * {@code commit <tid> <pending 0|1> [noreply]}: apply staged values, release Q leases. {@code 1} marks every key
   * of the tid pending (a buffered write of it exists), all or none: when the new markers do not fit the pinned
   * quota nothing is applied and the transaction stays as it was, for a later commit or release. {@code 0} clears
   * the markers of the keys whose Q lease the tid still holds: it recovered their buffered writes. A key whose
   * lease lapsed or was voided keeps its marker, since another writer may have marked it since.
   */
  private void commit(Arguments args, ReplyWriter out) {
    args.requireCount(2, 2);
    String tid = args.tid(0);
    boolean pending = args.bit(1, "pending");
    Client client = args.client();
    boolean[] refused = {false};
    TransactionEnd end =
        endTransaction(
            tid,
            keys -> {
              if (!pending) {
                return true;
              }
              state.requireMayPin(client); // markers take pinned memory
              return state.pendingMarkers.addAll(keys);
            },
            (key, lease) -> {
              if (lease != null) {
                state.voidInhibit(lease);
              }
              // A pinned item its user may not change stays as it is, whatever the lease.
              boolean mayChange = state.mayChange(client, key);
              boolean held = lease != null && lease.heldByTid(tid);
              if (mayChange
                  && held
                  && lease.kind != KeyLease.Kind.Q_INV
                  && lease.hasStaged
                  && lease.staged != null) {
                // A pinned value that no longer fits keeps its previous version and the commit says
                // so: removing it would drop data the cache tier is the only holder of
                // (write-back's buffered writes).
                if (state.items.put(key, lease.staged) != ItemStore.StoreResult.STORED) {
                  refused[0] = true;
                }
              } else if (mayChange && (held || !isPinned(key))) {
                // Q-inv, a staged delete, nothing staged, or a cached value whose lease the tid no
                // longer holds (expired, voided): the cached value may be stale, and deleting it is
                // always safe.
                state.items.remove(key);
              }
              // else: a pinned value whose lease this tid lost. Pinned values are data, not a copy
              // of the database, and another holder may have changed it since: only a holder of its
              // lease may touch it.
              if (lease != null) {
                releaseTid(lease, tid);
              }
              if (!pending && held && client.mayChangePinned()) {
                state.pendingMarkers.remove(key);
              }
            });
    out.line(
        switch (end) {
          case NOT_FOUND -> "NOT_FOUND";
          case REFUSED -> ServerState.OUT_OF_PINNED_MEMORY;
          case ENDED -> refused[0] ? ServerState.OUT_OF_PINNED_MEMORY : "OK";
        });
  }

  private boolean isPinned(String key) {
    Item item = state.items.get(key);
    return item != null && item.pinned();
  }

  /** {@code release <tid> [noreply]}: the abort path; values are untouched (they get their own expiry back). */
  private void release(Arguments args, ReplyWriter out) {
    args.requireCount(1, 1);
    String tid = args.tid(0);
    state.transactions.markReleased(tid, state.now(), state.leaseExpiry(), args.client());
    boolean found =
        forEachKeyOfTransaction(
            tid,
            (key, lease) -> {
              if (lease != null) {
                if (lease.heldByTid(tid)) {
                  state.endQuarantine(key, lease); // the value was not changed: it keeps its expiry
                }
                releaseTid(lease, tid);
              }
            });
    out.line(found ? "OK" : "NOT_FOUND");
  }

  /** {@code iqappend|iqprepend <key> <bytes> <tid> [noreply]}. */
  private void concat(Arguments args, ReplyWriter out, boolean append) {
    args.requireCount(3, 3);
    byte[] delta = args.block(0);
    incremental(
        args.key(0),
        args.tid(2),
        args.client(),
        out,
        item ->
            item.withValue(
                append ? Bytes.concat(item.value(), delta) : Bytes.concat(delta, item.value())));
  }

  /** {@code iqincr|iqdecr <key> <delta> <tid> [noreply]}; the reply does not carry the new value. */
  private void arithmetic(Arguments args, ReplyWriter out, boolean increment) {
    args.requireCount(3, 3);
    long delta = args.delta(1);
    incremental(
        args.key(0),
        args.tid(2),
        args.client(),
        out,
        item -> item.withValue(Arithmetic.apply(item.value(), delta, increment)));
  }

  /** Takes or reuses the tid's Q-inc lease and applies {@code change} to the staged copy. */
  private void incremental(
      String key, String tid, Client client, ReplyWriter out, UnaryOperator<Item> change) {
    try (KeyLocks.Held held = state.locks.lock(key)) {
      long now = state.now();
      if (state.transactions.wasReleased(tid, now)) {
        out.line("ABORT"); // a late request of a transaction its client already gave up
        return;
      }
      state.requireMayChange(client, key, false);
      KeyLease lease = state.leases.findOrCreate(key, now);
      if (lease.owner != null || (lease.isQuarantine() && !lease.heldByTid(tid))) {
        state.leases.removeIfEmpty(key, lease);
        out.line("ABORT");
        return;
      }
      Item base =
          lease.isQuarantine() ? (lease.hasStaged ? lease.staged : null) : state.items.get(key);
      Item changed = base == null ? null : change.apply(base);
      if (changed != null && changed.value().length > state.config.maxItemSize()) {
        state.leases.removeIfEmpty(key, lease);
        out.line("NOT_STORED");
        return;
      }
      boolean granting = !lease.isQuarantine();
      if (granting) {
        state.voidInhibit(lease);
        state.abortReaders(lease, null);
        grant(lease, key, KeyLease.Kind.Q_INC, tid, client);
      }
      if (changed != null) {
        lease.stage(changed); // with the value's own expiry, which a commit keeps
      }
      if (granting) {
        state.quarantineValue(key, lease);
      }
      int pending = state.pendingMarkers.pendingBit(key);
      out.line((changed != null ? "OK " : "OK_NOVALUE ") + pending + " " + lease.token);
    }
  }

  /**
   * Grants a fresh lease of {@code kind} on {@code key} (whose stripe the caller holds), files the
   * key under {@code tid} when there is one, and returns the token.
   */
  private long grant(KeyLease lease, String key, KeyLease.Kind kind, String tid, Client client) {
    long now = state.now();
    long expiry = state.leaseExpiry();
    long token = state.tokens.next();
    // The record first: a lease its tid cannot find would stay until it lapses.
    if (tid != null) {
      state.transactions.register(tid, key, now, expiry, client);
    }
    lease.grant(kind, token, tid, expiry, key, client.charge());
    state.leases.attach(key, lease);
    state.stats.leasesGranted.increment();
    return token;
  }

  /** Drops {@code tid}'s hold on a lease: its own Q-ref/Q-inc, or only its share of a Q-inv. */
  private static void releaseTid(KeyLease lease, String tid) {
    if (!lease.heldByTid(tid)) {
      return;
    }
    if (lease.kind == KeyLease.Kind.Q_INV) {
      lease.invalidatingTids.remove(tid);
      if (lease.invalidatingTids.isEmpty()) {
        lease.clearIq();
      }
    } else {
      lease.clearIq();
    }
  }

  /** What {@code swap}/{@code sar} store: exptime 0 keeps the TTL of the value being replaced. */
  private static Item replacementFor(StorageRequest request, Item replaced) {
    long expiry =
        request.expiresAtMillis() != 0 || replaced == null
            ? request.expiresAtMillis()
            : replaced.expiresAtMillis();
    return new Item(request.data(), request.flags(), expiry, 0, request.pin());
  }

  /** What to do with one key of a transaction, under its stripe; {@code lease} may be null. */
  @FunctionalInterface
  private interface KeyAction {
    void apply(String key, KeyLease lease);
  }

  /** How {@link #endTransaction} went. */
  private enum TransactionEnd {
    /** No live record of the tid. */
    NOT_FOUND,
    /** The check refused: nothing changed, the record stays. */
    REFUSED,
    /** Every key had its action; the record is gone. */
    ENDED
  }

  /**
   * Runs {@code action} on every key of {@code tid}'s record with all their stripes held, then
   * forgets the record. Returns false when there is no live record.
   */
  private boolean forEachKeyOfTransaction(String tid, KeyAction action) {
    return endTransaction(tid, keys -> true, action) != TransactionEnd.NOT_FOUND;
  }

  /**
   * Like {@link #forEachKeyOfTransaction}, but first asks {@code admit}, with the stripes already held, whether the
   * transaction may end now; if not, nothing changes and the record stays.
   */
  private TransactionEnd endTransaction(
      String tid, Predicate<List<String>> admit, KeyAction action) {
    TransactionTable.Transaction tx = state.transactions.find(tid, state.now());
    if (tx == null) {
      return TransactionEnd.NOT_FOUND;
    }
    List<String> keys = List.copyOf(tx.keys);
    try (KeyLocks.Held held = state.locks.lockAll(keys)) {
      if (!admit.test(keys)) {
        return TransactionEnd.REFUSED;
      }
      state.transactions.remove(tid, tx);
      long now = state.now();
      for (String key : keys) {
        KeyLease lease = state.leases.find(key, now);
        action.apply(key, lease);
        state.leases.removeIfEmpty(key, lease);
      }
    }
    return TransactionEnd.ENDED;
  }

  /** {@code VALUE <label> <flags> <p> <bytes>} + data + {@code END}, {@code <p>} being {@code key}'s. */
  private void writeValue(ReplyWriter out, String label, String key, Item item) {
    out.line(
        "VALUE "
            + label
            + " "
            + item.flags()
            + " "
            + state.pendingMarkers.pendingBit(key)
            + " "
            + item.value().length);
    out.data(item.value());
    out.line("END");
  }

  /** {@code NOVALUE  0} (two spaces, as IQ-Twemcached prints it) + {@code END}. */
  private static void noValue(ReplyWriter out) {
    out.line("NOVALUE  0");
    out.line("END");
  }

  /**
   * {@code qaread}'s reply: {@code LEASE <key> <flags> <p> <tok> <bytes>} + data when there is a
   * value, else {@code LVALUE <key> 0 <p> <tok>} and an empty line; then {@code END}.
   */
  private void writeLease(ReplyWriter out, String key, Item item, long token) {
    if (item != null) {
      out.line(
          "LEASE "
              + key
              + " "
              + item.flags()
              + " "
              + state.pendingMarkers.pendingBit(key)
              + " "
              + token
              + " "
              + item.value().length);
      out.data(item.value());
    } else {
      // A refusal prints 0, as IQ-Twemcached's does: it grants nothing to take a recovery path for.
      int pending = token == HOT_MISS ? 0 : state.pendingMarkers.pendingBit(key);
      out.line("LVALUE " + key + " 0 " + pending + " " + token);
      out.line("");
    }
    out.line("END");
  }
}
