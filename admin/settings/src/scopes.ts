/** The scopes of the settings plugin's routes. */
export const SCOPES = ['settings.read', 'settings.write', 'email_domains.read', 'email_domains.write', 'logs.read', 'logs.write', 'logs.export'] as const;
export type SettingsScope = (typeof SCOPES)[number];
