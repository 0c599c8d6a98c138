import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

/** Writes an executable shell script of `body` at `path`; returns the path. */
export function writeScript(path: string, body: string): string {
  writeFileSync(path, `#!/bin/sh\n${body}\n`);
  chmodSync(path, 0o755);
  return path;
}

/** A temporary directory for a test file's scripts (removed after the file); `script` adds one. */
export function useScripts(prefix: string) {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  let count = 0;
  return { dir, script: (body: string) => writeScript(join(dir, `script-${++count}.sh`), body) };
}

/** The lines a test script appended to `file` (none when it never ran). */
export const recordedLines = (file: string): string[] =>
  existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];
