import { isUtf8 } from 'node:buffer';
import type { Context } from 'hono';
import { DrydockError } from '../domain/errors';
import type { AppEnv } from './env';

/**
 * Reads the request body once (`c.req.arrayBuffer()`, which hono keeps for the route's own
 * parsing) and refuses it unless it is valid UTF-8. JSON parsing would otherwise turn each invalid
 * byte (or an encoded lone surrogate such as ED A0 80) into U+FFFD and store text the client never
 * sent. Called by `limitBody` (api/body-limit.ts) after the limit, so it reads at most that much.
 */
export async function requireUtf8Body(c: Context<AppEnv>): Promise<void> {
  if (!isUtf8(await c.req.arrayBuffer())) {
    throw new DrydockError('INVALID_INPUT', 'the request body is not valid UTF-8');
  }
}
