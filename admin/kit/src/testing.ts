/** Test support for administration plugins (`@gateway/admin-kit/testing`). */
import { GatewayError } from '@gateway/sdk';

/** The GatewayError `fn` throws (an answer's status, message and param to assert on); fails when it throws none. */
export function thrown(fn: () => unknown): GatewayError {
  try {
    fn();
  } catch (error) {
    if (error instanceof GatewayError) return error;
    throw error;
  }
  throw new Error('did not throw');
}
