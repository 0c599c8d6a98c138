import { CliError } from './errors';
import { API_HINT, TOKEN_HINT } from './globals';

/** How long one request may take before the command gives up on it. */
const REQUEST_TIMEOUT_MS = 30_000;

export type Query = Record<string, string | number | boolean | undefined>;

export interface RequestOptions {
  query?: Query;
  body?: unknown;
  headers?: Record<string, string>;
}

/** The API's error envelope (docs/api.md, Errors). */
interface ErrorEnvelope {
  error: { code: string; message: string; details?: Record<string, unknown>; requestId?: string };
}

function isErrorEnvelope(value: unknown): value is ErrorEnvelope {
  const error = (value as { error?: { code?: unknown; message?: unknown } } | null)?.error;
  return typeof error?.code === 'string' && typeof error.message === 'string';
}

/** A refusal from the API, with its code and details. */
export class ApiError extends CliError {
  constructor(
    code: string,
    message: string,
    readonly status: number,
    readonly details: Record<string, unknown> = {},
  ) {
    super(code, message);
    this.name = 'ApiError';
  }
}

/** A thin HTTP client of the Drydock API: JSON in and out, errors as `ApiError`. */
export class ApiClient {
  constructor(
    readonly baseUrl: string,
    private readonly token: string | undefined,
  ) {}

  get<T>(path: string, query?: Query): Promise<T> {
    return this.request<T>('GET', path, { query });
  }

  post<T>(path: string, body: unknown = {}, headers?: Record<string, string>): Promise<T> {
    return this.request<T>('POST', path, { body, headers });
  }

  /** DELETE with a JSON body, e.g. `DELETE /v1/nodes/{id}` `{ reason, version }`. */
  delete<T>(path: string, body: unknown = {}): Promise<T> {
    return this.request<T>('DELETE', path, { body });
  }

  async request<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    const url = new URL(this.baseUrl + path);
    for (const [key, value] of Object.entries(options.query ?? {})) {
      if (value !== undefined) url.searchParams.set(key, String(value));
    }
    const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
    if (this.token) headers.authorization = `Bearer ${this.token}`;
    if (options.body !== undefined) headers['content-type'] = 'application/json';

    let response: Response;
    try {
      response = await fetch(url, {
        method,
        headers,
        body: options.body === undefined ? undefined : JSON.stringify(options.body),
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
    } catch (error) {
      throw new CliError(
        'UNREACHABLE',
        `cannot reach the Drydock API at ${this.baseUrl}${causeOf(error)}; ${API_HINT}`,
      );
    }
    const text = await response.text();
    let body: unknown;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = undefined;
    }
    if (response.ok && body !== undefined) return body as T;
    if (isErrorEnvelope(body)) {
      const { code, message, details } = body.error;
      const hint = code === 'UNAUTHENTICATED' && !this.token ? `; ${TOKEN_HINT}` : '';
      throw new ApiError(code, message + hint, response.status, details);
    }
    throw new CliError(
      'BAD_RESPONSE',
      `${method} ${url.pathname} answered ${response.status} without Drydock JSON; is ${this.baseUrl} a Drydock API?`,
    );
  }
}

/** The low-level reason a request failed, e.g. ` (ECONNREFUSED)`. */
function causeOf(error: unknown): string {
  if (error instanceof Error && error.name === 'TimeoutError') {
    return ` (no answer within ${REQUEST_TIMEOUT_MS / 1000}s)`;
  }
  const cause = (error as { cause?: { code?: unknown; message?: unknown } } | null)?.cause;
  if (typeof cause?.code === 'string') return ` (${cause.code})`;
  if (typeof cause?.message === 'string') return ` (${cause.message})`;
  return '';
}
