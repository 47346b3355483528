package io.dendrite.spring.boot;

import java.util.List;
import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.core.type.AnnotatedTypeMetadata;

/**
 * Matches when {@code dendrite.cache.servers} is set, as a list ({@code servers[0]=...}, YAML's {@code - ...}) or as
 * one comma-separated value; {@code @ConditionalOnProperty} sees only the latter.
 */
final class CacheServersCondition extends SpringBootCondition {
  @Override
  public ConditionOutcome getMatchOutcome(
      ConditionContext context, AnnotatedTypeMetadata metadata) {
    List<String> servers =
        Binder.get(context.getEnvironment())
            .bind("dendrite.cache.servers", Bindable.listOf(String.class))
            .orElse(List.of());
    return servers.isEmpty()
        ? ConditionOutcome.noMatch("dendrite.cache.servers is not set: Dendrite is off")
        : ConditionOutcome.match("dendrite.cache.servers is " + servers);
  }
}
