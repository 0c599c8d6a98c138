import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { OpenAPI3 } from 'openapi-typescript';
import { createApp, type App } from '../api/app';
import type { AppDeps } from '../api/env';
import { silentLogger } from '../observability/log';
import { createApiMetrics } from '../observability/metrics';

/** A service that throws as soon as anything of it is used (read, called). */
function unusable(name: string): never {
  const refuse = () => {
    throw new Error(`the OpenAPI document needs no ${name}`);
  };
  return new Proxy(refuse, { get: refuse, apply: refuse }) as never;
}

/**
 * The app with no service behind it: given services that throw when used, so building its
 * document (or reading its routes) could not touch one. Only what every request goes through is
 * real: its metrics, its (silent) log line, no tracing.
 */
export function serviceFreeApp(): App {
  const everyRequest: Partial<AppDeps> = {
    metrics: createApiMetrics({ commands: () => 0, events: () => 0 }),
    log: silentLogger(),
    tracerProvider: undefined,
    // Read when the app is made: how people sign in to the console (which is not in the document).
    consoleSignIn: undefined,
  };
  const unused = new Proxy(everyRequest as AppDeps, {
    get: (deps, name) => (name in deps ? deps[name as keyof AppDeps] : unusable(String(name))),
  });
  return createApp(unused);
}

/** The document the app serves at `/openapi.json`, built without any service. */
export async function openApiDocument(): Promise<OpenAPI3> {
  const response = await serviceFreeApp().request('/openapi.json');
  if (!response.ok) throw new Error(`GET /openapi.json answered ${response.status}`);
  return (await response.json()) as OpenAPI3;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const file = process.argv[2];
  if (!file) throw new Error('usage: tsx scripts/openapi-document.ts <file to write>');
  mkdirSync(dirname(resolve(file)), { recursive: true });
  writeFileSync(file, `${JSON.stringify(await openApiDocument(), null, 2)}\n`);
}
