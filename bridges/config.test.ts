import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadKubernetesConfig, loadSlurmConfig } from './config';
import { main } from './main';

const dir = mkdtempSync(join(tmpdir(), 'drydock-bridge-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(text: string): string {
  const path = join(dir, `c${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(path, text);
  return path;
}

describe("the Slurm bridge's configuration file", () => {
  it('reads the maps, the end policy, the sweep and the spool', () => {
    const config = loadSlurmConfig(
      file(
        [
          'nodes: { gpu001: gpu001.fra1.example }',
          'tenants: { physics: research }',
          'defaultTenant: research',
          'end: { default: cancel, partitions: { long: requeue } }',
          'sweepEvery: 45s',
          'spool: /var/spool/drydock',
        ].join('\n'),
      ),
    );
    expect(config).toEqual({
      rules: {
        hostnames: { gpu001: 'gpu001.fra1.example' },
        tenants: { physics: 'research' },
        defaultTenant: 'research',
      },
      end: { default: 'cancel', byQueue: { long: 'requeue' } },
      sweepEveryMs: 45_000,
      spool: '/var/spool/drydock',
    });
  });

  it('takes an empty file for the defaults: names as they are, requeue where a job allows it', () => {
    const config = loadSlurmConfig(file(''));
    expect(config.rules).toEqual({ hostnames: {}, tenants: {}, defaultTenant: null });
    expect(config.end).toEqual({ default: 'requeue', byQueue: {} });
  });

  it('names the key of what is wrong', () => {
    expect(() => loadSlurmConfig(file('partitions: {}'))).toThrow('partitions: unknown key');
    expect(() => loadSlurmConfig(file('end: { default: kill }'))).toThrow(
      'end.default: must be requeue or cancel',
    );
    expect(() => loadSlurmConfig(file('tenants: { physics: Research! }'))).toThrow(
      'tenants.physics: must be a tenant id',
    );
    expect(() => loadSlurmConfig(file('sweepEvery: often'))).toThrow(
      'sweepEvery: must be a duration such as 30s',
    );
    expect(() => loadSlurmConfig(file('nodes: [a'))).toThrow('not YAML: ');
    expect(() => loadSlurmConfig(join(dir, 'missing.yaml'))).toThrow('cannot be read (ENOENT)');
  });
});

describe("the Kubernetes bridge's configuration file", () => {
  it('reads the maps, the grace of a deletion and the time NotReady counts as down', () => {
    const config = loadKubernetesConfig(
      file(
        [
          'nodes: { kw-a: gpu-a.fra1.example }',
          'tenants: { team-a: research }',
          'deleteGracePeriod: 10s',
          'notReadyAfter: 2m',
        ].join('\n'),
      ),
    );
    expect(config).toEqual({
      rules: {
        hostnames: { 'kw-a': 'gpu-a.fra1.example' },
        tenants: { 'team-a': 'research' },
        defaultTenant: null,
      },
      sweepEveryMs: null,
      deleteGraceMs: 10_000,
      notReadyAfterMs: 120_000,
    });
  });

  it("refuses Slurm's keys and names what is wrong", () => {
    expect(() => loadKubernetesConfig(file('end: { default: cancel }'))).toThrow('end: unknown key');
    expect(() => loadKubernetesConfig(file('notReadyAfter: soon'))).toThrow(
      'notReadyAfter: must be a duration such as 30s',
    );
  });
});

describe('drydock-bridge slurm, refused before it starts', () => {
  const run = async (argv: string[], env: NodeJS.ProcessEnv = {}) => {
    let stderr = '';
    const code = await main(argv, { stdout: () => {}, stderr: (text) => void (stderr += text) }, env);
    return { code, stderr };
  };

  it('without a cluster, a key, or with a bad configuration: exit 2 and what to fix', async () => {
    expect(await run(['slurm', '--token', 'x'])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('--cluster'),
    });
    expect(await run(['slurm', '--cluster', 'hpc1'])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('--token'),
    });
    expect(await run(['slurm', '--cluster', 'HPC 1', '--token', 'x'])).toMatchObject({ code: 2 });
    const bad = file('end: { default: kill }');
    expect(await run(['slurm', '--cluster', 'hpc1', '--config', bad], { DRYDOCK_TOKEN: 'x' })).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('end.default: must be requeue or cancel'),
    });
  });
});
