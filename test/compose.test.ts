import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { CONFIG_KEYS } from '../config';
import { PROGRAMS } from '../scripts/build';
import { SEARCH_ATTRIBUTE_KEYS } from '../workflows/search-attributes';

// No engine runs containers here, so the production shape is checked by reading it.
const composeText = readFileSync('docker-compose.yml', 'utf8');
const compose = parse(composeText, { merge: true });
const services = compose.services as Record<string, any>;
const dockerfile = readFileSync('Dockerfile', 'utf8');

/** The services that run once and exit (the others must keep running and say they are healthy). */
const ONE_SHOTS = ['temporal-admin-tools', 'temporal-create-namespace', 'drydock-migrate'];
/** The services built from this project's Dockerfile: they configure Drydock through config.ts. */
const DRYDOCK = ['drydock-migrate', 'api', 'worker'];

/** The `${NAME…}` interpolations of a compose text (`$$` is a literal dollar for the container's shell). */
function interpolated(text: string): Set<string> {
  return new Set([...text.replace(/\$\$/g, '').matchAll(/\$\{([A-Z][A-Z0-9_]*)/g)].map((m) => m[1]!));
}

/** The names an .env file sets. */
function envFileNames(text: string): Set<string> {
  return new Set([...text.matchAll(/^([A-Z][A-Z0-9_]*)=/gm)].map((m) => m[1]!));
}

describe('docker-compose.yml', () => {
  it('has Postgres, Temporal from temporalio/server with admin-tools, its UI, the migration, APIs and workers', () => {
    expect(Object.keys(services).sort()).toEqual([
      'api',
      'drydock-migrate',
      'postgresql',
      'temporal',
      'temporal-admin-tools',
      'temporal-create-namespace',
      'temporal-ui',
      'worker',
    ]);
    // The server version the Temporal CLI v1.5.1 embeds (scripts/services/temporal.ts); auto-setup is deprecated.
    expect(services.temporal.image).toBe('temporalio/server:1.29.1');
    expect(composeText).not.toContain('auto-setup');
    expect(services['temporal-admin-tools'].image).toMatch(/^temporalio\/admin-tools:1\.29\.1/);
    expect(services['temporal-create-namespace'].image).toBe(services['temporal-admin-tools'].image);
    expect(services['temporal-ui'].image).toMatch(/^temporalio\/ui:/);
    expect(services.postgresql.image).toMatch(/^postgres:/);
  });

  it('pins every image to a version', () => {
    for (const [name, service] of Object.entries(services)) {
      if (service.build) continue;
      expect(service.image, name).toMatch(/^[\w./-]+:\d[\w.-]*$/);
    }
  });

  it('starts each service once what it needs is healthy or done', () => {
    const conditions = (name: string) =>
      Object.fromEntries(
        Object.entries(services[name].depends_on as Record<string, { condition: string }>).map(
          ([dependency, { condition }]) => [dependency, condition],
        ),
      );
    expect(conditions('temporal-admin-tools')).toEqual({ postgresql: 'service_healthy' });
    expect(conditions('temporal')).toEqual({ 'temporal-admin-tools': 'service_completed_successfully' });
    expect(conditions('temporal-create-namespace')).toEqual({ temporal: 'service_healthy' });
    expect(conditions('temporal-ui')).toEqual({ temporal: 'service_healthy' });
    expect(conditions('drydock-migrate')).toEqual({ postgresql: 'service_healthy' });
    // An API needs its schema only; a worker, Temporal and its namespace too.
    expect(conditions('api')).toEqual({ 'drydock-migrate': 'service_completed_successfully' });
    expect(conditions('worker')).toEqual({
      'drydock-migrate': 'service_completed_successfully',
      temporal: 'service_healthy',
      'temporal-create-namespace': 'service_completed_successfully',
    });
  });

  it('checks the health of every long-running service; one-shots retry on failure', () => {
    for (const [name, service] of Object.entries(services)) {
      if (ONE_SHOTS.includes(name)) {
        expect(service.restart, name).toMatch(/^on-failure/);
      } else {
        expect(service.healthcheck?.test, name).toBeDefined();
        expect(service.healthcheck.disable, name).toBeUndefined();
      }
    }
    // The image has Node and no curl: the checks are Node's fetch of each process's own endpoint.
    expect(services.api.healthcheck.test.join(' ')).toContain('/healthz');
    expect(services.worker.healthcheck.test.join(' ')).toContain(
      `:${services.worker.environment.DRYDOCK_WORKER_METRICS_PORT}/readyz`,
    );
  });

  it('runs programs of the build with plain node', () => {
    for (const name of DRYDOCK) {
      const service = services[name];
      expect(service.build, name).toBe('.');
      const [node, program] = service.command as string[];
      expect(node, name).toBe('node');
      expect(program, name).toMatch(/^dist\/[\w-]+\.js$/);
      expect(PROGRAMS, name).toContain(program!.slice('dist/'.length, -'.js'.length));
    }
    expect(services['drydock-migrate'].command).toEqual(['node', 'dist/drydock.js', 'migrate']);
  });

  it('configures Drydock only with variables the config schema reads', () => {
    for (const name of DRYDOCK) {
      const keys = Object.keys(services[name].environment);
      for (const key of keys) expect(CONFIG_KEYS, `${name}: ${key}`).toContain(key);
      expect(keys, name).toContain('DATABASE_URL');
    }
    for (const name of ['api', 'worker']) {
      const env = services[name].environment;
      expect(env.DATABASE_URL, name).toContain('@postgresql:5432/');
      expect(env.DATABASE_URL, name).toBe(services['drydock-migrate'].environment.DATABASE_URL);
    }
    // The API talks to Postgres only, and waits for nothing else to start; the workers talk to
    // Temporal. The CA key (which signs purges, in the API) and the SSH CA key are
    // secrets, mounted where DRYDOCK_CA_KEY_FILE and DRYDOCK_SSH_CA_KEY_FILE point, and only for the API.
    const { api, worker } = services;
    expect(api.environment.TEMPORAL_ADDRESS).toBeUndefined();
    expect(worker.environment.TEMPORAL_ADDRESS).toBe('temporal:7233');
    expect(api.secrets).toEqual(['drydock-ca-key', 'drydock-ssh-ca-key']);
    expect(api.environment.DRYDOCK_CA_KEY_FILE).toBe('/run/secrets/drydock-ca-key');
    expect(api.environment.DRYDOCK_SSH_CA_KEY_FILE).toBe('/run/secrets/drydock-ssh-ca-key');
    expect(worker.secrets).toBeUndefined();
    expect(Object.keys(compose.secrets)).toEqual(['drydock-ca-key', 'drydock-ssh-ca-key']);
  });

  it('makes Temporal ready with scripts of its own: schemas, namespace, every search attribute', () => {
    for (const name of ['temporal-admin-tools', 'temporal-create-namespace']) {
      const service = services[name];
      expect(service.volumes, name).toEqual(['./deploy/compose:/scripts:ro']);
      const script = (service.command as string[]).at(-1)!.replace('/scripts/', 'deploy/compose/');
      expect(existsSync(script), script).toBe(true);
    }
    const schema = readFileSync('deploy/compose/temporal-schema.sh', 'utf8');
    expect(schema).toContain('--plugin postgres12');
    expect(schema).toContain('"$schemas/$2/versioned"');
    expect(schema).toMatch(/prepare "\$TEMPORAL_DB" temporal\n/);
    expect(schema).toMatch(/prepare "\$TEMPORAL_VISIBILITY_DB" visibility\n/);
    const env = services['temporal-admin-tools'].environment;
    expect([env.TEMPORAL_DB, env.TEMPORAL_VISIBILITY_DB]).toEqual([
      services.temporal.environment.DBNAME,
      services.temporal.environment.VISIBILITY_DBNAME,
    ]);
    const namespace = readFileSync('deploy/compose/temporal-namespace.sh', 'utf8');
    const registered = /for name in ([\w ]+); do/.exec(namespace)?.[1]?.split(' ');
    expect(registered?.sort()).toEqual(SEARCH_ATTRIBUTE_KEYS.map((key) => key.name).sort());
    expect(namespace).toContain('--type Keyword');
  });

  it('reads .env, and .env.example names exactly what it interpolates', () => {
    const example = envFileNames(readFileSync('.env.example', 'utf8'));
    expect([...example].sort()).toEqual([...interpolated(composeText)].sort());
  });
});

describe('Dockerfile', () => {
  it('builds dist/ in one stage and runs it from a slim image with production dependencies as a non-root user', () => {
    const manifest = JSON.parse(readFileSync('package.json', 'utf8'));
    // The image runs the Node the repository's own scripts run on (the pinned `node` dev dependency).
    const node = `node:${manifest.devDependencies.node}-bookworm-slim`;
    const stages = [...dockerfile.matchAll(/^FROM (\S+)/gm)].map((m) => m[1]);
    expect(stages).toEqual([node, node]);
    const [build, runtime] = dockerfile.split(/^FROM /m).slice(1);
    expect(build).toContain('COPY packages/client/package.json ./packages/client/');
    expect(runtime).toContain('COPY packages/client/package.json ./packages/client/');
    expect(build).toContain('RUN npm run build');
    expect(runtime).toContain('RUN npm ci --omit=dev');
    expect(runtime).toContain('COPY --from=build /app/dist ./dist');
    // patches/ is applied by the postinstall, which needs patch-package among the production dependencies.
    expect(runtime).toContain('COPY patches ./patches');
    expect(manifest.scripts.postinstall).toBe('patch-package');
    expect(Object.keys(manifest.dependencies)).toContain('patch-package');
    expect(runtime).toMatch(/^USER node$/m);
    expect(runtime).toMatch(/^HEALTHCHECK .*\n?.*\/healthz/m);
    expect(runtime).toMatch(/^CMD \["node", "dist\/api\.js"\]$/m);
    expect(readFileSync('.dockerignore', 'utf8').split('\n')).toEqual(
      expect.arrayContaining(['node_modules', 'dist', '.env', 'secrets']),
    );
  });
});
