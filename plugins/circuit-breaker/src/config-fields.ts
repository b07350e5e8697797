/**
 * The config field this plugin reads (config-fields.ts in the SDK): `cb_config`, SPEC.md "Circuit breaker". A target
 * takes its parent's unless it sets its own. Declared by the plugin, so a gateway without it refuses `cb_config` as
 * an unknown property.
 */
import { defineConfigFields, type FieldValues, StatusCodes } from '@gateway/sdk';
import { Type } from '@sinclair/typebox';

export const circuitBreakerFields = defineConfigFields({
  fields: {
    cb_config: Type.Object(
      {
        failure_threshold: Type.Number({ minimum: 1 }),
        /** Milliseconds. */
        cooldown_interval: Type.Number({ minimum: 30000 }),
        /** Errors only, at most 200 (the same bounds as `retry.on_status_codes`: docs/security.md). */
        failure_status_codes: Type.Optional(StatusCodes),
      },
      { additionalProperties: false },
    ),
  },
  inherited: ['cb_config'],
});

declare module '@gateway/sdk' {
  interface PluginConfigFields extends FieldValues<typeof circuitBreakerFields> {}
}
