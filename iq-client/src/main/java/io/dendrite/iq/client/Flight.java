package io.dendrite.iq.client;

import java.util.ArrayList;
import java.util.List;

/**
 * Requests the calling thread sends while the flight is open are held, then written together: one system call per
 * connection instead of one per request, and the server reads them in one go and answers them in one write. They are
 * written when the thread first waits for a reply (of any request, held or not: {@code get}, {@code join}, the
 * blocking calls) or when the flight closes, whichever comes first, so a flight never makes its own thread wait for a
 * request it has not written.
 *
 * <pre>{@code
 * try (Flight flight = client.flight()) {
 *     CompletableFuture<Outcome> a = client.setAsync("a", x, WriteOptions.DEFAULT);
 *     CompletableFuture<Outcome> b = client.setAsync("b", y, WriteOptions.DEFAULT);
 *     a.join(); // writes both (one write per server), then waits
 * }
 * }</pre>
 *
 * <p>A flight belongs to the thread that opened it and covers every {@link IqClient} that thread uses. Opening one
 * inside another joins the outer one: the requests are written when the outer one closes. While it is open, its
 * thread must not wait for anything but replies (a lock, another thread, a future of another thread) unless the
 * replies that other waits on are not among the ones held; close the flight first. Callbacks of other threads'
 * requests that this thread runs while it reads replies are not in the flight: what they send is written at once.
 */
public final class Flight implements AutoCloseable {

  private static final ThreadLocal<Flight> OPEN = new ThreadLocal<>();

  private final Thread owner;

  /** Flights opened inside this one and not closed yet. */
  private int nested;

  /** Connections with held requests, in the order first used, and each one's requests in the order sent. */
  private final List<SocketConnection> connections = new ArrayList<>(2);

  private final List<List<OutgoingRequest>> held = new ArrayList<>(2);

  private Flight(Thread owner) {
    this.owner = owner;
  }

  /** Opens a flight for the calling thread, or joins the one it has open. */
  static Flight open() {
    Flight current = OPEN.get();
    if (current != null) {
      current.nested++;
      return current;
    }
    Flight flight = new Flight(Thread.currentThread());
    OPEN.set(flight);
    return flight;
  }

  /** The calling thread's open flight, or null (none open, or suspended while the thread runs others' callbacks). */
  static Flight ofCurrentThread() {
    return OPEN.get();
  }

  /** Writes what the calling thread's flight holds, if it has one open; before the thread waits for a reply. */
  static void writeHeldOfCurrentThread() {
    Flight flight = OPEN.get();
    if (flight != null) {
      flight.writeHeld();
    }
  }

  /**
   * Writes what the calling thread's flight holds and takes the thread out of it, so that what it sends is written
   * at once; returns the flight to {@link #resume} (null if there was none). Nothing stays held meanwhile: a
   * callback run in between may wait for any request, its own thread's included.
   */
  static Flight suspend() {
    Flight flight = OPEN.get();
    if (flight != null) {
      flight.writeHeld();
      OPEN.set(null);
    }
    return flight;
  }

  static void resume(Flight flight) {
    if (flight != null) {
      OPEN.set(flight);
    }
  }

  /** Holds a command for {@code connection} until the flight writes. */
  void hold(SocketConnection connection, OutgoingRequest command) {
    for (int i = 0; i < connections.size(); i++) {
      if (connections.get(i) == connection) {
        held.get(i).add(command);
        return;
      }
    }
    connections.add(connection);
    List<OutgoingRequest> commands = new ArrayList<>(4);
    commands.add(command);
    held.add(commands);
  }

  /**
   * Writes every held command, one write per connection (nothing if none is held). The flight is suspended
   * meanwhile: a connection that fails completes its commands' futures here, and what their callbacks send goes out
   * at once.
   */
  private void writeHeld() {
    if (connections.isEmpty()) {
      return;
    }
    List<SocketConnection> writing = List.copyOf(connections);
    List<List<OutgoingRequest>> commands = List.copyOf(held);
    connections.clear();
    held.clear();
    OPEN.set(null);
    try {
      for (int i = 0; i < writing.size(); i++) {
        writing.get(i).sendAll(commands.get(i));
      }
    } finally {
      OPEN.set(this);
    }
  }

  /**
   * Writes what is held and ends the flight (or, for one opened inside another, leaves that to the outer one).
   *
   * @throws IllegalStateException when called by another thread than the one that opened it
   */
  @Override
  public void close() {
    if (Thread.currentThread() != owner) {
      throw new IllegalStateException(
          "a flight is closed by the thread that opened it (" + owner.getName() + ")");
    }
    if (nested > 0) {
      nested--;
      return;
    }
    if (OPEN.get() != this) {
      return; // closed already
    }
    try {
      writeHeld();
    } finally {
      OPEN.set(null);
    }
  }
}
