import { spawnSync } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { apiKey, cachePlace, readSignIn, updateSignIn, type CachePlace, type SignIn } from './cache';

const ALICE: SignIn = {
  issuer: 'https://id.example.com',
  clientId: 'drydock-cli',
  scope: 'openid',
  accessToken: 'a.b.c',
  refreshToken: 'r1',
  expiresAt: '2026-12-05T04:00:00.000Z',
  subject: 'alice',
  email: 'alice@example.com',
};

let config: string;
let place: CachePlace;
beforeEach(async () => {
  config = await mkdtemp(join(tmpdir(), 'drydock-cache-'));
  place = cachePlace({ XDG_CONFIG_HOME: config });
});
afterEach(() => rm(config, { recursive: true, force: true }));

const save = (api: string, entry: SignIn | undefined) =>
  updateSignIn(place, api, async () => ({ entry, result: undefined }));

describe('the sign-in file', () => {
  it('lives in XDG_CONFIG_HOME, else ~/.config; one entry per API base URL', async () => {
    expect(cachePlace({ XDG_CONFIG_HOME: '/x' }).file).toBe('/x/drydock/sign-ins.json');
    expect(cachePlace({ HOME: '/home/a' }).file).toBe('/home/a/.config/drydock/sign-ins.json');
    expect(apiKey('HTTP://Drydock.Example.com:80/')).toBe('http://drydock.example.com');

    await save('https://one.example.com', ALICE);
    await save('https://two.example.com/', { ...ALICE, subject: 'bob' });
    expect(await readSignIn(place, 'https://one.example.com/')).toEqual(ALICE);
    expect((await readSignIn(place, 'https://two.example.com'))?.subject).toBe('bob');
    await save('https://one.example.com', undefined);
    expect(await readSignIn(place, 'https://one.example.com')).toBeUndefined();
    expect((await readSignIn(place, 'https://two.example.com'))?.subject).toBe('bob');
  });

  it('is 0600 in a 0700 directory, and leaves no temporary file behind', async () => {
    await save('https://one.example.com', ALICE);
    expect((await stat(place.dir)).mode & 0o777).toBe(0o700);
    expect((await stat(place.file)).mode & 0o777).toBe(0o600);
    expect(await readdir(place.dir)).toEqual(['sign-ins.json']);

    // A directory left open by hand is closed again at the next write.
    await chmod(place.dir, 0o755);
    await save('https://one.example.com', { ...ALICE, accessToken: 'd.e.f' });
    expect((await stat(place.dir)).mode & 0o777).toBe(0o700);
  });

  it('refuses a file others may read, saying how to fix it, and one it did not write', async () => {
    await save('https://one.example.com', ALICE);
    await chmod(place.file, 0o644);
    await expect(readSignIn(place, 'https://one.example.com')).rejects.toMatchObject({
      code: 'SIGN_IN_CACHE',
      message: expect.stringContaining(
        `may be read by others (mode 0644): refusing to use its tokens. Run 'chmod 600 ${place.file}'`,
      ),
    });
    await chmod(place.file, 0o600);
    await writeFile(place.file, '{"version": 9}');
    await expect(readSignIn(place, 'https://one.example.com')).rejects.toMatchObject({
      message: `${place.file} is not a sign-in file of this drydock: remove it and run 'drydock login' again`,
    });
  });

  it('waits for the lock of a live process, and takes over one whose process is gone', async () => {
    await mkdir(place.dir, { recursive: true, mode: 0o700 });
    const lock = `${place.file}.lock`;
    await writeFile(lock, `${process.pid} ${hostname()}\n`);
    let done = false;
    const waiting = save('https://one.example.com', ALICE).then(() => (done = true));
    await stat(lock);
    expect(done).toBe(false);
    await rm(lock);
    await waiting;
    expect(await readSignIn(place, 'https://one.example.com')).toEqual(ALICE);

    const gone = spawnSync(process.execPath, ['-e', '']).pid;
    await writeFile(lock, `${gone} ${hostname()}\n`);
    await save('https://one.example.com', { ...ALICE, refreshToken: 'r2' });
    expect((await readSignIn(place, 'https://one.example.com'))?.refreshToken).toBe('r2');
    await expect(readFile(lock)).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
