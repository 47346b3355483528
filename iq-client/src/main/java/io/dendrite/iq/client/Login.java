package io.dendrite.iq.client;

import java.nio.charset.StandardCharsets;
import java.util.Objects;

/**
 * The user and password a client logs in with when the servers require it ({@code --auth-file}): memcached's
 * text-protocol login, a {@code set} whose data is {@code <user> <password>}, sent first on every connection.
 * {@link #toString()} never shows the password.
 */
public final class Login {
  static final Login NONE = new Login(null, null);

  private final String user;
  private final String password;

  private Login(String user, String password) {
    this.user = user;
    this.password = password;
  }

  /**
   * @throws IllegalArgumentException when the user is empty or holds a space or colon, or the password is empty
   */
  public static Login of(String user, String password) {
    Objects.requireNonNull(user, "user");
    Objects.requireNonNull(password, "password");
    if (user.isEmpty() || user.contains(" ") || user.contains(":") || password.isEmpty()) {
      throw new IllegalArgumentException(
          "a login needs a user without spaces or colons and a password, got user \""
              + user
              + "\"");
    }
    return new Login(user, password);
  }

  boolean required() {
    return user != null;
  }

  String user() {
    return user;
  }

  byte[] data() {
    return (user + " " + password).getBytes(StandardCharsets.UTF_8);
  }

  @Override
  public String toString() {
    return required() ? "Login[" + user + "]" : "Login[none]";
  }
}
