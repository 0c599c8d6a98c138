import { isIP } from 'node:net';
import { z } from 'zod';
import { DEFAULT_CAPACITY_HISTORY_DAYS } from './domain/capacity';
import { LOG_LEVELS } from './observability/log';

const milliseconds = (fallback: number) => z.coerce.number().int().min(1).max(3_600_000).default(fallback);
const perMinute = (fallback: number) => z.coerce.number().min(0.01).max(1e9).default(fallback);
const burst = (fallback: number) => z.coerce.number().int().min(1).max(1e9).default(fallback);
/** An address or a CIDR subnet, e.g. `10.0.0.5`, `10.0.0.0/8`, `fd00::/8`. */
const addressOrSubnet = z.string().refine((entry) => {
  const [address = '', prefix, extra] = entry.split('/');
  if (extra !== undefined || !isIP(address)) return false;
  return (
    prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= (isIP(address) === 4 ? 32 : 128))
  );
}, 'an IP address or CIDR subnet');

/** Every setting Drydock reads, from the environment, validated once at start-up (README, Configuration). */
const schema = z.object({
  DATABASE_URL: z.string().url().optional(),
  TEMPORAL_ADDRESS: z.string().min(1).optional(),
  TEMPORAL_NAMESPACE: z.string().min(1).default('default'),
  TEMPORAL_TASK_QUEUE: z.string().min(1).default('drydock'),
  // The link to TEMPORAL_ADDRESS (temporal-connection.ts): TLS when any of these is set.
  /** The CA (PEM file) that signed the Temporal frontend's certificate; unset: the system's CAs. */
  TEMPORAL_TLS_CA: z.string().min(1).optional(),
  /** mTLS: the client certificate (PEM file) Drydock presents to Temporal; with TEMPORAL_TLS_KEY. */
  TEMPORAL_TLS_CERT: z.string().min(1).optional(),
  /** mTLS: its private key (PEM file, mode 0600); with TEMPORAL_TLS_CERT. */
  TEMPORAL_TLS_KEY: z.string().min(1).optional(),
  /** The name the frontend's certificate carries, when it is not the host of TEMPORAL_ADDRESS. */
  TEMPORAL_TLS_SERVER_NAME: z.string().min(1).optional(),
  /** A file (mode 0600) holding a Temporal Cloud API key, sent as `Authorization: Bearer`; implies TLS. */
  TEMPORAL_API_KEY_FILE: z.string().min(1).optional(),
  TEMPORAL_CLI: z.string().min(1).optional(),
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  /** API processes sharing PORT (node:cluster); `auto` or 0: one per core. */
  API_PROCESSES: z.literal('auto').or(z.coerce.number().int().min(0).max(256)).default(1),
  TEMPORAL_UI_PORT: z.coerce.number().int().min(1).max(65535).default(8233),
  /** The Temporal Web UI the console links operations to (`npm start` uses the UI it starts). */
  DRYDOCK_TEMPORAL_UI_URL: z.string().url().optional(),
  DRYDOCK_CLUSTER_ID: z.string().min(1).default('drydock-dev'),
  DRYDOCK_CA_KEY_FILE: z.string().min(1).optional(),
  /** The CA keys the current one replaced, newest first, comma-separated: they endorse it to agents. */
  DRYDOCK_CA_PREVIOUS_KEY_FILES: z
    .string()
    .optional()
    .transform((files) =>
      (files ?? '')
        .split(',')
        .map((f) => f.trim())
        .filter((f) => f.length > 0),
    ),
  /** The SSH CA's Ed25519 key (break-glass SSH); unset: DRYDOCK_HOME/ssh-ca-key.pem, made if missing. */
  DRYDOCK_SSH_CA_KEY_FILE: z.string().min(1).optional(),
  DRYDOCK_BOOTSTRAP_OPERATOR_KEY: z.string().min(16).optional(),
  /** The bearer token the API's /metrics asks for; unset: /metrics takes no credential (development). */
  DRYDOCK_METRICS_TOKEN: z
    .string()
    .regex(/^[A-Za-z0-9._~+/=-]{16,512}$/, 'is 16–512 of letters, digits and . _ ~ + / = -')
    .optional(),
  // People's access tokens from an OpenID provider as bearer credentials (docs/sign-in.md): all of
  // issuer, audience and group map, or none.
  /** The provider's issuer URL, as its tokens' `iss` says it; unset: only API keys are accepted. */
  DRYDOCK_OIDC_ISSUER: z.string().url().optional(),
  /** The `aud` its access tokens for Drydock carry. */
  DRYDOCK_OIDC_AUDIENCE: z.string().min(1).optional(),
  /** A YAML or JSON file mapping the provider's groups to operator or tenant roles. */
  DRYDOCK_OIDC_GROUP_MAP: z.string().min(1).optional(),
  /** The token claim listing the person's groups. */
  DRYDOCK_OIDC_GROUPS_CLAIM: z.string().min(1).default('groups'),
  /** Seconds a token's `exp`/`nbf` may be off between the provider's clock and ours. */
  DRYDOCK_OIDC_CLOCK_SKEW: z.coerce.number().int().min(0).max(600).default(60),
  // The console's sign-in at the same provider (docs/sign-in.md, The console): client id, secret
  // file and redirect URL, all or none; they need the three settings above.
  /** The console's client id at the provider (a confidential client: code flow with PKCE). */
  DRYDOCK_OIDC_CLIENT_ID: z.string().min(1).optional(),
  /** A file (mode 0600) holding that client's secret. */
  DRYDOCK_OIDC_CLIENT_SECRET_FILE: z.string().min(1).optional(),
  /** Where the provider sends the browser back: `https://<console host>/console/oidc/callback`. */
  DRYDOCK_OIDC_REDIRECT_URL: z.string().url().optional(),
  /** The scopes the console asks for, space-separated (`openid` among them). */
  DRYDOCK_OIDC_SCOPES: z.string().min(1).default('openid email profile groups'),
  /** A resource indicator (RFC 8707) sent with the console's requests, when the provider needs one. */
  DRYDOCK_OIDC_RESOURCE: z.string().url().optional(),
  /** The provider's name on the sign-in button; unset: the issuer's host. */
  DRYDOCK_OIDC_PROVIDER_NAME: z.string().min(1).max(64).optional(),
  /** `0`: the console takes no API key at sign-in (only the provider); break-glass key sign-in is on by default. */
  DRYDOCK_CONSOLE_KEY_SIGN_IN: z.enum(['0', '1']).default('1'),
  DRYDOCK_DEMO: z.enum(['0', '1']).default('1'),
  /** `npm start`: run a local OpenID provider with demo people and trust it (same as `npm start -- --oidc`). */
  DRYDOCK_DEMO_OIDC: z.enum(['0', '1']).default('0'),
  DRYDOCK_HOME: z.string().min(1).default('.drydock'),
  /** A prebuilt workflow bundle for the worker (tests build one per run); unset: dist/'s own, or bundled at start from the sources. */
  DRYDOCK_WORKFLOW_BUNDLE: z.string().min(1).optional(),
  // The API's doors: how long a client may take to send a request, and per-address rate limits.
  DRYDOCK_HEADERS_TIMEOUT_MS: milliseconds(10_000),
  DRYDOCK_REQUEST_TIMEOUT_MS: milliseconds(30_000),
  DRYDOCK_KEEP_ALIVE_TIMEOUT_MS: milliseconds(15_000),
  DRYDOCK_AUTH_FAILURES_PER_MINUTE: perMinute(20),
  DRYDOCK_AUTH_FAILURES_BURST: burst(20),
  DRYDOCK_TOKENLESS_JOINS_PER_MINUTE: perMinute(10),
  DRYDOCK_TOKENLESS_JOINS_BURST: burst(10),
  /** One identity's heartbeats going back to an earlier agent run more than this often… */
  DRYDOCK_DUPLICATE_SESSION_ALTERNATIONS: z.coerce.number().int().min(1).max(1000).default(3),
  /** …within this window quarantine it (docs/security.md, A copied identity). */
  DRYDOCK_DUPLICATE_SESSION_WINDOW_MS: milliseconds(600_000),
  /** Comma-separated proxies whose X-Forwarded-For is believed; empty: none is. */
  DRYDOCK_TRUSTED_PROXIES: z
    .string()
    .default('')
    .transform((list) =>
      list
        .split(',')
        .map((entry) => entry.trim())
        .filter(Boolean),
    )
    .pipe(z.array(addressOrSubnet)),
  /** The worker's Prometheus `/metrics` (its own and the Temporal SDK's worker metrics); 0: any free port. */
  DRYDOCK_WORKER_METRICS_PORT: z.coerce.number().int().min(0).max(65535).default(9464),
  /** How long a worker's dispatcher holds an outbox row it claimed before another may take it. */
  DRYDOCK_OUTBOX_LEASE_MS: milliseconds(30_000),
  /** How many days of each pool's capacity history (one row a minute) the worker keeps. */
  DRYDOCK_CAPACITY_HISTORY_DAYS: z.coerce
    .number()
    .int()
    .min(1)
    .max(400)
    .default(DEFAULT_CAPACITY_HISTORY_DAYS),
  /** How much the API, worker and `npm start` log (JSON lines; pretty on a terminal). */
  LOG_LEVEL: z.enum(LOG_LEVELS).default('info'),
  /** An OTLP/HTTP collector's base URL (spans go to `<url>/v1/traces`); unset: no tracing at all. */
  OTEL_EXPORTER_OTLP_ENDPOINT: z.string().url().optional(),
  /** The traces URL itself, used as given; over the base URL above when both are set. */
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: z.string().url().optional(),
  /** Fault injection for crash tests (worker.ts): SIGKILL the worker after its Nth completed step. */
  DRYDOCK_FAULT_KILL_AFTER_STEP: z.coerce.number().int().min(1).optional(),
  /** With the above: only the steps of this workflow id count. */
  DRYDOCK_FAULT_KILL_WORKFLOW_ID: z.string().min(1).optional(),
  /** Crash tests: the worker's dispatcher SIGKILLs its process just before, or just after, a start. */
  DRYDOCK_FAULT_KILL_IN_DISPATCH: z.enum(['before-start', 'after-start']).optional(),
});

export type Config = z.infer<typeof schema>;

/** The configuration from the environment; a variable set to the empty string counts as unset. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = schema.safeParse(Object.fromEntries(Object.entries(env).filter(([, v]) => v !== '')));
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new Error(`invalid configuration: ${problems}`);
  }
  return parsed.data;
}

/** The names the config schema reads; docker-compose.yml may use only these. */
export const CONFIG_KEYS = Object.keys(schema.shape);
