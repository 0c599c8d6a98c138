import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { CONFIG_KEYS } from '../config';

// No engine runs containers here, so the production shape is checked by reading it.
const compose = parse(readFileSync('docker-compose.yml', 'utf8'), { merge: true });

describe('docker-compose.yml', () => {
  it('has Postgres, Temporal with its UI, API processes and workers', () => {
    expect(Object.keys(compose.services).sort()).toEqual([
      'api',
      'postgresql',
      'temporal',
      'temporal-ui',
      'worker',
    ]);
    expect(compose.services.temporal.image).toMatch(/^temporalio\/auto-setup:/);
    expect(compose.services['temporal-ui'].image).toMatch(/^temporalio\/ui:/);
    expect(compose.services.postgresql.image).toMatch(/^postgres:/);
  });

  it('builds API and worker from the project Dockerfile and runs entry points that exist', () => {
    expect(existsSync('Dockerfile')).toBe(true);
    for (const name of ['api', 'worker']) {
      const service = compose.services[name];
      expect(service.build).toBe('.');
      const entry = service.command.at(-1) as string;
      expect(existsSync(entry), entry).toBe(true);
    }
  });

  it('configures Drydock only with variables the config schema reads', () => {
    for (const name of ['api', 'worker']) {
      const names = Object.keys(compose.services[name].environment);
      expect(names.length).toBeGreaterThan(3);
      for (const key of names) expect(CONFIG_KEYS, `${name}: ${key}`).toContain(key);
      expect(names).toEqual(
        expect.arrayContaining(['DATABASE_URL', 'TEMPORAL_ADDRESS', 'TEMPORAL_TASK_QUEUE']),
      );
    }
    expect(compose.services.api.environment.TEMPORAL_ADDRESS).toBe('temporal:7233');
    expect(compose.services.api.environment.DATABASE_URL).toContain('@postgresql:5432/');
  });
});
