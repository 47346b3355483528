package io.dendrite.testsupport;

import java.util.Locale;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Names for per-test databases and key prefixes: readable (class and method) and unique (a random suffix),
 * so repeated and parallel runs never race on each other's state.
 */
final class UniqueName {
  private UniqueName() {}

  /** A lowercase identifier of at most {@code maxLength} characters made of [a-z0-9_]. */
  static String of(ExtensionContext context, int maxLength) {
    String readable =
        context.getRequiredTestClass().getSimpleName()
            + context.getTestMethod().map(m -> "_" + m.getName()).orElse("");
    String suffix =
        "_" + Long.toString(ThreadLocalRandom.current().nextLong() & Long.MAX_VALUE, 36);
    String cleaned = ("t_" + readable).toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9_]", "_");
    int room = maxLength - suffix.length();
    return (cleaned.length() > room ? cleaned.substring(0, room) : cleaned) + suffix;
  }
}
