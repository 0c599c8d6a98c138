import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Answer, Schemas } from '@drydock/client';
import type { PersonTokens } from './oidc';
import { derivedKey, seal, unseal } from './sealing';

/** Who a session signed in as, as `GET /v1/whoami` answered at sign-in. */
export type Caller = Schemas['Caller'];

export type CreatedToken = Answer<'post', '/v1/tokens'>;

/** A message shown once, on the page after a change. */
export interface Flash {
  kind: 'ok' | 'error';
  text: string;
}

/**
 * A signed-in browser: the bearer the console calls the API with (never sent back to it) — the
 * API key it pasted, or the person's access token — and its CSRF token.
 */
export interface Session {
  readonly id: string;
  readonly key: string;
  readonly csrf: string;
  readonly caller: Caller;
  /** A person signed in at the OpenID provider: their tokens (`key` is the access token). */
  readonly person?: PersonTokens;
  flash?: Flash;
  /** A join token just created (its secret in it), for the page after the creation to show once. */
  created?: CreatedToken;
  expiresAt: number;
}

/** A session ends after this long without a request. */
const IDLE_MS = 8 * 60 * 60 * 1000;

/**
 * The console's sessions, in the database, so that every API process knows each of them
 * (API_PROCESSES > 1: a browser's requests land on any). The browser holds only a random session
 * id (its cookie); the row is found by the id's SHA-256 and holds the API key sealed (AES-256-GCM)
 * under a key derived from the id, so neither the browser nor the table alone has the key.
 */
export class Sessions {
  constructor(private readonly store: SessionStore) {}

  /** A new session for an API key, or (`person`) for a person's tokens. */
  async open(key: string, caller: Caller, now = Date.now(), person?: PersonTokens): Promise<Session> {
    const id = token();
    const session: Session = { id, key, csrf: token(), caller, person, expiresAt: now + IDLE_MS };
    await this.store.insert(
      {
        idHash: idHash(session.id),
        sealedKey: sealCredential(id, key, person),
        csrf: session.csrf,
        caller,
        flash: null,
        sealedCreated: null,
        expiresAt: new Date(session.expiresAt),
      },
      new Date(now),
    );
    return session;
  }

  /** The live session of `id`, its idle time restarted; undefined when unknown or expired. */
  async find(id: string | undefined, now = Date.now()): Promise<Session | undefined> {
    if (id === undefined) return undefined;
    const row = await this.store.touch(idHash(id), new Date(now), new Date(now + IDLE_MS));
    if (!row) return undefined;
    const credential = unsealCredential(id, row.sealedKey);
    if (credential === undefined) return undefined;
    const created = row.sealedCreated === null ? undefined : unseal(sealingKey(id), row.sealedCreated);
    return {
      id,
      ...credential,
      csrf: row.csrf,
      caller: row.caller as Caller,
      flash: row.flash ?? undefined,
      created: created === undefined ? undefined : (JSON.parse(created) as CreatedToken),
      expiresAt: row.expiresAt.getTime(),
    };
  }

  /** Keeps what a change left for the next page (flash, created token), or that a page took it. */
  async saveShownOnce(session: Session): Promise<void> {
    await this.store.update(idHash(session.id), {
      flash: session.flash ?? null,
      sealedCreated: session.created ? seal(sealingKey(session.id), JSON.stringify(session.created)) : null,
    });
  }

  async close(id: string): Promise<void> {
    await this.store.delete(idHash(id));
  }

  /**
   * Renews a person's session, one request at a time across every API process: the row is locked
   * (FOR UPDATE) and read again, so a request that comes after finds the tokens another one just
   * renewed (`renew` then keeps them) instead of spending a rotated refresh token twice. `renew`
   * answers the session to keep (new tokens and caller, or the same), or `null` to end it.
   * `busy` while another request renews it; undefined when the session is gone.
   */
  async renew<T>(
    session: Session,
    renew: (current: Session) => Promise<{ keep: Session | null; outcome: T }>,
  ): Promise<{ session: Session | null; outcome: T } | 'busy' | undefined> {
    const attempt = await this.store.locked<{ session: Session | null; outcome: T } | undefined>(
      idHash(session.id),
      async (row) => {
        const credential = unsealCredential(session.id, row.sealedKey);
        if (credential?.person === undefined) return { result: undefined };
        const current: Session = { ...session, ...credential, caller: row.caller as Caller };
        const { keep, outcome } = await renew(current);
        if (!keep) return { remove: true, result: { session: null, outcome } };
        return {
          set: { sealedKey: sealCredential(session.id, keep.key, keep.person), caller: keep.caller },
          result: { session: keep, outcome },
        };
      },
    );
    return attempt === 'busy' ? attempt : attempt?.result;
  }
}

/** A session as stored: its id's hash, the sealed secrets, what shows once. */
export interface SessionRow {
  idHash: string;
  sealedKey: string;
  csrf: string;
  caller: unknown;
  flash: Flash | null;
  sealedCreated: string | null;
  expiresAt: Date;
}

/** What a locked session's work does to its row, and what it answers. */
export interface LockedWork<T> {
  set?: Pick<SessionRow, 'sealedKey' | 'caller'>;
  remove?: boolean;
  result: T;
}

/** Where the sessions are kept (db/console-sessions.ts: a table every API process shares). */
export interface SessionStore {
  /** Adds a session; the expired ones go at the same time. */
  insert(row: SessionRow, now: Date): Promise<void>;
  /** The live session of `idHash` with its expiry moved to `expiresAt`; undefined when gone. */
  touch(idHash: string, now: Date, expiresAt: Date): Promise<SessionRow | undefined>;
  update(idHash: string, set: Pick<SessionRow, 'flash' | 'sealedCreated'>): Promise<void>;
  delete(idHash: string): Promise<void>;
  /**
   * Runs `work` on the session row of `idHash`, locked until its change (`set` or `remove`)
   * commits; `busy` when another holds the row (nothing waits for it), undefined when there is
   * no such row.
   */
  locked<T>(
    idHash: string,
    work: (row: SessionRow) => Promise<LockedWork<T>>,
  ): Promise<{ result: T } | 'busy' | undefined>;
}

function idHash(id: string): string {
  return createHash('sha256').update(id).digest('base64url');
}

/** The key that seals a session's API key: derived from its id, which only the browser keeps. */
function sealingKey(id: string): Buffer {
  return derivedKey(id, 'drydock console session');
}

/**
 * The associated data a person's sealed tokens carry. An API key is sealed without any, as it
 * always was; so what a row holds is told by which one opens it, never by guessing at its text.
 */
const PERSON = Buffer.from('drydock console person tokens');

/** A session's credential, sealed: the API key, or a person's tokens (JSON). */
function sealCredential(id: string, key: string, person: PersonTokens | undefined): string {
  return person ? seal(sealingKey(id), JSON.stringify(person), PERSON) : seal(sealingKey(id), key);
}

function unsealCredential(id: string, sealed: string): Pick<Session, 'key' | 'person'> | undefined {
  const key = unseal(sealingKey(id), sealed);
  if (key !== undefined) return { key };
  const tokens = unseal(sealingKey(id), sealed, PERSON);
  if (tokens === undefined) return undefined;
  const person = JSON.parse(tokens) as PersonTokens;
  return { key: person.accessToken, person };
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
