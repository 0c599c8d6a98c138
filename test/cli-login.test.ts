import { execFile, spawn } from 'node:child_process';
import { chmod, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_PEOPLE, startOidcProvider, type RunningOidcProvider } from '../scripts/services/oidc-provider';
import { seedPoolNode } from './support/builders';
import { BIN, useCli, type Run } from './support/cli';
import { eventsOf } from './support/fixtures';
import { eventually, useHarness } from './support/harness';
import { confirmDevice, trusting } from './support/oidc';

// `drydock login` against a real OpenID provider (oidc-provider, its device flow and its own
// pages) and an API that trusts it; the real CLI in a process of its own, with a config dir of the
// test's (XDG_CONFIG_HOME). Each login waits one poll interval of the provider (5 s).

/** Alice and Bob as `npm start -- --oidc` has them, and Carol, whose only group the map lacks. */
const PEOPLE = [
  ...DEMO_PEOPLE.map((p) => ({ ...p })),
  { email: 'carol@example.com', name: 'Carol', groups: ['contractors'] },
];

let provider: RunningOidcProvider;
let home: string;
beforeAll(async () => {
  // Refresh tokens rotate and a spent one revokes the grant: what the race below must not trip.
  provider = await startOidcProvider({ people: PEOPLE, rotateRefreshTokens: true });
  home = await mkdtemp(join(tmpdir(), 'drydock-login-'));
});
afterAll(async () => {
  await provider?.stop();
  if (home) await rm(home, { recursive: true, force: true });
});

const h = useHarness({ worker: false, oidc: () => trusting(provider) });
const cli = useCli(h);

/** A config dir of its own: `XDG_CONFIG_HOME` for the CLI. */
const configDir = (name: string) => join(home, name);
const signInsFile = (config: string) => join(config, 'drydock', 'sign-ins.json');

interface Options {
  config?: string;
  api?: string;
  token?: string;
}

function envOf({ config = configDir('main'), api = cli.api, token }: Options): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, DRYDOCK_API: api, XDG_CONFIG_HOME: config };
  delete env.DRYDOCK_TOKEN;
  if (token) env.DRYDOCK_TOKEN = token;
  return env;
}

/** `drydock ARGS` with the sign-ins of `config`, no API key unless given. */
function drydock(args: string[], options: Options = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { env: envOf(options), timeout: 60_000 },
      (error, stdout, stderr) => {
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout, stderr });
      },
    );
  });
}

