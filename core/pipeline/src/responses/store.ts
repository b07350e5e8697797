/**
 * The response store the core reads for the Responses API (docs/responses.md): set once at start-up from the
 * response-store plugin's service, absent when that plugin is disabled (then nothing is stored and
 * previous_response_id is refused on translated providers).
 */
import type { ResponseStore } from '@gateway/sdk';

let current: ResponseStore | undefined;

/** Sets the store; returns the function that unsets it (a gateway's close). */
export function useResponseStore(store: ResponseStore | undefined): () => void {
  current = store;
  return () => {
    if (current === store) current = undefined;
  };
}

export function responseStore(): ResponseStore | undefined {
  return current;
}
