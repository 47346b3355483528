package io.dendrite.ycsb.bench;

import java.util.OptionalLong;

/**
 * A database server's cumulative counters as read at one moment; a counter this kind of server does not
 * keep (MongoDB has no commit or fsync count) is empty.
 */
record StatusCounts(OptionalLong statements, OptionalLong commits, OptionalLong fsyncs) {}
