/**
 * Failures of a secret manager. Clients throw ManagerFailure with a detail that is safe to show (a status, the
 * manager's error code); the service names the reference and turns it into the 502 the caller sees. Neither ever
 * carries a credential or a secret value.
 */
import { GatewayError } from '@gateway/sdk';

export class ManagerFailure extends Error {
  constructor(
    readonly detail: string,
    /** A network failure or a 5xx/429: another try later may work. */
    readonly retryable = false,
  ) {
    super(detail);
    this.name = 'ManagerFailure';
  }
}

/** 502 `secret_manager_error`: the manager of a reference could not be reached or refused the read. */
export function secretManagerError(reference: string, detail: string, retryable: boolean): GatewayError {
  return new GatewayError({
    code: 'secret_manager_error',
    type: 'upstream_error',
    status: 502,
    message: `Could not read secret reference ${reference}: ${detail}`,
    retryable,
  });
}
