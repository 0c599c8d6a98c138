import { randomBytes } from 'node:crypto';
import { chmod, lstat, mkdir, open, readFile, rename, rm, stat } from 'node:fs/promises';
import { homedir, hostname } from 'node:os';
import { join } from 'node:path';
import type { Env } from '../../cli-kit/spec';
import { CliError } from '../errors';

/**
 * The CLI's sign-ins (`drydock login`), one file in the user's configuration directory:
 * `$XDG_CONFIG_HOME/drydock/sign-ins.json`, else `~/.config/drydock/sign-ins.json`, with one entry
 * per API base URL, so a person can be signed in to two Drydocks at once. The tokens in it are
 * bearer credentials: the directory is 0700, the file 0600 from the moment it exists (written to a
 * temporary file created with that mode, then renamed over), and a file that others may read is
 * refused, as ssh refuses a private key others may read.
 */

/** One API's sign-in: where the tokens come from, and the tokens. */
export interface SignIn {
  issuer: string;
  clientId: string;
  scope: string;
  /** The RFC 8707 resource the tokens were asked for; absent when none was. */
  resource?: string;
  accessToken: string;
  /** Absent when the provider issued none: the sign-in then ends with its access token. */
  refreshToken?: string;
  /** When the access token expires (RFC 3339). */
  expiresAt: string;
  /** The person: the provider's subject, and their email when the provider gave one. */
  subject: string;
  email?: string;
}

interface SignInsFile {
  version: 1;
  /** By API base URL (`https://drydock.example.com`, no trailing slash). */
  signIns: Record<string, SignIn>;
}

/** Where the sign-ins live, from the environment of the command line. */
export interface CachePlace {
  dir: string;
  file: string;
}

export function cachePlace(env: Env): CachePlace {
  const config = env.XDG_CONFIG_HOME || join(env.HOME || homedir(), '.config');
  const dir = join(config, 'drydock');
  return { dir, file: join(dir, 'sign-ins.json') };
}

/** The key of an API in the file: its base URL as `--api` resolved it, normalised (`HTTP://X:80/` → `http://x`). */
export function apiKey(api: string): string {
  return new URL(api).href.replace(/\/+$/, '');
}

/** The sign-in for `api`, or undefined; refuses a file others may read. */
export async function readSignIn(place: CachePlace, api: string): Promise<SignIn | undefined> {
  return (await readFileOf(place)).signIns[apiKey(api)];
}

/**
 * Changes the sign-ins under the file's lock: `change` gets the current entry of `api` (read
 * after the lock was taken, so it sees what another process wrote before) and answers the entry to
 * keep (undefined removes it) and a result. The file is then replaced in one rename.
 */
export async function updateSignIn<T>(
  place: CachePlace,
  api: string,
  change: (current: SignIn | undefined) => Promise<{ entry: SignIn | undefined; result: T }>,
): Promise<T> {
  await ensureDir(place.dir);
  return withLock(place, async () => {
    const file = await readFileOf(place);
    const key = apiKey(api);
    const { entry, result } = await change(file.signIns[key]);
    if (entry === file.signIns[key]) return result;
    if (entry) file.signIns[key] = entry;
    else delete file.signIns[key];
    await writeAtomically(place, `${JSON.stringify(file, null, 2)}\n`);
    return result;
  });
}

