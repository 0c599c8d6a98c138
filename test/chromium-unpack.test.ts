import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { unpackedChromium } from './support/chromium';

const home = mkdtempSync(join(tmpdir(), 'drydock-chromium-'));
afterAll(() => rmSync(home, { recursive: true, force: true }));

describe("the browser tests' Chromium", () => {
  it('unpacks again over what a stopped unpack left, then reuses the complete copy', async () => {
    const before = process.env.TMPDIR;
    // A run killed mid-unpack: the binary's name is there, empty, with no mark of completion.
    const binary = await unpackedChromium(home);
    const dir = join(binary, '..');
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir);
    writeFileSync(join(dir, 'chromium'), '');

    expect(await unpackedChromium(home)).toBe(binary);
    expect(statSync(binary).size).toBeGreaterThan(1_000_000);
    expect(execFileSync(binary, ['--version'], { encoding: 'utf8' })).toMatch(/Chromium \d+/);
    expect(process.env.TMPDIR).toBe(before);

    const unpackedAt = statSync(binary).mtimeMs;
    expect(await unpackedChromium(home)).toBe(binary);
    expect(statSync(binary).mtimeMs).toBe(unpackedAt);
  });
});
