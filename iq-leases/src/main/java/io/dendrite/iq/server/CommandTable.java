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

  CommandTable(ServerStats stats) {
    this.stats = stats;
  }

  void register(String name, boolean acceptsNoreply, CommandHandler command) {
    if (commands.putIfAbsent(name, new Entry(command, acceptsNoreply)) != null) {
      throw new IllegalStateException("command registered twice: " + name);
    }
  }

  /** Runs one request; unknown commands get {@code ERROR}, malformed ones {@code CLIENT_ERROR}. */
  void execute(Request request, ReplyWriter out) {
    Entry entry = commands.get(request.command());
    if (entry == null) {
      out.error("ERROR");
      return;
    }
    stats.countCommand(request.command());
    try {
      Arguments args = Arguments.of(request, entry.acceptsNoreply());
      out.quiet(args.noreply());
      entry.command().execute(args, out);
    } catch (MalformedRequestException e) {
      out.error("CLIENT_ERROR " + e.getMessage());
    } catch (ReplyWriter.ReplyTooLargeException e) {
      stats.repliesTooLarge.increment();
      out.replaceWithError("SERVER_ERROR " + e.getMessage());
    } finally {
      out.quiet(false);
    }
  }
}
