import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { Schemas } from '../client';

/** Who a session signed in as, as `GET /v1/whoami` answered at sign-in. */
export type Caller = Schemas['Caller'];

/** A message shown once, on the page after a change. */
export interface Flash {
  kind: 'ok' | 'error';
  text: string;
}

/** A signed-in browser: the API key it pasted (never sent back to it) and its CSRF token. */
export interface Session {
  readonly id: string;
  readonly key: string;
  readonly csrf: string;
  readonly caller: Caller;
  flash?: Flash;
  expiresAt: number;
}

/** A session ends after this long without a request. */
const IDLE_MS = 8 * 60 * 60 * 1000;

/**
 * The console's sessions, in this process's memory: the browser holds only a random session id
 * (its cookie), the API key stays on the server. A restart signs everyone out; with more than one
 * API process a browser must keep to one of them (docs/console.md).
 */
export class Sessions {
  private readonly byId = new Map<string, Session>();

  open(key: string, caller: Caller, now = Date.now()): Session {
    this.sweep(now);
    const session: Session = { id: token(), key, csrf: token(), caller, expiresAt: now + IDLE_MS };
    this.byId.set(session.id, session);
    return session;
  }

  /** The live session of `id`, its idle time restarted; undefined when unknown or expired. */
  find(id: string | undefined, now = Date.now()): Session | undefined {
    const session = id === undefined ? undefined : this.byId.get(id);
    if (!session) return undefined;
    if (session.expiresAt <= now) {
      this.byId.delete(session.id);
      return undefined;
    }
    session.expiresAt = now + IDLE_MS;
    return session;
  }

  close(id: string): void {
    this.byId.delete(id);
  }

  private sweep(now: number): void {
    for (const [id, session] of this.byId) if (session.expiresAt <= now) this.byId.delete(id);
  }
}

/** 32 random bytes, base64url: a session id or a CSRF token. */
function token(): string {
  return randomBytes(32).toString('base64url');
}

/** Whether a submitted CSRF token is the session's, compared in constant time. */
export function csrfMatches(session: Session, submitted: unknown): boolean {
  if (typeof submitted !== 'string') return false;
  const want = Buffer.from(session.csrf);
  const got = Buffer.from(submitted);
  return got.length === want.length && timingSafeEqual(got, want);
}
