/** The scopes this plugin's routes ask for. */
export const SCOPES = [
  'integrations.read',
  'integrations.write',
  'integrations.delete',
  'providers.read',
  'providers.write',
  'providers.delete',
  'virtual_keys.read',
  'virtual_keys.write',
  'virtual_keys.delete',
  'models.read',
] as const;

export type IntegrationScope = (typeof SCOPES)[number];

/** GET /models: a key that may call models (`completions.write`) may also list them. */
export const MODELS_SCOPES = ['models.read', 'completions.write'] as const;
