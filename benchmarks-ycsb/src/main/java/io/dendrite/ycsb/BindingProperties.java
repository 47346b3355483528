package io.dendrite.ycsb;

import java.util.Arrays;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;

/**
 * Typed reads of the YCSB properties (workload file, {@code -p} options) a binding is configured with; a bad value
 * gets an {@link IllegalArgumentException} naming the property.
 */
final class BindingProperties {
  private final Properties properties;
  private final Map<String, String> environment;

  BindingProperties(Properties properties, Map<String, String> environment) {
    this.properties = properties;
    this.environment = environment;
  }

  /** The property's value, trimmed; empty when unset or blank. */
  Optional<String> optional(String name) {
    return Optional.ofNullable(properties.getProperty(name))
        .map(String::trim)
        .filter(value -> !value.isEmpty());
  }

  /** The property's value, else the environment variable's, else a failure that names both. */
  String requiredOrEnvironment(String name, String variable) {
    return optional(name)
        .or(
            () ->
                Optional.ofNullable(environment.get(variable))
                    .map(String::trim)
                    .filter(value -> !value.isEmpty()))
        .orElseThrow(
            () ->
                new IllegalArgumentException(
                    "set property " + name + " (or environment variable " + variable + ")"));
  }

  String string(String name, String defaultValue) {
    return optional(name).orElse(defaultValue);
  }

  long number(String name, long defaultValue, long min) {
    long value = optional(name).map(text -> parse(name, text)).orElse(defaultValue);
    if (value < min) {
      throw new IllegalArgumentException(
          "property " + name + " must be at least " + min + ", got " + value);
    }
    return value;
  }

  int integer(String name, int defaultValue, int min) {
    long value = number(name, defaultValue, min);
    if (value > Integer.MAX_VALUE) {
      throw new IllegalArgumentException("property " + name + " must fit an int, got " + value);
    }
    return (int) value;
  }

  double real(String name, double defaultValue) {
    String text = optional(name).orElse(null);
    if (text == null) {
      return defaultValue;
    }
    try {
      return Double.parseDouble(text);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(
          "property " + name + " must be a number, got \"" + text + "\"", e);
    }
  }

  /** One of an enum's constants, by name in any case; a bad name is refused with the names it could be. */
  <E extends Enum<E>> E choice(String name, Class<E> type, E defaultValue) {
    String text = optional(name).orElse(null);
    if (text == null) {
      return defaultValue;
    }
    for (E constant : type.getEnumConstants()) {
      if (constant.name().equalsIgnoreCase(text)) {
        return constant;
      }
    }
    throw new IllegalArgumentException(
        "property "
            + name
            + " must be one of "
            + Arrays.toString(type.getEnumConstants())
            + ", got \""
            + text
            + "\"");
  }

  boolean bool(String name, boolean defaultValue) {
    String text = optional(name).map(value -> value.toLowerCase(Locale.ROOT)).orElse(null);
    if (text == null) {
      return defaultValue;
    }
    return switch (text) {
      case "true" -> true;
      case "false" -> false;
      default ->
          throw new IllegalArgumentException(
              "property " + name + " must be true or false, got \"" + text + "\"");
    };
  }

  private static long parse(String name, String text) {
    try {
      return Long.parseLong(text);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(
          "property " + name + " must be a whole number, got \"" + text + "\"", e);
    }
  }
}
