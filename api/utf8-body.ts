import { createMiddleware } from 'hono/factory';
import { DrydockError } from '../domain/errors';
import type { AppEnv } from './env';

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Refuses a request body that is not valid UTF-8. JSON parsing would otherwise turn each invalid
 * byte (or an encoded lone surrogate such as ED A0 80) into U+FFFD and store text the client never
 * sent. Runs after the body limit, so it reads at most that much; the route's own parsing then
 * reuses the bytes read here.
 */
export const requireUtf8Body = createMiddleware<AppEnv>(async (c, next) => {
  if (c.req.raw.body) {
    let bytes: ArrayBuffer;
    try {
      bytes = await c.req.arrayBuffer();
    } catch (error) {
      if (error instanceof DrydockError) throw error;
      throw new DrydockError('INVALID_INPUT', 'the request body ended before it was complete');
    }
    try {
      strictUtf8.decode(bytes);
    } catch {
      throw new DrydockError('INVALID_INPUT', 'the request body is not valid UTF-8');
    }
  }
  await next();
});
