import createClient, {
  type Client,
  type ClientPathsWithMethod,
  type FetchResponse,
  type MaybeOptionalInit,
} from 'openapi-fetch';
import { ApiError, badResponse, causeOf, refusalOf, Unreachable } from './errors.js';
import type { components, paths } from './schema.js';

/**
 * The one typed client of the Drydock API, shared by the CLI and the agent: openapi-fetch over the
 * types generated from the API's OpenAPI document (`schema.ts`), with Drydock's conventions.
 * A call resolves to the JSON of a success and throws otherwise: `ApiError` for an answer with an
 * error status (its envelope's code, message, details and request id), `Unreachable` when no
 * answer came (refused or broken connection, timeout). Idempotency-Key and If-Match are header
 * parameters of the routes that take them: `params: { header: { 'idempotency-key': key } }`.
 */

export { ApiError, Unreachable } from './errors.js';

/** The named schemas of the document: `Schemas['Node']`, `Schemas['Operation']`, … */
export type Schemas = components['schemas'];

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';
type Path<M extends Method> = ClientPathsWithMethod<Client<paths>, M>;

type Operation<M extends Method, P extends Path<M>> = paths[P][M] extends infer O extends Record<
  string,
  unknown
>
  ? O
  : never;

/** The JSON a successful call answers, e.g. `Answer<'get', '/v1/pools/{id}/capacity'>`. */
export type Answer<M extends Method, P extends Path<M>> = NonNullable<
  FetchResponse<Operation<M, P>, object, `${string}/${string}`>['data']
>;

/** The query parameters of a call, e.g. `Query<'get', '/v1/nodes'>`. */
export type Query<M extends Method, P extends Path<M>> =
  Operation<M, P> extends { parameters: { query?: infer Q } } ? NonNullable<Q> : never;

export type Fetch = (request: Request) => Promise<Response>;

/** What a call may set beyond its params and body. */
export interface CallOptions {
  /** Overrides the client's `timeoutMs` (a long-poll waits longer than a short call). */
  timeoutMs?: number;
  /** Sends this call another way (the agent's long-polls use a socket pool of their own). */
  fetch?: Fetch;
  /** Cancels the call; it then fails as `Unreachable`. */
  signal?: AbortSignal;
}

type InitArgs<I> = undefined extends I ? [init?: I & CallOptions] : [init: I & CallOptions];

type Call<M extends Method> = <P extends Path<M>, I extends MaybeOptionalInit<paths[P], M>>(
  path: P,
  ...init: InitArgs<I>
) => Promise<Answer<M, P>>;

export interface ApiClient {
  readonly baseUrl: string;
  GET: Call<'get'>;
  POST: Call<'post'>;
  PUT: Call<'put'>;
  PATCH: Call<'patch'>;
  DELETE: Call<'delete'>;
}

export interface ApiClientOptions {
  baseUrl: string;
  /**
   * The bearer credential: an API key, or a node credential. A function is asked at each call (an
   * agent renews its credential); a call refused 401 while the credential it carried was replaced
   * is sent once more with the new one.
   */
  token?: string | (() => string | undefined);
  /** How long a call may take, answer included, before it fails as `Unreachable`. */
  timeoutMs: number;
  /** How requests are sent; `fetch` unless given. */
  fetch?: Fetch;
}

export function createApiClient(options: ApiClientOptions): ApiClient {
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  const client = createClient<paths>({
    baseUrl,
    headers: { accept: 'application/json' },
  });
  const tokenNow =
    typeof options.token === 'function' ? options.token : () => options.token as string | undefined;
  const caller =
    (method: Method) =>
    async (path: string, init: CallOptions & Record<string, unknown> = {}): Promise<unknown> => {
      const token = tokenNow();
      try {
        return await send(method, path, init, token);
      } catch (error) {
        const renewed = tokenNow();
        if (!(error instanceof ApiError && error.status === 401 && renewed !== token)) throw error;
        return send(method, path, init, renewed);
      }
    };
  const send = async (
    method: Method,
    path: string,
    init: CallOptions & Record<string, unknown>,
    token: string | undefined,
  ): Promise<unknown> => {
    const {
      timeoutMs = options.timeoutMs,
      fetch = options.fetch ?? globalThis.fetch,
      signal,
      headers,
      ...rest
    } = init as CallOptions & { headers?: Record<string, string | null> } & Record<string, unknown>;
    const deadline = new Deadline(timeoutMs, signal);
    let sent: Request | undefined;
    let answer: { data?: unknown; error?: unknown; response: Response };
    try {
      answer = await client.request(
        method,
        path as never,
        {
          ...rest,
          headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers },
          signal: deadline.signal,
          parseAs: 'text',
          fetch: (request: Request) => fetch((sent = request)),
        } as never,
      );
    } catch (error) {
      const detail = deadline.expired ? `no answer within ${timeoutMs / 1000}s` : causeOf(error);
      throw new Unreachable(baseUrl, detail);
    } finally {
      deadline.clear();
    }
    const { status, ok } = answer.response;
    if (!ok) throw refusalOf(sent!, status, answer.error);
    const body = parseJson(answer.data);
    if (body === undefined) throw badResponse(sent!, status);
    return body;
  };
  return {
    baseUrl,
    GET: caller('get') as Call<'get'>,
    POST: caller('post') as Call<'post'>,
    PUT: caller('put') as Call<'put'>,
    PATCH: caller('patch') as Call<'patch'>,
    DELETE: caller('delete') as Call<'delete'>,
  };
}

function parseJson(text: unknown): unknown {
  if (typeof text !== 'string' || text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Aborts a call when its time is up or its caller cancels it, whichever comes first. */
class Deadline {
  private readonly controller = new AbortController();
  private readonly timer: NodeJS.Timeout;
  private readonly cancel = () => this.controller.abort(this.caller?.reason);
  expired = false;

  constructor(
    ms: number,
    private readonly caller: AbortSignal | undefined,
  ) {
    this.timer = setTimeout(() => {
      this.expired = true;
      this.controller.abort(new DOMException(`no answer within ${ms} ms`, 'TimeoutError'));
    }, ms);
    if (caller?.aborted) this.cancel();
    caller?.addEventListener('abort', this.cancel, { once: true });
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  clear(): void {
    clearTimeout(this.timer);
    this.caller?.removeEventListener('abort', this.cancel);
  }
}
