import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import chromium from '@sparticuz/chromium';

const COMPLETE = '.unpacked';

/**
 * The browser tests' Chromium, unpacked once into `home/chromium-<version>/` and reused by later
 * runs. @sparticuz/chromium unpacks into the temp directory and, finding a file there named
 * `chromium`, takes it as done: a run stopped mid-unpack would leave a broken binary that every
 * later run on the machine launched. Here it unpacks into a staging directory of its own, which
 * becomes the real one, marked complete, only once the unpack ended.
 *
 * Call it before anything else of the process runs: it points TMPDIR at the staging directory
 * while it unpacks (the library reads nothing else).
 */
export async function unpackedChromium(home: string): Promise<string> {
  // The package exports no package.json: it sits one folder above its entry (build/index.js).
  const entry = createRequire(import.meta.url).resolve('@sparticuz/chromium');
  const { version } = JSON.parse(readFileSync(join(dirname(entry), '..', 'package.json'), 'utf8')) as {
    version: string;
  };
  const dir = join(home, `chromium-${version}`);
  const binary = join(dir, 'chromium');
  if (existsSync(join(dir, COMPLETE))) return binary;
  mkdirSync(home, { recursive: true });
  const staging = mkdtempSync(`${dir}.partial-`);
  const tmpdir = process.env.TMPDIR;
  process.env.TMPDIR = staging;
  try {
    await chromium.executablePath();
  } finally {
    if (tmpdir === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = tmpdir;
  }
  writeFileSync(join(staging, COMPLETE), '');
  rmSync(dir, { recursive: true, force: true });
  try {
    renameSync(staging, dir);
  } catch (error) {
    // Another run, unpacking at the same time, got there first: its copy is as good.
    if (!existsSync(join(dir, COMPLETE))) throw error;
    rmSync(staging, { recursive: true, force: true });
  }
  return binary;
}
