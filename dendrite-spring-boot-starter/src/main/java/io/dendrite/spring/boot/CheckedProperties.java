package io.dendrite.spring.boot;

/**
 * The {@code dendrite.*} properties once {@link SettingsCheck} passed them: the settings' beans take these, so that a
 * conflict between properties is reported, naming them, before any one setting trips on it.
 */
record CheckedProperties(DendriteProperties properties) {}
