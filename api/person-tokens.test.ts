import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../config';
import { looksLikeJwt, oidcSettingsOf } from './person-tokens';

describe('OpenID settings from the configuration', () => {
  const dir = mkdtempSync(join(tmpdir(), 'drydock-oidc-'));
  const map = join(dir, 'map.yaml');
  writeFileSync(map, 'groups:\n  ops:\n    role: operator\n');

  it('are unset without an issuer, and complete with issuer, audience and map', () => {
    expect(oidcSettingsOf(loadConfig({}))).toBeUndefined();
    const settings = oidcSettingsOf(
      loadConfig({
        DRYDOCK_OIDC_ISSUER: 'https://id.example.com',
        DRYDOCK_OIDC_AUDIENCE: 'drydock',
        DRYDOCK_OIDC_GROUP_MAP: map,
      }),
    );
    expect(settings).toMatchObject({
      issuer: 'https://id.example.com',
      audience: 'drydock',
      groupsClaim: 'groups',
      clockSkewSeconds: 60,
      groupMap: { ops: { role: 'operator' } },
    });
  });

  it('refuse a partial configuration, an unreadable map and a wrong one, naming them', () => {
    expect(() => oidcSettingsOf(loadConfig({ DRYDOCK_OIDC_ISSUER: 'https://id.example.com' }))).toThrow(
      'DRYDOCK_OIDC_ISSUER, DRYDOCK_OIDC_AUDIENCE and DRYDOCK_OIDC_GROUP_MAP go together',
    );
    const base = { DRYDOCK_OIDC_ISSUER: 'https://id.example.com', DRYDOCK_OIDC_AUDIENCE: 'drydock' };
    expect(() => oidcSettingsOf(loadConfig({ ...base, DRYDOCK_OIDC_GROUP_MAP: join(dir, 'none') }))).toThrow(
      'cannot be read',
    );
    const wrong = join(dir, 'wrong.yaml');
    writeFileSync(wrong, 'groups:\n  ops:\n    role: admin\n');
    expect(() => oidcSettingsOf(loadConfig({ ...base, DRYDOCK_OIDC_GROUP_MAP: wrong }))).toThrow(
      /wrong\.yaml: groups\.ops\.role \(line 3\)/,
    );
  });

  it('tell a JWT from API keys and node credentials', () => {
    expect(looksLikeJwt('eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhIn0.c2ln')).toBe(true);
    expect(looksLikeJwt('ddk_abc')).toBe(false);
    expect(looksLikeJwt('ddn_a.b')).toBe(false);
  });
});
