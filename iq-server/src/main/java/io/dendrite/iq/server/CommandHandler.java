package io.dendrite.iq.server;

/** One protocol command: reads its arguments, acts on the server state, writes its reply. */
@FunctionalInterface
interface CommandHandler {

  void execute(Arguments args, ReplyWriter out);
}
