import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Hono } from 'hono';
import type { AppEnv } from './env';

/** Where the page loads the reference's script from: this process, so /docs works offline. */
export const REFERENCE_SCRIPT_PATH = '/docs/assets/api-reference.js';

/**
 * The reference's browser build, from the installed @scalar/api-reference (its `browser` entry,
 * beside the package's main module; the package does not export the file by name).
 */
function readReferenceScript(): Uint8Array<ArrayBuffer> {
  const main = createRequire(import.meta.url).resolve('@scalar/api-reference');
  return new Uint8Array(readFileSync(join(dirname(main), 'browser', 'standalone.js')));
}

let script: { body: Uint8Array<ArrayBuffer>; version: string } | undefined;

/** The script, read once per process; `version` (of its content) makes a new install a new URL. */
function referenceScript(): { body: Uint8Array<ArrayBuffer>; version: string } {
  if (!script) {
    const body = readReferenceScript();
    script = { body, version: createHash('sha256').update(body).digest('hex').slice(0, 16) };
  }
  return script;
}

/**
 * What the reference is told: our document, and nothing fetched from elsewhere (its default fonts
 * come from a CDN; telemetry and the agent chat call home), nor buttons to Scalar's hosted
 * services (developer tools, MCP), dead ends where the API has no internet access.
 */
const CONFIGURATION = {
  url: '/openapi.json',
  withDefaultFonts: false,
  telemetry: false,
  agent: { disabled: true },
  mcp: { disabled: true },
  showDeveloperTools: 'never',
  // Every operation on the page, grouped under its tag, as a reader searching it expects.
  defaultOpenAllTags: true,
};

const INIT = `Scalar.createApiReference('#app', ${JSON.stringify(CONFIGURATION)});`;

/**
 * Only this origin, and of inline scripts only INIT; the reference injects its own styles. The
 * "try it" client calls the API, which is this origin too.
 */
const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  `script-src 'self' 'sha256-${createHash('sha256').update(INIT).digest('base64')}'`,
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "worker-src 'self' blob:",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * The page: the fallback beside #app shows until the script mounts the reference there (a style
 * rule then hides it), and stays when the script cannot load or run. It is not inside #app: the
 * script would take content there for server-rendered markup to hydrate.
 */
function page(scriptUrl: string): string {
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>Drydock API</title>
    <style>
      #fallback { font-family: system-ui, sans-serif; max-width: 40rem; margin: 3rem auto; padding: 0 1rem; }
      #app:not(:empty) + #fallback { display: none; }
    </style>
  </head>
  <body>
    <div id="app"></div>
    <main id="fallback">
      <h1>Drydock API</h1>
      <p>Loading the interactive reference. If it does not appear, the API is described by its
        OpenAPI document: <a href="/openapi.json">/openapi.json</a>.</p>
    </main>
    <script src="${scriptUrl}"></script>
    <script>${INIT}</script>
  </body>
</html>
`;
}

/** `/docs`, the interactive API reference, and the script it runs, served by this process. */
export function docsRoutes() {
  const { body, version } = referenceScript();
  const html = page(`${REFERENCE_SCRIPT_PATH}?v=${version}`);
  return new Hono<AppEnv>()
    .get('/docs', (c) => c.html(html, 200, { 'content-security-policy': CONTENT_SECURITY_POLICY }))
    .get(REFERENCE_SCRIPT_PATH, (c) =>
      c.body(body, 200, {
        'content-type': 'text/javascript; charset=utf-8',
        // The page asks for it by content (`?v=`): a cached copy is never stale.
        'cache-control': 'public, max-age=31536000, immutable',
      }),
    );
}
