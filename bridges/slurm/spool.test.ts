import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { watchSpool } from './spool';

/** Resolves once `check` holds, polling; fails after 5 s. */
async function until(check: () => boolean): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('not within 5 s');
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe("the hook's spool directory", () => {
  it('wakes once for files left while it was not watched, then for each new one, and removes them', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'drydock-spool-'));
    writeFileSync(join(dir, '41.epilog_slurmctld'), '');
    let woken = 0;
    const failures: Error[] = [];
    const stop = watchSpool(
      dir,
      () => woken++,
      (error) => failures.push(error),
    );
    try {
      expect(woken).toBe(1);
      expect(readdirSync(dir)).toEqual([]);
      writeFileSync(join(dir, '42.prolog_slurmctld'), '');
      await until(() => woken === 2 && readdirSync(dir).length === 0);
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
