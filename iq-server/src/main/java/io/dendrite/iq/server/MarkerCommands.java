package io.dendrite.iq.server;

/**
 * Dendrite's commands for TARDIS's pending markers (see {@link PendingMarkers}): {@code pmark} announces a buffered
 * write before it is made, {@code pready} says that the markers a restart lost are back. Clearing a marker is a
 * lease holder's ({@code commit <tid> 0}, {@code iqset}), in {@link LeaseCommands}.
 */
final class MarkerCommands {

  private final ServerState state;

  MarkerCommands(ServerState state) {
    this.state = state;
  }

  void registerAll(CommandTable table) {
    table.register("pmark", true, this::pmark);
    table.register("pready", true, this::pready);
    table.register("pmoved", true, this::pmoved);
  }

  /**
   * {@code pmoved [noreply]}: the client says that every pinned value it keeps a replica of here is now copied to
   * the servers that replace this one, which a leaving server waits for before it stops ({@link Handover}). {@code
   * OK} when recorded; {@code NOT_LEAVING} when the server is not leaving, and nothing is recorded. It speaks for
   * its own connection only, so it needs no pin right.
   */
  private void pmoved(Arguments args, ReplyWriter out) {
    args.requireCount(0, 0);
    out.line(state.handover.moved(args.client()) ? "OK" : "NOT_LEAVING");
  }

  /**
   * {@code pmark <key> [noreply]}: {@code STORED}, or {@code SERVER_ERROR out of pinned memory} with nothing marked.
   * Needs no lease: a marker only ever sends a reader the long way round. It voids no lease either, so a writer
   * takes the key's Q lease first ({@code qaread}), as TARDIS does: that voids the I lease of a reader told {@code
   * <p>} = 0 before the mark, whose fill would clear it, and keeps other writers from committing meanwhile.
   */
  private void pmark(Arguments args, ReplyWriter out) {
    args.requireCount(1, 1);
    String key = args.key(0);
    state.requireMayPin(args.client());
    try (KeyLocks.Held held = state.locks.lock(key)) {
      out.line(state.pendingMarkers.add(key) ? "STORED" : ServerState.OUT_OF_PINNED_MEMORY);
    }
  }

  /**
   * {@code pready [noreply]}: {@code OK}; from now on {@code <p>} reports the markers the server holds instead of
   * "maybe" for every key. Only a pin user may say so: a stranger's early {@code pready} would make the server
   * answer "not pending" for keys whose markers were not restored yet.
   */
  private void pready(Arguments args, ReplyWriter out) {
    args.requireCount(0, 0);
    state.requireMayPin(args.client());
    state.pendingMarkers.markReady();
    out.line("OK");
  }
}
