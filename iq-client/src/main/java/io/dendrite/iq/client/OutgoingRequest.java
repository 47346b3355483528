package io.dendrite.iq.client;

import io.dendrite.iq.protocol.MalformedReplyException;
import io.dendrite.iq.protocol.Reply;
import io.dendrite.iq.protocol.ReplyFormat;
import java.nio.charset.StandardCharsets;
import java.util.Collection;
import java.util.List;

/**
 * One request on the wire, already encoded, with the future its reply completes. The static
 * factories are the only place that spells the memcached and IQ command syntax.
 */
final class OutgoingRequest {

  private static final int MAX_KEY_BYTES = 250;

  final byte[] bytes;
  final ReplyFormat format;

  /** The fence this request runs under, set when it is sent within a {@link FenceScope}; null otherwise. */
  volatile FenceScope fence;

  /** The request line, without its data: the keys a reply to it may name are words of it. */
  private final String line;

  /** Whether data blocks follow the line: a server that does not take them reads them as commands. */
  final boolean carriesData;

  final ReplyFuture<Reply> reply = new ReplyFuture<>(this);

  /** The connection it was sent on; null until sent. */
  volatile SocketConnection connection;

  /** When it was written; read by the reader and the background reader's check for unread requests. */
  volatile long sentAtNanos;

  /** A thread parked until the reply is in, to be woken when it is or when it must read for itself. */
  volatile Thread waiter;

  /**
   * Set when a reader took the reply (or the failure) off the connection: the future completes, and the waiter is
   * woken, once that reader has given up its role. A waiter parks meanwhile instead of taking the reader role.
   */
  volatile boolean replyTaken;

  /** The sending thread's counts, told when that thread waits on this reply; null until sent. */
  ThreadTrips sender;

  /** The thread that sent it: another thread waiting on the reply (a callback joining it) is not its chain. */
  Thread senderThread;

  private OutgoingRequest(byte[] bytes, ReplyFormat format, String line, boolean carriesData) {
    this.bytes = bytes;
    this.format = format;
    this.line = line;
    this.carriesData = carriesData;
  }

  /**
   * Refuses a reply that cannot be this request's: one that names a key (a value or a lease) the request did not
   * name, or an unknown-command or client error to a request whose data the server may then have read as commands.
   * Replies are paired with requests by position, so such a reply means every later one is shifted.
   *
   * @throws MalformedReplyException saying why replies on the connection cannot be paired with requests any more
   */
  void checkPairedWith(Reply reply) {
    if (reply instanceof Reply.Entries entries) {
      for (Reply.Entry entry : entries.entries()) {
        String key =
            entry instanceof Reply.Value value
                ? value.key()
                : entry instanceof Reply.Lease lease ? lease.key() : null;
        if (key != null && !namesWord(key)) {
          throw new MalformedReplyException(
              "a reply names key "
                  + key
                  + ", which the request \""
                  + abbreviated()
                  + "\" did not: replies and requests are out of step and cannot be paired any more");
        }
      }
    } else if (carriesData
        && reply instanceof Reply.Status status
        && (status.line().equals("ERROR") || status.line().startsWith("CLIENT_ERROR"))) {
      throw new MalformedReplyException(
          "the server answered \""
              + status.line()
              + "\" to \""
              + abbreviated()
              + "\", whose data it may have read as commands: later replies cannot be paired with"
              + " requests any more");
    }
  }

  private boolean namesWord(String word) {
    for (int at = line.indexOf(word); at >= 0; at = line.indexOf(word, at + 1)) {
      int end = at + word.length();
      if (at > 0
          && line.charAt(at - 1) == ' '
          && (end == line.length() || line.charAt(end) == ' ')) {
        return true;
      }
    }
    return false;
  }

  private String abbreviated() {
    return line.length() <= 80 ? line : line.substring(0, 80) + "...";
  }

  /** Reads the reply in the calling thread (or waits for the thread reading it), if the command was sent. */
  void awaitReply() {
    ThreadTrips trips = sender;
    if (trips != null && Thread.currentThread() == senderThread) {
      // Counted whether or not the reply is in already (another thread may have read it): what the
      // count measures is the chain of dependent requests, not how long this thread happened to
      // block.
      trips.waited();
    }
    SocketConnection sentOn = connection;
    if (sentOn != null && !reply.isDone()) {
      sentOn.await(this);
    }
  }

  // --- standard memcached ---

  static OutgoingRequest gets(Collection<String> keys) {
    StringBuilder line = new StringBuilder("gets");
    keys.forEach(key -> line.append(' ').append(checkKey(key)));
    return of(ReplyFormat.VALUES, line.toString());
  }