async function readFileOf(place: CachePlace): Promise<SignInsFile> {
  let text: string;
  try {
    const handle = await open(place.file, 'r');
    try {
      const info = await handle.stat();
      checkPrivate(place.file, info);
      text = await handle.readFile('utf8');
    } finally {
      await handle.close();
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { version: 1, signIns: {} };
    if (error instanceof CliError) throw error;
    throw new CliError('SIGN_IN_CACHE', `cannot read ${place.file}: ${(error as Error).message}`);
  }
  try {
    const parsed = JSON.parse(text) as Partial<SignInsFile>;
    if (parsed.version === 1 && typeof parsed.signIns === 'object' && parsed.signIns !== null) {
      return { version: 1, signIns: parsed.signIns };
    }
  } catch {
    // said below
  }
  throw new CliError(
    'SIGN_IN_CACHE',
    `${place.file} is not a sign-in file of this drydock: remove it and run 'drydock login' again`,
  );
}

/** Refuses a file another user owns or others may read or write: its tokens may not be ours alone. */
function checkPrivate(file: string, info: { mode: number; uid: number }): void {
  const uid = process.getuid?.();
  if (uid !== undefined && info.uid !== uid) {
    throw new CliError(
      'SIGN_IN_CACHE',
      `${file} belongs to another user (uid ${info.uid}): refusing to use its tokens; remove it and run 'drydock login' again`,
    );
  }
  if ((info.mode & 0o077) !== 0) {
    const mode = (info.mode & 0o777).toString(8).padStart(4, '0');
    throw new CliError(
      'SIGN_IN_CACHE',
      `${file} may be read by others (mode ${mode}): refusing to use its tokens. ` +
        `Run 'chmod 600 ${file}' (and 'drydock logout' then 'drydock login' if someone else could have read them)`,
    );
  }
}

async function ensureDir(dir: string): Promise<void> {
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const info = await lstat(dir);
    if (!info.isDirectory()) throw new Error('not a directory');
    // A directory made before, or by hand, with a looser mode: the tokens live here, so it is ours alone.
    if ((info.mode & 0o077) !== 0) await chmod(dir, 0o700);
  } catch (error) {
    throw new CliError('SIGN_IN_CACHE', `cannot keep sign-ins in ${dir}: ${(error as Error).message}`);
  }
}

/** Writes the whole file through a temporary file made 0600 at creation, then renamed over it. */
async function writeAtomically(place: CachePlace, text: string): Promise<void> {
  const temporary = `${place.file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    const handle = await open(temporary, 'wx', 0o600);
    try {
      await handle.writeFile(text);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temporary, place.file);
  } catch (error) {
    await rm(temporary, { force: true });
    throw new CliError('SIGN_IN_CACHE', `cannot write ${place.file}: ${(error as Error).message}`);
  }
}

/** How long a lock may be held before another process takes it as left behind (a refresh takes a round trip or two). */
const STALE_LOCK_MS = 60_000;
/** How long to wait for another process's lock before saying so. */
const LOCK_WAIT_MS = 65_000;

/**
 * Runs `work` holding `sign-ins.json.lock` (made with O_EXCL): two CLI processes that find the same
 * access token expiring refresh it once, the second reading the first's result, instead of both
 * spending the one-time refresh token (a provider revokes the whole sign-in on its reuse). A lock
 * whose process is gone (killed mid-refresh) is taken over at once, any lock after a minute.
 */
async function withLock<T>(place: CachePlace, work: () => Promise<T>): Promise<T> {
  const lock = `${place.file}.lock`;
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      const handle = await open(lock, 'wx', 0o600);
      await handle.writeFile(`${process.pid} ${hostname()}\n`);
      await handle.close();
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
        throw new CliError('SIGN_IN_CACHE', `cannot lock ${place.file}: ${(error as Error).message}`);
      }
    }
    if (await leftBehind(lock)) {
      await rm(lock, { force: true });
      continue;
    }
    if (Date.now() > deadline) {
      throw new CliError(
        'SIGN_IN_CACHE',
        `${lock} is held by another drydock process; remove it if none is running`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  try {
    return await work();
  } finally {
    await rm(lock, { force: true });
  }
}

/** Whether a lock was left by a process that is gone (on this machine), or is older than a refresh takes. */
async function leftBehind(lock: string): Promise<boolean> {
  const [info, text] = await Promise.all([
    stat(lock).catch(() => undefined),
    readFile(lock, 'utf8').catch(() => ''),
  ]);
  if (!info) return false; // released meanwhile: try again
  if (Date.now() - info.mtimeMs > STALE_LOCK_MS) return true;
  const [pid, host] = text.trim().split(' ');
  if (!pid || host !== hostname()) return false;
  try {
    process.kill(Number(pid), 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}
