import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { watchSpool } from './spool';

/** Resolves once `check` holds (vitest polls it), failing after 5 s. */
const until = (check: () => boolean) =>
  vi.waitFor(() => expect(check()).toBe(true), { timeout: 5_000, interval: 10 });

describe("the hook's spool directory", () => {
  it('hands over the files left while it was not watched, then each new one, and removes them', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'drydock-spool-'));
    writeFileSync(join(dir, '41.epilog_slurmctld'), '');
    const woken: string[][] = [];
    const failures: Error[] = [];
    const stop = watchSpool(
      dir,
      (files) => woken.push(files),
      (error) => failures.push(error),
    );
    try {
      expect(woken).toEqual([['41.epilog_slurmctld']]);
      expect(readdirSync(dir)).toEqual([]);
      writeFileSync(join(dir, '42.prolog_slurmctld'), '');
      await until(() => woken.length === 2 && readdirSync(dir).length === 0);
      expect(woken[1]).toEqual(['42.prolog_slurmctld']);
      expect(failures).toEqual([]);
    } finally {
      stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('says once that it stopped when the directory goes away', async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'drydock-spool-')), 'spool');
    const failures: Error[] = [];
    const stop = watchSpool(
      dir,
      () => {},
      (error) => failures.push(error),
    );
    expect(existsSync(dir)).toBe(true);
    rmSync(dir, { recursive: true, force: true });
    await until(() => failures.length > 0);
    expect(failures).toHaveLength(1);
    stop();
  });
});