  /**
   * set/add/replace/append/prepend, always with the pinning field: IQ-Twemcached requires it,
   * Dendrite's server accepts it, and stock memcached ignores a sixth word that is not
   * {@code noreply}.
   */
  static OutgoingRequest store(String verb, String key, byte[] value, WriteOptions options) {
    return of(
        ReplyFormat.LINE,
        verb
            + ' '
            + checkKey(key)
            + ' '
            + flagsTtlLength(options, value)
            + (options.pinned() ? " 1" : " 0"),
        value);
  }

  /**
   * memcached's text-protocol login: a {@code set} whose data is {@code <user> <password>}. A server that requires a
   * login ignores the key and expiry; one that does not stores it already expired (exptime -1), so the password is
   * never readable there.
   */
  static OutgoingRequest login(byte[] userAndPassword) {
    return of(
        ReplyFormat.LINE, "set dendrite-login 0 -1 " + userAndPassword.length, userAndPassword);
  }

  /** The pinning field only when pinned: stock memcached would read it as the CAS unique. */
  static OutgoingRequest cas(String key, byte[] value, WriteOptions options, long cas) {
    return of(
        ReplyFormat.LINE,
        "cas "
            + checkKey(key)
            + ' '
            + flagsTtlLength(options, value)
            + (options.pinned() ? " 1 " : " ")
            + Long.toUnsignedString(cas),
        value);
  }

  static OutgoingRequest delete(String key) {
    return of(ReplyFormat.LINE, "delete " + checkKey(key));
  }

  /**
   * {@code md <key> C<cas>}: memcached's meta delete, only if nobody wrote the key since {@code cas} was read. Unlike
   * a {@code cas} with a past exptime it stores nothing, so it works on a server whose memory is full (memcached 1.6;
   * Dendrite's server has no meta commands).
   */
  static OutgoingRequest deleteIfUnchanged(String key, long cas) {
    return of(ReplyFormat.LINE, "md " + checkKey(key) + " C" + Long.toUnsignedString(cas));
  }

  static OutgoingRequest incr(String key, long delta) {
    return of(ReplyFormat.LINE, "incr " + checkKey(key) + ' ' + Long.toUnsignedString(delta));
  }

  /** {@code fence <name> <epoch>}: raises a fence (Dendrite's server). */
  static OutgoingRequest fence(String name, long epoch) {
    return of(ReplyFormat.LINE, "fence " + checkKey(name) + " " + Long.toUnsignedString(epoch));
  }

  static OutgoingRequest stats() {
    return of(ReplyFormat.VALUES, "stats");
  }

  // --- extensions of Dendrite's server ---

  static OutgoingRequest unpin(String key) {
    return of(ReplyFormat.LINE, "unpin " + checkKey(key));
  }

  static OutgoingRequest pmark(String key) {
    return of(ReplyFormat.LINE, "pmark " + checkKey(key));
  }

  static OutgoingRequest pready() {
    return of(ReplyFormat.LINE, "pready");
  }

  static OutgoingRequest pmoved() {
    return of(ReplyFormat.LINE, "pmoved");
  }

  /** @throws IllegalArgumentException when {@code values} is empty: {@code mappend} needs at least one block */
  static OutgoingRequest mappend(String key, boolean pinned, List<byte[]> values) {
    if (values.isEmpty()) {
      throw new IllegalArgumentException("nothing to append");
    }
    StringBuilder line =
        new StringBuilder("mappend ").append(checkKey(key)).append(pinned ? " 1" : " 0");
    values.forEach(value -> line.append(' ').append(value.length));
    return of(ReplyFormat.LINE, line.toString(), values.toArray(new byte[0][]));
  }

  // --- I and Q leases ---

  static OutgoingRequest iqget(String key, long token, String tid) {
    return of(
        ReplyFormat.IQ_ENTRIES,
        "iqget " + checkKey(key) + ' ' + token + (tid == null ? "" : ' ' + tid));
  }

  static OutgoingRequest iqset(String key, byte[] value, WriteOptions options, long token) {
    return of(
        ReplyFormat.LINE,
        "iqset " + checkKey(key) + ' ' + flagsTtlLength(options, value) + ' ' + token,
        value);
  }

  static OutgoingRequest unlease(String key, long token) {
    return of(ReplyFormat.LINE, "unlease " + checkKey(key) + ' ' + token);
  }

  static OutgoingRequest qareg(String key, String tid) {
    return of(ReplyFormat.LINE, "qareg " + checkKey(key) + ' ' + tid);
  }

  static OutgoingRequest dar(String tid) {
    return of(ReplyFormat.LINE, "dar " + tid);
  }

  static OutgoingRequest qaread(String key, String tid) {
    return of(ReplyFormat.IQ_ENTRIES, "qaread " + checkKey(key) + " 0 " + tid);
  }

