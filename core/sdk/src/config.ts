/**
 * The routing config (SPEC.md "Config object"). PLACEHOLDER TYPE: the full TypeBox schema replaces this file.
 * A target is itself a config, so one type serves both.
 */
export interface GatewayConfig {
  name?: string;
  provider?: string;
  api_key?: string;
  custom_host?: string;
  strategy?: { mode: 'single' | 'loadbalance' | 'fallback' | 'conditional'; on_status_codes?: number[]; conditions?: { query: Record<string, unknown>; then: string }[]; default?: string };
  targets?: GatewayConfig[];
  weight?: number;
  on_status_codes?: number[];
  retry?: { attempts: number; on_status_codes?: number[]; use_retry_after_headers?: boolean };
  request_timeout?: number;
  override_params?: Record<string, unknown>;
  default_params?: Record<string, unknown>;
  drop_params?: string[];
  forward_headers?: string[];
  strict_wire_compliance?: boolean;
  passthrough?: boolean;
  [key: string]: unknown;
}
export type TargetConfig = GatewayConfig;