/** A running `drydock login`: its output so far, and its end. */
function startLogin(args: string[], options: Options = {}) {
  const child = spawn(process.execPath, [BIN, 'login', '--issuer', provider.issuer, ...args], {
    env: envOf(options),
  });
  const run: Run = { code: -1, stdout: '', stderr: '' };
  child.stdout.on('data', (chunk: Buffer) => (run.stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (run.stderr += chunk.toString()));
  const ended = new Promise<Run>((resolve) =>
    child.on('close', (code, signal) => resolve({ ...run, code: code ?? (signal ? -1 : 0) })),
  );
  /** The page the CLI says to open, once it has said it. */
  const page = () => eventually(async () => /^ {2}(http\S+user_code=\S+)$/m.exec(run.stderr)?.[1], 15_000);
  return { child, run, ended, page };
}

/** `drydock login` as `email`: the person opens the page it prints and confirms at the provider. */
async function login(email: string, args: string[] = [], options: Options = {}): Promise<Run> {
  const started = startLogin(args, options);
  await confirmDevice(provider, await started.page(), email);
  return started.ended;
}

type SignIns = { version: 1; signIns: Record<string, Record<string, string>> };
const readSignIns = async (config = configDir('main')): Promise<SignIns> =>
  JSON.parse(await readFile(signInsFile(config), 'utf8'));
async function rewriteSignIn(api: string, change: Record<string, string>, config = configDir('main')) {
  const file = await readSignIns(config);
  file.signIns[api] = { ...file.signIns[api]!, ...change };
  await writeFile(signInsFile(config), JSON.stringify(file), { mode: 0o600 });
}
/** The refresh token grant at the provider, as any client would send it. */
const refreshAtProvider = (refreshToken: string) =>
  fetch(`${provider.issuer}/token`, {
    method: 'POST',
    body: new URLSearchParams({
      grant_type: 'refresh_token',
      refresh_token: refreshToken,
      client_id: 'drydock-cli',
    }),
  }).then(async (response) => ({
    status: response.status,
    body: (await response.json()) as Record<string, string>,
  }));

const PAST = '2020-01-01T00:00:00.000Z';

describe('drydock login', () => {
  it('signs alice in by the device code, keeps her tokens private to her, and commands act as her', async () => {
    const done = await login('alice@example.com');
    expect(done.code, done.stderr).toBe(0);
    expect(done.stdout).toBe(`signed in to ${cli.api} as alice@example.com (operator)\n`);
    expect(done.stderr).toMatch(/open this page in a browser/);
    expect(done.stderr).toMatch(/^ {2}code: [A-Z]{4}-[A-Z]{4} /m);
    expect(done.stderr).toMatch(
      /Waiting for you to sign in there \(the code expires at \d\d:\d\dZ; Ctrl-C to stop\)/,
    );

    const dir = await stat(join(configDir('main'), 'drydock'));
    expect(dir.mode & 0o777).toBe(0o700);
    expect((await stat(signInsFile(configDir('main')))).mode & 0o777).toBe(0o600);
    const saved = (await readSignIns()).signIns[cli.api]!;
    expect(saved).toMatchObject({
      issuer: provider.issuer,
      clientId: 'drydock-cli',
      scope: 'openid email profile groups offline_access',
      subject: 'alice@example.com',
      email: 'alice@example.com',
      accessToken: expect.stringMatching(/^[\w-]+\.[\w-]+\.[\w-]+$/),
      refreshToken: expect.any(String),
    });
    expect(Date.parse(saved.expiresAt!)).toBeGreaterThan(Date.now() + 60_000);

    const whoami = await drydock(['whoami']);
    expect(whoami.code, whoami.stderr).toBe(0);
    expect(whoami.stdout).toMatch(/^kind: +operator$/m);
    expect(whoami.stdout).toMatch(/^name: +alice@example\.com$/m);
    expect(whoami.stdout).toMatch(/^tenant: +-$/m);
    expect(whoami.stdout).toMatch(/^actions: +compute:nodes:read, /m);
    expect(whoami.stdout).toMatch(new RegExp(`^person: +alice@example\\.com at ${provider.issuer}$`, 'm'));
    expect(whoami.stdout).toMatch(
      new RegExp(`^credential: +signed in at ${provider.issuer} \\(drydock login\\)`, 'm'),
    );

    const node = await seedPoolNode(h, 'pool-login');
    const cordon = await drydock(['nodes', 'cordon', node, '--reason', 'psu swap']);
    expect(cordon.code, cordon.stderr).toBe(0);
    const [event] = await eventsOf(h, node, 'node.cordoned');
    expect(event).toMatchObject({ actor: 'user:alice@example.com', reason: 'psu swap' });

    // An API key wins over the sign-in, from the flag and from the environment.
    const keyed = await drydock(['whoami', '--json', '--token', h.operatorKey]);
    expect(JSON.parse(keyed.stdout)).toMatchObject({
      kind: 'operator',
      name: expect.not.stringContaining('alice'),
    });
    const fromEnv = await drydock(['whoami'], { token: h.operatorKey });
    expect(fromEnv.stdout).toMatch(/^credential: +--token or DRYDOCK_TOKEN$/m);
    expect(fromEnv.stdout).not.toMatch(/^person:/m);
    const wrongKey = await drydock(['whoami', '--token', 'ddk_not-a-key']);
    expect(wrongKey.code).toBe(5);
    expect(wrongKey.stderr).not.toMatch(/drydock login/);
  });

  it('keeps a sign-in per API: bob at another base URL of the same API, with --json', async () => {
    const other = cli.api.replace('127.0.0.1', 'localhost');
    const done = await login('bob@example.com', ['--json'], { api: other });
    expect(done.code, done.stderr).toBe(0);
    const said = JSON.parse(done.stdout);
    expect(said).toEqual({
      api: other,
      issuer: provider.issuer,
      subject: 'bob@example.com',
      email: 'bob@example.com',
      kind: 'tenant',
      tenantId: 'acme',
      expiresAt: expect.any(String),
    });
    expect(Object.keys((await readSignIns()).signIns).sort()).toEqual([cli.api, other].sort());
    expect(JSON.parse((await drydock(['whoami', '--json'], { api: other })).stdout)).toMatchObject({
      name: 'bob@example.com',
      tenantId: 'acme',
    });
    expect(JSON.parse((await drydock(['whoami', '--json'])).stdout)).toMatchObject({
      name: 'alice@example.com',
    });
  });

  it('refreshes an access token past its expiry first, once when two commands race, and saves the new one', async () => {
    const before = (await readSignIns()).signIns[cli.api]!;
    await rewriteSignIn(cli.api, { expiresAt: PAST });
    const listed = await drydock(['whoami', '--json']);
    expect(listed.code, listed.stderr).toBe(0);
    expect(JSON.parse(listed.stdout)).toMatchObject({ name: 'alice@example.com' });
    const renewed = (await readSignIns()).signIns[cli.api]!;
    expect(renewed.accessToken).not.toBe(before.accessToken);
    expect(renewed.refreshToken).not.toBe(before.refreshToken); // rotated by the provider
    expect(Date.parse(renewed.expiresAt!)).toBeGreaterThan(Date.now() + 60_000);
    expect((await stat(signInsFile(configDir('main')))).mode & 0o777).toBe(0o600);

    // Two commands find it expired at once: one refreshes, the other takes its result (spending the
    // rotated refresh token twice would make the provider revoke the whole sign-in).
    await rewriteSignIn(cli.api, { expiresAt: PAST });
    const both = await Promise.all([drydock(['whoami', '--json']), drydock(['nodes', 'list', '--json'])]);
    for (const run of both) expect(run.code, run.stderr).toBe(0);
    await rewriteSignIn(cli.api, { expiresAt: PAST });
    const again = await drydock(['whoami', '--json']);
    expect(again.code, again.stderr).toBe(0);
  });

  it('refuses a person whose groups the API does not map, and saves nothing', async () => {
    const config = configDir('carol');
    const done = await login('carol@example.com', [], { config });
    expect(done.code).toBe(5);
    expect(done.stdout).toBe('');
    expect(done.stderr).toMatch(
      new RegExp(
        `^error: FORBIDDEN: carol@example\\.com signed in at ${provider.issuer}, but the API at ${cli.api} gives them no role: .*\\(their groups: contractors\\)\\..*nothing was saved$`,
        'm',
      ),
    );
    await expect(stat(signInsFile(config))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('stops at Ctrl-C while it waits, saving nothing', async () => {
    const config = configDir('interrupted');
    const started = startLogin([], { config });
    await started.page();
    started.child.kill('SIGINT');
    const done = await started.ended;
    expect(done.code, done.stderr).toBe(130);
    expect(done.stderr).toMatch(
      /^error: INTERRUPTED: sign-in stopped before it was confirmed; nothing was saved$/m,
    );
    await expect(stat(join(config, 'drydock'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('refuses a sign-in file others may read, and says how to fix it', async () => {
    const file = signInsFile(configDir('main'));
    await chmod(file, 0o640);
    const refused = await drydock(['whoami']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe(
      `error: SIGN_IN_CACHE: ${file} may be read by others (mode 0640): refusing to use its tokens. ` +
        `Run 'chmod 600 ${file}' (and 'drydock logout' then 'drydock login' if someone else could have read them)\n`,
    );
    // An API key does not need the file.
    expect((await drydock(['whoami'], { token: h.operatorKey })).code).toBe(0);
    await chmod(file, 0o600);
    expect((await drydock(['whoami'])).code).toBe(0);
  });

  it('says to sign in again when the API refuses the cached token', async () => {
    const saved = (await readSignIns()).signIns[cli.api]!;
    const [header, payload, signature] = saved.accessToken!.split('.');
    const forged = `${header}.${payload}.${signature!.slice(0, -4)}AAAA`;
    await rewriteSignIn(cli.api, { accessToken: forged });
    const refused = await drydock(['nodes', 'list']);
    expect(refused.code).toBe(5);
    expect(refused.stderr).toMatch(
      new RegExp(
        `^error: UNAUTHENTICATED: .*; run 'drydock login --issuer ${provider.issuer} --api ${cli.api}' again\\n$`,
      ),
    );
    await rewriteSignIn(cli.api, { accessToken: saved.accessToken! });
  });

  it('signing in again revokes the refresh token of the sign-in it replaces', async () => {
    const earlier = (await readSignIns()).signIns[cli.api]!.refreshToken!;
    const again = await login('alice@example.com');
    expect(again.code, again.stderr).toBe(0);
    const now = (await readSignIns()).signIns[cli.api]!.refreshToken!;
    expect(now).not.toBe(earlier);
    expect(await refreshAtProvider(earlier)).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    const whoami = await drydock(['whoami', '--json']);
    expect(whoami.code, whoami.stderr).toBe(0);
    expect(JSON.parse(whoami.stdout)).toMatchObject({ name: 'alice@example.com' });
  });

  it('logout revokes the refresh token at the provider and forgets the sign-in of that API alone', async () => {
    const before = await readSignIns();
    const refreshToken = before.signIns[cli.api]!.refreshToken!;
    const out = await drydock(['logout']);
    expect(out.code, out.stderr).toBe(0);
    expect(out.stdout).toMatch(
      new RegExp(
        `^signed out of ${cli.api} \\(alice@example\\.com\\): the sign-in is removed; its refresh token is revoked at ${provider.issuer}; its last access token works until \\d\\d:\\d\\dZ\\n$`,
      ),
    );
    const after = await readSignIns();
    expect(after.signIns[cli.api]).toBeUndefined();
    expect(Object.keys(after.signIns)).toEqual([cli.api.replace('127.0.0.1', 'localhost')]);
    expect(await refreshAtProvider(refreshToken)).toMatchObject({
      status: 400,
      body: { error: 'invalid_grant' },
    });

    const signedOut = await drydock(['whoami']);
    expect(signedOut.code).toBe(5);
    expect(signedOut.stderr).toMatch(
      /; sign in with 'drydock login --issuer URL', or pass --token SECRET or set DRYDOCK_TOKEN\n$/,
    );
    expect((await drydock(['logout'])).stdout).toBe(`not signed in to ${cli.api}: nothing to do\n`);

    // The revoked sign-in put back, expired: it cannot be renewed, and the CLI says what to run.
    await writeFile(signInsFile(configDir('main')), JSON.stringify(before), { mode: 0o600 });
    await rewriteSignIn(cli.api, { expiresAt: PAST });
    const expired = await drydock(['whoami']);
    expect(expired.code).toBe(5);
    expect(expired.stderr).toMatch(
      new RegExp(
        `^error: UNAUTHENTICATED: the sign-in to ${cli.api} has expired and cannot be renewed: the provider refused the refresh token \\(invalid_grant.*\\); run 'drydock login --issuer ${provider.issuer} --api ${cli.api}' again\\n$`,
      ),
    );
  });
});