  static OutgoingRequest swap(String key, byte[] value, WriteOptions options, long token) {
    return of(
        ReplyFormat.LINE,
        "swap "
            + checkKey(key)
            + ' '
            + flagsTtlLength(options, value)
            + ' '
            + token
            + (options.pinned() ? " 1" : " 0"),
        value);
  }

  static OutgoingRequest commit(String tid, boolean pending) {
    return of(ReplyFormat.LINE, "commit " + tid + (pending ? " 1" : " 0"));
  }

  static OutgoingRequest release(String tid) {
    return of(ReplyFormat.LINE, "release " + tid);
  }

  /** iqappend/iqprepend. */
  static OutgoingRequest iqDelta(String verb, String key, byte[] delta, String tid) {
    return of(ReplyFormat.LINE, verb + ' ' + checkKey(key) + ' ' + delta.length + ' ' + tid, delta);
  }

  /** iqincr/iqdecr. */
  static OutgoingRequest iqArithmetic(String verb, String key, long delta, String tid) {
    return of(
        ReplyFormat.LINE,
        verb + ' ' + checkKey(key) + ' ' + Long.toUnsignedString(delta) + ' ' + tid);
  }

  // --- sessions ---

  static OutgoingRequest ciget(String sid, String key) {
    return of(ReplyFormat.SESSION_ENTRIES, "ciget " + sid + ' ' + checkKey(key) + " 0");
  }

  static OutgoingRequest oqread(String sid, String key) {
    return of(ReplyFormat.SESSION_ENTRIES, "oqread " + sid + ' ' + checkKey(key));
  }

  /** oqswap/oqwrite/oqadd: staged writes under a session's O lease. */
  static OutgoingRequest sessionStore(
      String verb, String sid, String key, byte[] value, WriteOptions options) {
    return of(
        ReplyFormat.LINE,
        verb + ' ' + sid + ' ' + checkKey(key) + ' ' + flagsTtlLength(options, value),
        value);
  }

  static OutgoingRequest oqappend(String sid, String key, byte[] delta) {
    return of(
        ReplyFormat.LINE, "oqappend " + sid + ' ' + checkKey(key) + ' ' + delta.length, delta);
  }

  static OutgoingRequest oqreg(String sid, String key) {
    return of(ReplyFormat.LINE, "oqreg " + sid + ' ' + checkKey(key));
  }

  /** validate/dcommit/dabort. */
  static OutgoingRequest sessionEnd(String verb, String sid) {
    return of(ReplyFormat.LINE, verb + ' ' + sid);
  }

  // --- encoding ---

  private static String flagsTtlLength(WriteOptions options, byte[] value) {
    return Integer.toUnsignedString(options.flags()) + ' ' + options.exptime() + ' ' + value.length;
  }

  private static OutgoingRequest of(ReplyFormat format, String line, byte[]... blocks) {
    byte[] head = line.getBytes(StandardCharsets.UTF_8);
    byte[] bytes = new byte[head.length + 2 + blockBytes(blocks)];
    int at = put(head, bytes, 0);
    for (byte[] block : blocks) {
      at = put(block, bytes, at);
    }
    return new OutgoingRequest(bytes, format, line, blocks.length > 0);
  }

  /** Copies {@code part} and CRLF into {@code bytes} at {@code at}; returns where the next part goes. */
  private static int put(byte[] part, byte[] bytes, int at) {
    System.arraycopy(part, 0, bytes, at, part.length);
    bytes[at + part.length] = '\r';
    bytes[at + part.length + 1] = '\n';
    return at + part.length + 2;
  }

  private static int blockBytes(byte[][] blocks) {
    int total = 0;
    for (byte[] block : blocks) {
      total += block.length + 2;
    }
    return total;
  }

  /** Keys are at most 250 bytes with no spaces or control characters; anything else would desynchronise the connection. */
  static String checkKey(String key) {
    if (isPrintableAscii(key)) {
      return key; // the common case, checked without encoding the key
    }
    byte[] bytes = key.getBytes(StandardCharsets.UTF_8);
    if (bytes.length == 0 || bytes.length > MAX_KEY_BYTES) {
      throw new IllegalArgumentException(
          "key must be 1.." + MAX_KEY_BYTES + " bytes: '" + key + "'");
    }
    for (byte b : bytes) {
      if (b == ' ' || (b >= 0 && b < 0x20) || b == 0x7F) {
        throw new IllegalArgumentException(
            "key contains a space or control character: '" + key + "'");
      }
    }
    return key;
  }

  private static boolean isPrintableAscii(String key) {
    int length = key.length();
    if (length == 0 || length > MAX_KEY_BYTES) {
      return false;
    }
    for (int i = 0; i < length; i++) {
      char c = key.charAt(i);
      if (c <= ' ' || c >= 0x7F) {
        return false;
      }
    }
    return true;
  }
}
