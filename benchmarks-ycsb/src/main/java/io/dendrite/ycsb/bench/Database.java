package io.dendrite.ycsb.bench;

import java.util.Objects;

/**
 * A database the benchmark loads and compares against, and how to empty it before a load (the
 * bindings create the table or collection again when it is missing).
 */
public record Database(String name, Reset reset) {

    /** Drops what a previous load left behind. */
    @FunctionalInterface
    public interface Reset {
        void run() throws Exception;
    }

    public Database {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(reset, "reset");
    }

    /** A database with nothing to drop, such as YCSB's {@code BasicDB}. */
    public static Database withoutReset(String name) {
        return new Database(name, () -> { });
    }
}
