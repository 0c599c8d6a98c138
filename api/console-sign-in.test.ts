import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../config';
import { landingOf } from '../console/landing';
import { consoleSignInOf } from './console-sign-in';

const dir = mkdtempSync(join(tmpdir(), 'drydock-console-sign-in-'));
const secretFile = join(dir, 'secret');
writeFileSync(secretFile, 'the-client-secret\n', { mode: 0o600 });
const openFile = join(dir, 'open-secret');
writeFileSync(openFile, 'the-client-secret\n', { mode: 0o644 });
const emptyFile = join(dir, 'empty-secret');
writeFileSync(emptyFile, '\n', { mode: 0o600 });

/** The API's own OpenID settings, which the console's need. */
const API = {
  DRYDOCK_OIDC_ISSUER: 'https://login.example.com/oauth2/default',
  DRYDOCK_OIDC_AUDIENCE: 'api://drydock',
  DRYDOCK_OIDC_GROUP_MAP: '/etc/drydock/groups.yaml',
};
const CLIENT = {
  DRYDOCK_OIDC_CLIENT_ID: 'drydock-console',
  DRYDOCK_OIDC_CLIENT_SECRET_FILE: secretFile,
  DRYDOCK_OIDC_REDIRECT_URL: 'https://drydock.example.com/console/oidc/callback',
};
const settingsOf = (env: Record<string, string>) => consoleSignInOf(loadConfig(env));

describe("the console's sign-in settings", () => {
  it('are key sign-in alone when no client is configured', () => {
    expect(settingsOf({})).toEqual({ keySignIn: true });
    expect(settingsOf(API)).toEqual({ keySignIn: true });
  });

  it('read the client, its secret file and the redirect URL', () => {
    expect(settingsOf({ ...API, ...CLIENT, DRYDOCK_CONSOLE_KEY_SIGN_IN: '0' })).toEqual({
      keySignIn: false,
      oidc: {
        issuer: API.DRYDOCK_OIDC_ISSUER,
        clientId: 'drydock-console',
        clientSecret: 'the-client-secret',
        redirectUrl: CLIENT.DRYDOCK_OIDC_REDIRECT_URL,
        postLogoutRedirectUrl: 'https://drydock.example.com/console/sign-in',
        scopes: 'openid email profile groups',
        resource: undefined,
        providerName: 'login.example.com',
      },
    });
    const named = settingsOf({
      ...API,
      ...CLIENT,
      DRYDOCK_OIDC_SCOPES: ' openid  email groups offline_access ',
      DRYDOCK_OIDC_RESOURCE: 'urn:drydock:api',
      DRYDOCK_OIDC_PROVIDER_NAME: 'Okta',
    }).oidc!;
    expect(named).toMatchObject({
      scopes: 'openid email groups offline_access',
      resource: 'urn:drydock:api',
      providerName: 'Okta',
    });
  });

  it('refuse to start on what is missing or wrong, naming it', () => {
    const refusals: [Record<string, string>, RegExp][] = [
      [{ DRYDOCK_CONSOLE_KEY_SIGN_IN: '0' }, /DRYDOCK_CONSOLE_KEY_SIGN_IN=0 leaves the console no way/],
      [
        { ...API, DRYDOCK_OIDC_CLIENT_ID: 'x' },
        /CLIENT_ID, DRYDOCK_OIDC_CLIENT_SECRET_FILE and .* go together/,
      ],
      [
        { ...API, DRYDOCK_OIDC_RESOURCE: 'urn:x' },
        /DRYDOCK_OIDC_RESOURCE is set without DRYDOCK_OIDC_CLIENT_ID/,
      ],
      [CLIENT, /needs DRYDOCK_OIDC_ISSUER, DRYDOCK_OIDC_AUDIENCE and DRYDOCK_OIDC_GROUP_MAP/],
      [
        { ...API, ...CLIENT, DRYDOCK_OIDC_REDIRECT_URL: 'https://drydock.example.com/callback' },
        /DRYDOCK_OIDC_REDIRECT_URL is the console's callback/,
      ],
      [
        { ...API, ...CLIENT, DRYDOCK_OIDC_REDIRECT_URL: 'ftp://drydock.example.com/console/oidc/callback' },
        /DRYDOCK_OIDC_REDIRECT_URL/,
      ],
      [{ ...API, ...CLIENT, DRYDOCK_OIDC_SCOPES: 'email groups' }, /with openid among them/],
      [{ ...API, ...CLIENT, DRYDOCK_OIDC_CLIENT_SECRET_FILE: openFile }, /UNPROTECTED PRIVATE KEY FILE/],
      [{ ...API, ...CLIENT, DRYDOCK_OIDC_CLIENT_SECRET_FILE: emptyFile }, /is empty/],
      [
        { ...API, ...CLIENT, DRYDOCK_OIDC_CLIENT_SECRET_FILE: join(dir, 'missing') },
        /DRYDOCK_OIDC_CLIENT_SECRET_FILE: ENOENT/,
      ],
    ];
    for (const [env, message] of refusals) {
      expect(() => settingsOf(env), JSON.stringify(env)).toThrow(message);
    }
  });
});

describe('the page to land on after signing in', () => {
  it('is a console page of this origin, or none (the fleet page)', () => {
    expect(landingOf('/console/nodes/node_1?types=node.')).toBe('/console/nodes/node_1?types=node.');
    expect(landingOf('/console?pool=a')).toBe('/console?pool=a');
    for (const next of [
      undefined,
      '',
      '/console',
      'https://evil.example/console',
      '//evil.example/console',
      '/consoleevil',
      '/console/../v1/nodes',
      '/console/sign-in',
      '/console/oidc/callback?code=x',
      '/console/live?after=1',
      '/console/assets/live.js',
      '/v1/nodes',
    ]) {
      expect(landingOf(next), String(next)).toBeUndefined();
    }
    // A backslash is a slash to a browser: still a path of this origin.
    expect(landingOf('/console\\nodes')).toBe('/console/nodes');
  });
});
