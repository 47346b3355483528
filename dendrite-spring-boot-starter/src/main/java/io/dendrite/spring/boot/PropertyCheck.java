package io.dendrite.spring.boot;

import java.util.function.Supplier;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;

/**
 * Refusals of a {@code dendrite.*} value, as Spring Boot reports them: its failure analyzer prints "Invalid value
 * '...' for configuration property 'dendrite....'", where it came from, and the reason, and start-up stops.
 */
final class PropertyCheck {
  private PropertyCheck() {}

  /** {@code value} of {@code property} is refused for {@code reason}. */
  static InvalidConfigurationPropertyValueException invalid(
      String property, Object value, String reason) {
    return new InvalidConfigurationPropertyValueException(property, value, reason);
  }

  /** Runs {@code check}, which refuses a value with an {@link IllegalArgumentException}, as a refusal of it. */
  static <T> T checked(String property, Object value, Supplier<T> check) {
    try {
      return check.get();
    } catch (IllegalArgumentException | IllegalStateException refused) {
      throw invalid(property, value, refused.getMessage());
    }
  }
}
