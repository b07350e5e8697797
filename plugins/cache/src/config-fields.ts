/**
 * The config field this plugin reads (config-fields.ts in the SDK): `cache`, `{"mode": "simple" | "semantic",
 * "max_age": seconds}`. A config with it alone is valid (SPEC.md's property sets); a target takes its parent's
 * unless it sets its own. Declared by the plugin, so a gateway without it refuses `cache` as an unknown property.
 */
import { defineConfigFields, type FieldValues } from '@gateway/sdk';
import { Type } from '@sinclair/typebox';

export const cacheFields = defineConfigFields({
  fields: {
    cache: Type.Object(
      {
        mode: Type.Union([Type.Literal('simple'), Type.Literal('semantic')]),
        /** Seconds (INTERFACE.md). */
        max_age: Type.Optional(Type.Integer({ minimum: 0 })),
      },
      { additionalProperties: false },
    ),
  },
  propertySets: [['cache']],
  // Listed where SPEC.md lists it in an invalid config's message.
  propertySetsBefore: 'retry',
  inherited: ['cache'],
});

declare module '@gateway/sdk' {
  interface PluginConfigFields extends FieldValues<typeof cacheFields> {}
}
