package io.dendrite.iq.server;

import io.dendrite.iq.protocol.MalformedRequestException;
import io.dendrite.iq.protocol.Request;
import java.util.HashMap;
import java.util.Map;

/** Maps command names to their implementations and runs a request through the right one. */
final class CommandTable {

  private record Entry(CommandHandler command, boolean acceptsNoreply) {}

  private final Map<String, Entry> commands = new HashMap<>();
  private final ServerStats stats;
  private final Handover handover;

  CommandTable(ServerStats stats, Handover handover) {
    this.stats = stats;
    this.handover = handover;
  }

  void register(String name, boolean acceptsNoreply, CommandHandler command) {
    if (commands.putIfAbsent(name, new Entry(command, acceptsNoreply)) != null) {
      throw new IllegalStateException("command registered twice: " + name);
    }
  }

  /**
   * Runs one request from {@code client}; unknown commands get {@code ERROR}, malformed or forbidden ones {@code
   * CLIENT_ERROR}, one that would take the client past what it may hold {@code SERVER_ERROR}.
   */
  void execute(Request request, Client client, ReplyWriter out) {
    Entry entry = commands.get(request.command());
    if (entry == null) {
      out.error("ERROR");
      return;
    }
    stats.countCommand(request.command());
    try {
      Arguments args = Arguments.of(request, entry.acceptsNoreply(), client);
      out.quiet(args.noreply());
      ItemStore.pinnedStoredInThisThread(); // left by a sweep or a lapse that ran in this thread
      entry.command().execute(args, out);
      if (ItemStore.pinnedStoredInThisThread()) {
        handover.wrotePinned(client);
      }
    } catch (MalformedRequestException e) {
      out.error("CLIENT_ERROR " + e.getMessage());
    } catch (NotPermittedException e) {
      out.replaceWithError("CLIENT_ERROR " + e.getMessage());
    } catch (HeldBytes.LimitException e) {
      stats.heldLimitRefusals.increment();
      out.replaceWithError("SERVER_ERROR " + e.getMessage());
    } catch (ReplyWriter.ReplyTooLargeException e) {
      stats.repliesTooLarge.increment();
      out.replaceWithError("SERVER_ERROR " + e.getMessage());
    } finally {
      out.quiet(false);
    }
  }
}
