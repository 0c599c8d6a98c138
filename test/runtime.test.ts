import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { delimiter } from 'node:path';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import { freePort } from '../scripts/services/process';
import { apiProcessEnv, useHarness } from './support/harness';

const h = useHarness({ worker: false });

const manifest = JSON.parse(readFileSync('package.json', 'utf8')) as {
  engines: { node: string };
  devDependencies: Record<string, string>;
};
const pinned = manifest.devDependencies.node!;

/** PATH without any node_modules/.bin: what a shell on this machine has before npm adds its own. */
function systemPath(): string {
  return (process.env.PATH ?? '')
    .split(delimiter)
    .filter((dir) => !dir.includes('node_modules'))
    .join(delimiter);
}

describe('the runtime', () => {
  it('is the Node the repository pins, inside what engines allows', () => {
    expect(process.versions.node).toBe(pinned);
    const floor = /^>=(\d+)\.(\d+)$/.exec(manifest.engines.node);
    expect(floor, `engines.node is a plain floor: ${manifest.engines.node}`).not.toBeNull();
    const [major, minor] = pinned.split('.').map(Number);
    expect(major! * 1000 + minor!).toBeGreaterThanOrEqual(Number(floor![1]) * 1000 + Number(floor![2]));
  });

  it('runs `npm run api` on the pinned Node whatever the shell`s node is, and says so when it listens', async () => {
    const port = await freePort();
    const child = spawn('npm', ['run', '--silent', 'api'], {
      env: {
        ...process.env,
        PATH: systemPath(),
        ...apiProcessEnv(h, port),
      },
      stdio: ['ignore', 'pipe', 'inherit'],
      detached: true,
    });
    try {
      const listening = await new Promise<Record<string, unknown>>((resolve, reject) => {
        child.once('exit', (code) => reject(new Error(`npm run api exited (${code}) before it listened`)));
        createInterface({ input: child.stdout! }).on('line', (line) => {
          if (line.includes('listening')) resolve(JSON.parse(line) as Record<string, unknown>);
        });
      });
      expect(listening).toMatchObject({ port, node: pinned });
    } finally {
      // npm, the shell it runs, tsx and the API: the whole process group, gone before the
      // harness drops the database it uses.
      const exited = once(child, 'exit');
      process.kill(-child.pid!, 'SIGTERM');
      await exited;
    }
  });
});
