import type { Context } from 'hono';
import { DrydockError } from '../domain/errors';
import type { AppEnv } from './env';
import { misleadingJson } from './json-body';

/**
 * A strict UTF-8 decoder: an invalid byte or an encoded lone surrogate is an error, not U+FFFD; a
 * byte order mark is kept, to be refused, not dropped unseen.
 */
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** A JSON media type, as hono's JSON validator recognises one. */
const JSON_TYPE = /^application\/([a-z-.]+\+)?json(;|$)/i;

/**
 * Reads the request body once and refuses it unless it is valid UTF-8 without a byte order mark.
 * JSON parsing would otherwise turn each invalid byte (or an encoded lone surrogate such as
 * ED A0 80) into U+FFFD and store text the client never sent. A JSON body is refused too when it
 * says something other than what it means (`misleadingJson`: a name twice, -0, a number that
 * rounds). The text is left in hono's body cache (`bodyCache`, as its own validators use it), so
 * the route's `c.req.json()` parses it without reading or decoding again. Called by `limitBody`
 * (api/body-limit.ts) after the limit, so it reads at most that much.
 */
export async function requireUtf8Body(c: Context<AppEnv>): Promise<void> {
  const bytes = await c.req.arrayBuffer();
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    throw new DrydockError('INVALID_INPUT', 'the request body is not valid UTF-8');
  }
  if (text.charCodeAt(0) === 0xfeff) {
    throw new DrydockError(
      'INVALID_INPUT',
      'the request body starts with a byte order mark: send it without one',
    );
  }
  if (JSON_TYPE.test(c.req.header('content-type') ?? '')) {
    const problem = misleadingJson(text);
    if (problem) throw new DrydockError('INVALID_INPUT', `the JSON body is ambiguous: ${problem}`);
  }
  (c.req.bodyCache as { text?: Promise<string> }).text = Promise.resolve(text);
}
