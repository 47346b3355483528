package io.dendrite.iq.server;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Who may talk to the server: user names with their passwords, as memcached's {@code -Y} auth file lists them (one
 * {@code user:password} per line). With none, every connection is served; with some, a connection's first command
 * must be memcached's text-protocol login, a {@code set} of any key whose data is {@code <user> <password>}.
 * {@link #toString()} never shows a password.
 */
public final class Credentials {
  private static final Credentials NONE = new Credentials(Map.of());

  private final Map<String, byte[]> passwords;

  private Credentials(Map<String, byte[]> passwords) {
    this.passwords = passwords;
  }

  /** No authentication: every connection is served (the default, for a server on loopback). */
  public static Credentials none() {
    return NONE;
  }

  /**
   * These users and passwords.
   *
   * @throws IllegalArgumentException when a user name is empty or holds a space or colon, or a password is empty
   */
  public static Credentials of(Map<String, String> userToPassword) {
    Map<String, byte[]> passwords = new LinkedHashMap<>();
    userToPassword.forEach(
        (user, password) -> {
          if (user == null || user.isEmpty() || user.contains(" ") || user.contains(":")) {
            throw new IllegalArgumentException(
                "a user name must be non-empty, without spaces or colons, got \"" + user + "\"");
          }
          if (password == null || password.isEmpty()) {
            throw new IllegalArgumentException("the password of " + user + " is empty");
          }
          passwords.put(user, password.getBytes(StandardCharsets.UTF_8));
        });
    return new Credentials(Map.copyOf(passwords));
  }

  /**
   * Reads an auth file: one {@code user:password} per line; empty lines and lines starting with {@code #} are
   * skipped.
   *
   * @throws IllegalArgumentException naming the line that is not {@code user:password}
   * @throws UncheckedIOException when the file cannot be read
   */
  public static Credentials read(Path authFile) {
    List<String> lines;
    try {
      lines = Files.readAllLines(authFile, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read the auth file " + authFile, e);
    }
    Map<String, String> users = new LinkedHashMap<>();
    for (int i = 0; i < lines.size(); i++) {
      String line = lines.get(i).strip();
      if (line.isEmpty() || line.startsWith("#")) {
        continue;
      }
      int colon = line.indexOf(':');
      if (colon <= 0 || colon == line.length() - 1) {
        throw new IllegalArgumentException(authFile + " line " + (i + 1) + " is not user:password");
      }
      users.put(line.substring(0, colon), line.substring(colon + 1));
    }
    if (users.isEmpty()) {
      throw new IllegalArgumentException(authFile + " lists no user");
    }
    return of(users);
  }

  /** Whether connections must log in. */
  public boolean required() {
    return !passwords.isEmpty();
  }

  /**
   * The user {@code login}, a login {@code set}'s data, logs in as when it is {@code <user> <password>} of a listed
   * user, else {@code null}. The password is compared in constant time.
   */
  String userOf(byte[] login) {
    String text = new String(login, StandardCharsets.UTF_8);
    int space = text.indexOf(' ');
    if (space <= 0) {
      return null;
    }
    String user = text.substring(0, space);
    byte[] expected = passwords.get(user);
    byte[] given = text.substring(space + 1).getBytes(StandardCharsets.UTF_8);
    boolean matches =
        expected != null & MessageDigest.isEqual(expected == null ? given : expected, given);
    return matches ? user : null;
  }

  /** Whether {@code user} is listed. */
  boolean lists(String user) {
    return passwords.containsKey(user);
  }

  @Override
  public String toString() {
    return required() ? "Credentials[" + passwords.size() + " user(s)]" : "Credentials[none]";
  }
}
