/** Input items as the store keeps them: each with an id, as OpenAI's input_items list shows them. */
import type { JsonObject } from '@gateway/sdk';
import { inputItems } from './request.ts';
import { newId } from './response.ts';

export function storedInputItems(body: JsonObject): JsonObject[] {
  let items: JsonObject[];
  try {
    items = inputItems(body.input);
  } catch {
    return [];
  }
  return items.map((item) => {
    const type = item.type ?? 'message';
    const withType = item.type === undefined ? { type, ...item } : item;
    if (typeof item.id === 'string') return withType;
    return { id: newId(type === 'function_call' ? 'fc' : type === 'function_call_output' ? 'fco' : 'msg'), ...withType };
  });
}
