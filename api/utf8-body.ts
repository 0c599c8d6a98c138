import type { Context } from 'hono';
import { DrydockError } from '../domain/errors';
import type { AppEnv } from './env';

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Refuses a request body that is not valid UTF-8. JSON parsing would otherwise turn each invalid
 * byte (or an encoded lone surrogate such as ED A0 80) into U+FFFD and store text the client never
 * sent. Runs after the body limit, so it reads at most that much. The text decoded here is what the
 * route's own parsing reads (`c.req.json()` parses the cached text): decoding it again from the
 * cached bytes would go through a web Response and its stream. Called by `limitBody` (api/body-limit.ts)
 * for every method but GET and HEAD, which have no body to read (Fetch gives them none); reading
 * it as bytes, not through `c.req.raw.body`, keeps @hono/node-server's lightweight request off
 * web streams.
 */
export async function requireUtf8Body(c: Context<AppEnv>): Promise<void> {
  let bytes: ArrayBuffer;
  try {
    bytes = await c.req.arrayBuffer();
  } catch (error) {
    if (error instanceof DrydockError) throw error;
    throw new DrydockError('INVALID_INPUT', 'the request body ended before it was complete');
  }
  let text: string;
  try {
    text = strictUtf8.decode(bytes);
  } catch {
    throw new DrydockError('INVALID_INPUT', 'the request body is not valid UTF-8');
  }
  // Hono's cache holds the promises its body readers return (its type names the values).
  (c.req.bodyCache as { text?: Promise<string> }).text = Promise.resolve(text);
  c.set('bodyText', text);
}
