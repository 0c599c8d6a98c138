import type { Context } from 'hono';
import { DrydockError } from '../domain/errors';
import type { AppEnv } from './env';

/** A strict UTF-8 decoder: an invalid byte or an encoded lone surrogate is an error, not U+FFFD. */
const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Reads the request body once and refuses it unless it is valid UTF-8. JSON parsing would
 * otherwise turn each invalid byte (or an encoded lone surrogate such as ED A0 80) into U+FFFD and
 * store text the client never sent. The text is left in hono's body cache (`bodyCache`, as its own
 * validators use it), so the route's `c.req.json()` parses it without reading or decoding again.
 * Called by `limitBody` (api/body-limit.ts) after the limit, so it reads at most that much.
 */
export async function requireUtf8Body(c: Context<AppEnv>): Promise<void> {
  const bytes = await c.req.arrayBuffer();
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    throw new DrydockError('INVALID_INPUT', 'the request body is not valid UTF-8');
  }
  (c.req.bodyCache as { text?: Promise<string> }).text = Promise.resolve(text);
}
