import { describe, expect, it } from 'vitest';
import type { PersonTokens } from './oidc';
import { Sessions, type Caller, type LockedWork, type SessionRow, type SessionStore } from './sessions';

/** The sessions table in memory; `held` marks rows another request has locked. */
class MemoryStore implements SessionStore {
  readonly rows = new Map<string, SessionRow>();
  readonly held = new Set<string>();

  async insert(row: SessionRow) {
    this.rows.set(row.idHash, { ...row });
  }
  async touch(idHash: string, now: Date, expiresAt: Date) {
    const row = this.rows.get(idHash);
    if (!row || row.expiresAt <= now) return undefined;
    row.expiresAt = expiresAt;
    return { ...row };
  }
  async update(idHash: string, set: Pick<SessionRow, 'flash' | 'sealedCreated'>) {
    Object.assign(this.rows.get(idHash) ?? {}, set);
  }
  async delete(idHash: string) {
    this.rows.delete(idHash);
  }
  async locked<T>(idHash: string, work: (row: SessionRow) => Promise<LockedWork<T>>) {
    const row = this.rows.get(idHash);
    if (!row) return undefined;
    if (this.held.has(idHash)) return 'busy' as const;
    const done = await work({ ...row });
    if (done.remove) this.rows.delete(idHash);
    else if (done.set) Object.assign(row, done.set);
    return { result: done.result };
  }
}

const CALLER: Caller = {
  kind: 'operator',
  name: 'alice@example.com',
  tenantId: null,
  actions: [],
  person: null,
};
const TOKENS: PersonTokens = {
  accessToken: 'eyJ.access.token',
  accessExpiresAt: 2_000_000,
  obtainedAt: 1_000_000,
  refreshToken: 'refresh-1',
  idToken: 'eyJ.id.token',
};

describe('console sessions', () => {
  it("seal a key and a person's tokens apart: the row alone shows neither", async () => {
    const store = new MemoryStore();
    const sessions = new Sessions(store);
    const keySession = await sessions.open('ddk_secret', CALLER);
    const personSession = await sessions.open(TOKENS.accessToken, CALLER, Date.now(), TOKENS);
    for (const row of store.rows.values()) {
      expect(row.sealedKey).not.toContain('ddk_secret');
      expect(row.sealedKey).not.toContain('refresh-1');
    }
    const found = await sessions.find(keySession.id);
    expect(found?.key).toBe('ddk_secret');
    expect(found?.person).toBeUndefined();
    expect(await sessions.find(personSession.id)).toMatchObject({ key: TOKENS.accessToken, person: TOKENS });
    // Another id opens nothing.
    expect(await sessions.find('not-the-id')).toBeUndefined();
  });

  it('renew a person once: new tokens kept, busy while held, gone when ended', async () => {
    const store = new MemoryStore();
    const sessions = new Sessions(store);
    const session = await sessions.open(TOKENS.accessToken, CALLER, Date.now(), TOKENS);
    const fresh: PersonTokens = { ...TOKENS, accessToken: 'eyJ.fresh.token', refreshToken: 'refresh-2' };
    const renewed = await sessions.renew(session, async (current) => {
      expect(current.person).toEqual(TOKENS);
      return { keep: { ...current, key: fresh.accessToken, person: fresh }, outcome: 'renewed' };
    });
    expect(renewed).toMatchObject({ outcome: 'renewed', session: { key: 'eyJ.fresh.token' } });
    expect((await sessions.find(session.id))?.person).toEqual(fresh);

    // A request that comes after reads the renewed row, not the tokens it started with.
    await sessions.renew(session, async (current) => {
      expect(current.person?.refreshToken).toBe('refresh-2');
      return { keep: current, outcome: undefined };
    });

    const [idHash] = store.rows.keys();
    store.held.add(idHash!);
    expect(await sessions.renew(session, () => Promise.reject(new Error('not run')))).toBe('busy');
    store.held.clear();

    expect(await sessions.renew(session, async () => ({ keep: null, outcome: 'ended' }))).toEqual({
      session: null,
      outcome: 'ended',
    });
    expect(await sessions.find(session.id)).toBeUndefined();
    expect(await sessions.renew(session, () => Promise.reject(new Error('not run')))).toBeUndefined();
  });
});
