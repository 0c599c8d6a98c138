import fc from 'fast-check';
import { z } from 'zod';
import { beforeAll, describe, expect, it } from 'vitest';
import { maxBodyBytesOf } from '../api/body-limit';
import { ERROR_STATUS, type ErrorCode } from '../domain/errors';
import { TEXT_PATTERN } from '../domain/text';
import { call } from './support/fixtures';
import { eventually, useHarness } from './support/harness';
import {
  createWorld,
  rightCaller,
  routeTable,
  settle,
  type Call,
  type Exemplar,
  type JsonSchema,
  type ParamSpec,
  type RouteSpec,
  type World,
} from './support/route-table';
import { snapshot } from './support/snapshot';

// The world's pool has short remediation attempts (test/support/route-table.ts).
const h = useHarness();

/** At least 20,000 generated requests in CI; FUZZ_RUNS raises both phases for a longer hunt. */
const SCALE = Math.max(1, Number(process.env.FUZZ_RUNS ?? 0) / 20_000);
/** FUZZ_SEED replays a failing run: fast-check prints the seed of every counterexample. */
const REPLAY = process.env.FUZZ_SEED ? { seed: Number(process.env.FUZZ_SEED) } : {};
const REFUSALS = Math.round(12_000 * SCALE);
const ANYTHING = Math.round(8_000 * SCALE);

/** What a route is fuzzed with: its spec, exemplar, one call built once, and the right credential. */
interface Target {
  route: RouteSpec;
  exemplar: Exemplar;
  call: Call;
  token: string | null;
}

let world: World;
let targets: Target[];
let sent = 0;

beforeAll(async () => {
  world = await createWorld(h);
  targets = [];
  for (const { route, exemplar } of routeTable(h.app)) {
    targets.push({
      route,
      exemplar,
      call: await exemplar.build(world),
      // The operator key for tenant routes: it is checked without a database round trip, and
      // validation comes before authorization, so every spoil still meets the route's schemas.
      token: exemplar.access.kind === 'tenant' ? h.operatorKey : await rightCaller(world, exemplar.access),
    });
  }
  // Set-up is over (its drains ended) before anything is compared.
  await world.operation();
  await settle(h);
}, 120_000);

// ---------------------------------------------------------------------------------------------
// Requests as bytes: what a client can put on the wire, sent through the app in-process.

type Body = string | Uint8Array | { chunks: (string | Uint8Array)[] };

/** The bytes a body puts on the wire. */
function bytesOf(body: Body | undefined): number {
  if (body === undefined) return 0;
  if (typeof body === 'string') return Buffer.byteLength(body);
  if (body instanceof Uint8Array) return body.byteLength;
  return body.chunks.reduce((sum, chunk) => sum + bytesOf(chunk), 0);
}

interface Wire {
  method: string;
  /** Path with params already percent-encoded. */
  path: string;
  query: [string, string][];
  headers: Record<string, string>;
  body?: Body;
}

/** Percent-encodes UTF-16 as a sloppy client would: a lone surrogate as its WTF-8 bytes. */
function percentEncode(value: string): string {
  let out = '';
  for (let i = 0; i < value.length; i++) {
    const unit = value.charCodeAt(i);
    const pair = unit >= 0xd800 && unit <= 0xdbff && /[\udc00-\udfff]/.test(value[i + 1] ?? '');
    if (pair) {
      out += encodeURIComponent(value.slice(i, i + 2));
      i++;
    } else if (unit >= 0xd800 && unit <= 0xdfff) {
      out += [0xe0 | (unit >> 12), 0x80 | ((unit >> 6) & 0x3f), 0x80 | (unit & 0x3f)]
        .map((b) => `%${b.toString(16).toUpperCase()}`)
        .join('');
    } else {
      out += encodeURIComponent(value[i]!);
    }
  }
  return out;
}

function streamOf(chunks: (string | Uint8Array)[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks)
        controller.enqueue(typeof chunk === 'string' ? encoder.encode(chunk) : chunk);
      controller.close();
    },
  });
}

interface Answer {
  status: number;
  body: any;
  text: string;
}

async function sendWire(wire: Wire): Promise<Answer> {
  const search = wire.query.map(([k, v]) => `${percentEncode(k)}=${percentEncode(v)}`).join('&');
  const init: RequestInit & { duplex?: 'half' } = { method: wire.method, headers: wire.headers };
  if (wire.body !== undefined) {
    if (typeof wire.body === 'string' || wire.body instanceof Uint8Array) init.body = wire.body;
    else {
      // A stream has no Content-Length: the body arrives chunked.
      init.body = streamOf(wire.body.chunks);
      init.duplex = 'half';
    }
  }
  const response = await h.app.request(`${wire.path}${search ? `?${search}` : ''}`, init);
  sent++;
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: checked by the caller
  }
  return { status: response.status, body, text };
}

/**
 * What is wrong with an answer: a 5xx, or an error without the envelope, a code of its own, the
 * status of its code or a request id; null when nothing is. Plain checks, one `expect` per request.
 */
function answerProblem(answer: Answer): string | null {
  if (answer.status >= 500) return 'a 5xx';
  if (answer.status < 400) return null;
  const body = answer.body as { error?: Record<string, unknown> } | string;
  const error = typeof body === 'object' ? body.error : undefined;
  if (!error || Object.keys(body).length !== 1) return 'no error envelope';
  if (!Object.hasOwn(ERROR_STATUS, String(error.code)))
    return `code ${String(error.code)} is not one of ours`;
  if (ERROR_STATUS[error.code as ErrorCode] !== answer.status)
    return `status ${answer.status} for ${String(error.code)}`;
  if (typeof error.message !== 'string' || typeof error.details !== 'object' || error.details === null) {
    return 'no message or details';
  }
  if (typeof error.requestId !== 'string' || !error.requestId.startsWith('req_')) return 'no request id';
  return null;
}

function expectEnvelope(answer: Answer, label: string): void {
  const problem = answerProblem(answer);
  if (problem) expect.fail(`${label}: ${problem}: ${answer.status} ${answer.text.slice(0, 400)}`);
}

// ---------------------------------------------------------------------------------------------
// The shape of a call, as the wire sees it; spoils change one part of it.

interface Shape {
  params: Record<string, string>;
  query: Record<string, string>;
  headers: Record<string, string>;
  /** Removed headers and query params are absent; a JSON value, or raw text/bytes for the body. */
  body: { json: unknown } | { raw: Body } | undefined;
  contentType: string | undefined;
  token: string | null;
}

function shapeOf(target: Target): Shape {
  const { call, token } = target;
  return {
    params: { ...call.params },
    query: { ...call.query },
    headers: { ...call.headers },
    body: call.body === undefined ? undefined : { json: structuredClone(call.body) },
    contentType: call.body === undefined ? undefined : 'application/json',
    token,
  };
}

/** Marks numbers JSON.stringify cannot write (1e309): replaced in the text after stringifying. */
const RAW_NUMBER = '\u0000raw-number:';

function wireOf(route: RouteSpec, shape: Shape, chunked: number): Wire {
  const headers: Record<string, string> = { ...shape.headers };
  if (shape.token !== null) headers.authorization = `Bearer ${shape.token}`;
  if (shape.contentType !== undefined) headers['content-type'] = shape.contentType;
  let body: Body | undefined;
  if (shape.body && 'json' in shape.body) {
    body = JSON.stringify(shape.body.json).replace(/"\\u0000raw-number:([^"]*)"/g, '$1');
  } else if (shape.body) {
    body = shape.body.raw;
  }
  if (body !== undefined && chunked > 0) body = chunksOf(body, chunked);
  const path = route.path.replace(/\{(\w+)\}/g, (_, name: string) => percentEncode(shape.params[name] ?? ''));
  return { method: route.method, path, query: Object.entries(shape.query), headers, body };
}

/** The body cut into `n` chunks at byte offsets, a multi-byte character split across two at times. */
function chunksOf(body: Body, n: number): Body {
  if (typeof body === 'object' && !(body instanceof Uint8Array)) return body;
  const bytes = typeof body === 'string' ? new TextEncoder().encode(body) : body;
  const size = Math.max(1, Math.ceil(bytes.length / n));
  const chunks: Uint8Array[] = [];
  for (let at = 0; at < bytes.length; at += size) chunks.push(bytes.slice(at, at + size));
  return { chunks };
}

// ---------------------------------------------------------------------------------------------
// Values no field takes.

/**
 * Control characters, lone surrogates and format characters that hide or reorder text; `\n` only
 * where anything goes (a PEM key takes it).
 */
const NEVER_TEXT = [
  '\u202e',
  '\u2066',
  '\u200b',
  '\ufeff',
  '\u{e0041}',
  '\u0000',
  '\ud800',
  '\udbff',
  '\udc00',
  '\udfff',
  '\u0001',
  '\u0007',
  '\b',
  '\t',
  '\u000b',
  '\f',
  '\r',
  '\u001b',
  '\u001f',
  '\u007f',
  '\u0080',
  '\u0085',
  '\u009b',
  '\u009f',
];
const ESCAPE_SEQUENCES = [
  '\u001b[31mred',
  '\u001b[2J\u001b[H',
  '\u001b]0;title\u0007',
  '\u009b31m',
  '\u001bP+q\u001b\\',
];
const MEGABYTE = 'a'.repeat(1 << 20);

const poison = fc.oneof(fc.constantFrom(...NEVER_TEXT), fc.constantFrom(...ESCAPE_SEQUENCES));

/** `value` with a character no field takes inserted somewhere. */
const poisoned = (value: string) =>
  fc
    .tuple(fc.nat({ max: value.length }), poison)
    .map(([at, bad]) => `${value.slice(0, at)}${bad}${value.slice(at)}`);

const deepArray = fc.integer({ min: 100, max: 1_000 }).map((depth) => {
  let value: unknown = [];
  for (let i = 0; i < depth; i++) value = [value];
  return value;
});
const wideObject = fc
  .integer({ min: 100, max: 1_000 })
  .map((width) => Object.fromEntries(Array.from({ length: width }, (_, i) => [`k${i}`, [i]])));

/** A value of a type no field holds where this one is (`null` only where the field is not nullable). */
const wrongType = fc.oneof(fc.constant(null), deepArray, wideObject, poisoned('x'));

/** Whether a body field takes `null` (a merge patch's "remove"): `type: [..., "null"]` or a null branch. */
function acceptsNull(schema: JsonSchema | undefined): boolean {
  const types: unknown = schema?.type;
  return (
    (Array.isArray(types) && types.includes('null')) || (schema?.anyOf ?? []).some((s) => s.type === 'null')
  );
}

const badNumber = fc.constantFrom<unknown>(
  0.5,
  -1,
  `${RAW_NUMBER}9007199254740993`,
  `${RAW_NUMBER}1e309`,
  `${RAW_NUMBER}-1e309`,
  `${RAW_NUMBER}-0`,
  `${RAW_NUMBER}-0.0e0`,
  `${RAW_NUMBER}1e-400`,
  '7',
);

/** Replacement values for a JSON value that make it invalid whatever its field. */
function spoiledValue(value: unknown) {
  if (typeof value === 'string') {
    return fc.oneof(
      { arbitrary: poisoned(value), weight: 6 },
      { arbitrary: fc.constant(MEGABYTE), weight: 1 },
      { arbitrary: wrongType, weight: 2 },
    );
  }
  if (typeof value === 'number') return fc.oneof(badNumber, wrongType);
  if (typeof value === 'boolean') return fc.oneof(fc.constantFrom<unknown>('true', 1, 0), wrongType);
  return wrongType;
}

type Path = (string | number)[];

/** Every place inside a JSON value, the value itself excluded. */
function placesOf(value: unknown, at: Path = []): Path[] {
  if (Array.isArray(value)) return value.flatMap((v, i) => [[...at, i], ...placesOf(v, [...at, i])]);
  if (value && typeof value === 'object') {
    return Object.entries(value).flatMap(([k, v]) => [[...at, k], ...placesOf(v, [...at, k])]);
  }
  return [];
}

function objectsOf(value: unknown, at: Path = []): Path[] {
  if (Array.isArray(value)) return value.flatMap((v, i) => objectsOf(v, [...at, i]));
  if (value && typeof value === 'object') {
    return [at, ...Object.entries(value).flatMap(([k, v]) => objectsOf(v, [...at, k]))];
  }
  return [];
}

/** `value` as JSON text with the first name of the object at `at` written twice. */
function withNameTwice(value: unknown, at: Path, path: Path = []): string {
  if (Array.isArray(value)) return `[${value.map((v, i) => withNameTwice(v, at, [...path, i])).join(',')}]`;
  if (value && typeof value === 'object') {
    const members = Object.entries(value).map(
      ([k, v]) => `${JSON.stringify(k)}:${withNameTwice(v, at, [...path, k])}`,
    );
    const here = path.length === at.length && path.every((key, i) => key === at[i]);
    if (here && members.length > 0) members.push(members[0]!);
    return `{${members.join(',')}}`;
  }
  return JSON.stringify(value);
}

/** The value at `path`; undefined where an earlier spoil left no object on the way. */
function get(value: unknown, path: Path): unknown {
  return path.reduce<unknown>(
    (v, key) =>
      v !== null && typeof v === 'object' ? (v as Record<string | number, unknown>)[key] : undefined,
    value,
  );
}

/** The object holding `path`'s last key, if one still does. */
function parentOf(value: unknown, path: Path): Record<string | number, unknown> | undefined {
  const parent = get(value, path.slice(0, -1));
  return parent !== null && typeof parent === 'object'
    ? (parent as Record<string | number, unknown>)
    : undefined;
}

function set(value: unknown, path: Path, replacement: unknown): void {
  const parent = parentOf(value, path);
  if (parent) parent[path[path.length - 1]!] = replacement;
}

function remove(value: unknown, path: Path): void {
  const parent = parentOf(value, path);
  if (parent) delete parent[path[path.length - 1]!];
}

/** The schema of the value at `path`, following properties, items and records. */
function schemaAt(schema: JsonSchema | undefined, path: Path): JsonSchema | undefined {
  let at = schema;
  for (const key of path) {
    if (!at) return undefined;
    if (typeof key === 'number') at = at.items;
    else
      at =
        at.properties?.[key] ??
        (typeof at.additionalProperties === 'object' ? at.additionalProperties : undefined);
  }
  return at;
}

const DATE_TIME = z.iso.datetime({ offset: true });

/** Whether a query, header or path value passes its parameter schema, as the server reads it. */
function accepted(schema: JsonSchema, value: string): boolean {
  if (schema.enum) return schema.enum.includes(value);
  // An RFC 3339 time with its zone, as the API's date-time parameters read it (the audit's
  // since/until). Without this every value would look accepted, and a spoil's filter would wait
  // forever for one that is not.
  if (schema.format === 'date-time') return DATE_TIME.safeParse(value).success;
  if (schema.type === 'integer') {
    // Query numbers are decimal digits only; the document shows them as integers with bounds.
    return (
      /^\d{1,9}$/.test(value) &&
      Number(value) >= Number(schema.minimum) &&
      Number(value) <= Number(schema.maximum)
    );
  }
  if (schema.maxLength !== undefined && value.length > schema.maxLength) return false;
  if (typeof schema.minLength === 'number' && value.length < schema.minLength) return false;
  return schema.pattern === undefined || new RegExp(schema.pattern).test(value);
}

/** A header value as the Headers API would carry it, or null when no client can send it. */
function asHeader(value: string): string | null {
  try {
    return new Headers({ x: value }).get('x');
  } catch {
    return null;
  }
}

const NUMBERISH = [
  '0x10',
  '1e1',
  ' 5',
  '+5',
  '5 ',
  '-1',
  '1.0',
  '0',
  '٣',
  'Infinity',
  'NaN',
  '99999999999',
  '',
  '"1',
  '1"',
  'W/"1"',
  '"1"1',
  '""',
  '"-1"',
];

/** Candidate values for a parameter: near its real value, number-like, hostile, huge. */
function paramValues(real: string | undefined) {
  const base = real ?? 'x';
  return fc.oneof(
    poisoned(base),
    fc.constantFrom(...NUMBERISH),
    fc.constant(base.toUpperCase()),
    fc.constant(`${base}x`),
    fc.constant(base.slice(0, -1)),
    fc.string({ maxLength: 40 }),
    fc.constant('a'.repeat(10_000)),
  );
}

/** A path param that no longer routes to the same handler: empty or a dot segment. */
const reroutes = (value: string) => /^(\.|%2e){0,2}$/i.test(value);

// ---------------------------------------------------------------------------------------------
// Spoils: each makes a call invalid in one way the route checks.

/** One change to a call; `what` is what fast-check shows of a counterexample. */
interface Spoil {
  what: string;
  apply(shape: Shape): void;
}

const shown = (value: unknown) => (JSON.stringify(value) ?? String(value)).slice(0, 80);
const spoil = (what: string, apply: (shape: Shape) => void): Spoil => ({ what, apply });

/** The JSON body of a shape, or undefined once a spoil replaced it with raw text. */
const jsonOf = (shape: Shape) => (shape.body && 'json' in shape.body ? shape.body : undefined);

function spoils(target: Target): fc.Arbitrary<Spoil>[] {
  const { route } = target;
  const shape = shapeOf(target);
  const out: fc.Arbitrary<Spoil>[] = [];
  const byParam = (
    specs: ParamSpec[],
    part: 'params' | 'query' | 'headers',
    keep: (value: string) => string | null = (v) => v,
  ) => {
    for (const spec of specs) {
      const real = shape[part][spec.name];
      out.push(
        paramValues(real)
          .map((value) => keep(value))
          .filter((value): value is string => value !== null && !accepted(spec.schema, value))
          .filter((value) => part !== 'params' || !reroutes(value))
          .map((value) =>
            spoil(`${part} ${spec.name} = ${shown(value)}`, (s) => {
              s[part][spec.name] = value;
            }),
          ),
      );
      if (spec.required && part !== 'params') {
        out.push(
          fc.constant(
            spoil(`${part} ${spec.name} removed`, (s) => {
              delete s[part][spec.name];
            }),
          ),
        );
      }
    }
  };
  byParam(route.params, 'params');
  byParam(route.query, 'query');
  // A route that takes a closed set of query parameters refuses one it does not know (a typo
  // such as `limt` is not silently the default).
  if (route.query.length > 0) {
    out.push(
      fc.constantFrom('extra', 'limt', 'Limit', 'constructor').map((name) =>
        spoil(`query ${name} added`, (s) => {
          s.query[name] = '1';
        }),
      ),
    );
  }
  byParam(route.headers, 'headers', asHeader);
  if (!route.body) return out;

  const json = target.call.body;
  const places = placesOf(json);
  if (places.length > 0) {
    out.push(
      fc
        .constantFrom(...places)
        .chain((path) =>
          spoiledValue(get(json, path))
            .filter((value) => value !== null || !acceptsNull(schemaAt(route.body!.schema, path)))
            // A string the field takes is no spoil (a megabyte of base64 is a command's output).
            .filter((value) => {
              const at = schemaAt(route.body!.schema, path);
              return typeof value !== 'string' || !at || !accepted(at, value);
            })
            .map((value) => ({ path, value })),
        )
        .map(({ path, value }) =>
          spoil(`body ${path.join('.')} = ${shown(value)}`, (s) => {
            const body = jsonOf(s);
            if (body) set(body.json, path, value);
          }),
        ),
    );
  }
  const required = places.filter((path) => {
    const key = path[path.length - 1];
    return (
      typeof key === 'string' && schemaAt(route.body!.schema, path.slice(0, -1))?.required?.includes(key)
    );
  });
  if (required.length > 0) {
    out.push(
      fc.constantFrom(...required).map((path) =>
        spoil(`body ${path.join('.')} removed`, (s) => {
          const body = jsonOf(s);
          if (body) remove(body.json, path);
        }),
      ),
    );
  }
  out.push(
    fc
      .tuple(
        fc.constantFrom(...objectsOf(json)),
        fc.constantFrom('extra', 'reason\u0000', '__proto__', 'constructor', 'x'.repeat(300)),
        poisoned('v'),
      )
      .map(([path, key, value]) =>
        spoil(`body ${[...path, key].join('.')} added = ${shown(value)}`, (s) => {
          const body = jsonOf(s);
          const object = body && get(body.json, path);
          // defineProperty: a key named __proto__ is an own property, as JSON.parse makes it. Not
          // on an array an earlier spoil put there: JSON has no keys on arrays, and an own
          // `constructor` would break the array's own methods in this test.
          if (object && typeof object === 'object' && !Array.isArray(object)) {
            Object.defineProperty(object, key, {
              value,
              enumerable: true,
              configurable: true,
              writable: true,
            });
          }
        }),
      ),
  );
  out.push(
    fc
      .oneof(
        fc.constantFrom('{', '{"reason":', '{"a":1,}', "{'a':1}", 'nul', '{} x', '\u0000', '[', '"', 'tru'),
        fc.constantFrom('[]', '"text"', '1', 'true', 'null', '[{}]'),
        deepArray.map((v) => JSON.stringify(v)),
        fc.constant(`{"k":"${'a'.repeat(1 << 20)}`),
        fc.string({ maxLength: 200 }).filter((t) => {
          try {
            const parsed: unknown = JSON.parse(t);
            return parsed === null || typeof parsed !== 'object' || Array.isArray(parsed);
          } catch {
            return true;
          }
        }),
      )
      .map((raw) =>
        spoil(`body = ${shown(raw)}`, (s) => {
          s.body = { raw };
        }),
      ),
  );
  // JSON that means something other than it says: a name twice (the same value both times), or
  // the whole body behind a byte order mark.
  const named = objectsOf(json).filter((path) => Object.keys(get(json, path) as object).length > 0);
  if (named.length > 0) {
    out.push(
      fc.constantFrom(...named).map((path) =>
        spoil(`body ${path.join('.') || '(top)'}: a name twice`, (s) => {
          const body = jsonOf(s);
          if (body) s.body = { raw: withNameTwice(body.json, path) };
        }),
      ),
    );
  }
  out.push(
    fc.constant(
      spoil('body behind a byte order mark', (s) => {
        const body = jsonOf(s);
        if (body) s.body = { raw: `\ufeff${JSON.stringify(body.json)}` };
      }),
    ),
  );
  out.push(
    fc
      .constantFrom(
        'text/plain',
        'application/x-www-form-urlencoded',
        'multipart/form-data; boundary=x',
        'application/xml',
      )
      .map((type) =>
        spoil(`content-type ${type}`, (s) => {
          s.contentType = type;
        }),
      ),
  );
  return out;
}

// ---------------------------------------------------------------------------------------------

describe('bad input', () => {
  it('NUL, a lone surrogate and a bidi control in every free-text field of every route answer 400 INVALID_INPUT and change nothing', async () => {
    const before = await snapshot(h);
    const fields: string[] = [];
    for (const target of targets) {
      const { route } = target;
      const freeText: { part: 'body' | 'query'; path: Path }[] = [];
      const walk = (schema: JsonSchema | undefined, path: Path) => {
        if (!schema) return;
        if (schema.pattern === TEXT_PATTERN.source) freeText.push({ part: 'body', path });
        for (const [key, property] of Object.entries(schema.properties ?? {})) walk(property, [...path, key]);
        if (schema.items) walk(schema.items, [...path, 0]);
      };
      walk(route.body?.schema, []);
      for (const spec of route.query) {
        if (spec.schema.pattern === TEXT_PATTERN.source) freeText.push({ part: 'query', path: [spec.name] });
      }
      for (const { part, path } of freeText) {
        const label = `${route.key} ${part} ${path.join('.')}`;
        fields.push(label);
        const real = part === 'body' ? get(target.call.body, path) : target.call.query?.[path[0] as string];
        expect(real, `${label}: the exemplar fills every free-text field`).toEqual(expect.any(String));
        for (const bad of [
          `${real as string}\u0000`,
          `\ud800${real as string}`,
          `\u202e${real as string}`,
          `${real as string}\u{e0041}`,
        ]) {
          const shape = shapeOf(target);
          if (part === 'body') set((shape.body as { json: unknown }).json, path, bad);
          else shape.query[path[0] as string] = bad;
          const answer = await sendWire(wireOf(route, shape, 0));
          expectEnvelope(answer, label);
          expect(answer.status, `${label}: ${answer.text}`).toBe(400);
          expect(answer.body.error.code).toBe('INVALID_INPUT');
          expect(answer.body.error.details.issues, label).toContainEqual(
            expect.objectContaining({ path: path.join('.') }),
          );
        }
      }
    }
    // The fields the issue names are all among them.
    for (const field of [
      'POST /v1/nodes/{id}/cordon body reason',
      'POST /v1/nodes/{id}/drain body reason',
      'POST /v1/agent/conditions body reason',
      'POST /v1/agent/commands/{id}/refuse body reason',
      'POST /v1/tokens body description',
      'POST /v1/agent/join body displayName',
      'POST /v1/agent/join body inventory.accelerators.0.serial',
      'POST /v1/agent/join body inventory.storageRoots.0.path',
      'POST /v1/nodes/{id}/decommission body operator',
    ]) {
      expect(fields).toContain(field);
    }
    expect(await snapshot(h)).toEqual(before);
  }, 120_000);

  it('reads query numbers as decimal digits, If-Match as "N" or N, and bounds durations and body numbers', async () => {
    const nodeId = await world.node();
    const before = await snapshot(h);
    const refused = async (method: string, path: string, options: Parameters<typeof call>[3] = {}) => {
      const reply = await call(h, method, path, options);
      expect(
        reply.status,
        `${method} ${path} ${JSON.stringify(options)}: ${JSON.stringify(reply.body)}`,
      ).toBe(400);
      expect(reply.body.error.code).toBe('INVALID_INPUT');
    };
    for (const limit of ['0x10', '1e1', ' 5', '+5', '5 ', '1.0', '-1', '٣', '', '0']) {
      await refused('GET', `/v1/nodes?limit=${encodeURIComponent(limit)}`);
    }
    await refused('GET', '/v1/nodes?limt=5');
    await refused('GET', '/v1/nodes?limit=5&limit=6');
    await refused('GET', '/v1/agent/commands?wait=0x1', { token: world.agent.credential });
    for (const ifMatch of ['"1', '1"', 'W/"1"', '"1"1', '""', '"-1"']) {
      await refused('POST', `/v1/nodes/${nodeId}/cordon`, { headers: { 'if-match': ifMatch } });
    }
    for (const lostAfter of ['31d', '30.5d', '745h', '0', '1e3s', '-5m', `${'9'.repeat(40)}d`]) {
      await refused('POST', '/v1/pools', {
        body: { id: 'pool-bounded', kind: 'provider', siteId: 'fra1', policy: { lostAfter } },
      });
    }
    for (const version of ['2147483648', '1e309', '-1e309', '9007199254740993', '0.5', '-0', '1e-400']) {
      await refused('POST', `/v1/nodes/${nodeId}/cordon`, { body: `{"version":${version}}` });
    }
    // Numbers are what they look like: neither of these is a use limit of 0 (unlimited).
    for (const maxUses of ['1e-400', '-0', '-0.0']) {
      await refused('POST', '/v1/tokens', { body: `{"poolId":"${world.pool}","maxUses":${maxUses}}` });
    }
    // A name twice is refused, not read as its last value; so is a byte order mark.
    await refused('POST', `/v1/nodes/${nodeId}/cordon`, { body: '{"reason":"a","reason":"b"}' });
    await refused('POST', `/v1/nodes/${nodeId}/cordon`, { body: '{"reason":"a","\\u0072eason":"b"}' });
    await refused('POST', `/v1/nodes/${nodeId}/cordon`, { body: '\ufeff{"reason":"a"}' });
    expect(await snapshot(h)).toEqual(before);

    expect((await call(h, 'GET', '/v1/nodes?limit=16')).status).toBe(200);
    const stale = await call(h, 'POST', `/v1/nodes/${nodeId}/cordon`, { body: { version: 2_147_483_647 } });
    expect(stale.body.error).toMatchObject({ code: 'CONFLICT', details: { currentVersion: 1 } });
    for (const ifMatch of ['"1"', '1']) {
      const reply = await call(h, 'POST', `/v1/nodes/${nodeId}/uncordon`, {
        headers: { 'if-match': ifMatch },
      });
      expect(reply.status, ifMatch).toBe(200);
    }
    const pool = await call(h, 'POST', '/v1/pools', {
      body: { id: 'pool-bounded', kind: 'provider', siteId: 'fra1', policy: { lostAfter: '30d' } },
    });
    expect(pool.status).toBe(201);
  });

  it(`${REFUSALS} generated requests, each spoiled in one place, all answer 400 INVALID_INPUT (413 PAYLOAD_TOO_LARGE over 64 KiB) and change nothing`, async () => {
    const spoilable = targets
      .map((target) => ({ target, spoils: spoils(target) }))
      .filter(({ spoils }) => spoils.length > 0);
    const request = fc.constantFrom(...spoilable).chain(({ target, spoils }) =>
      fc.record({
        target: fc.constant(target),
        spoil: fc.oneof(...spoils),
        chunked: fc.oneof(
          { arbitrary: fc.constant(0), weight: 3 },
          { arbitrary: fc.integer({ min: 1, max: 7 }), weight: 1 },
        ),
      }),
    );
    const before = await snapshot(h);
    const started = Date.now();
    await fc.assert(
      fc.asyncProperty(request, async ({ target, spoil, chunked }) => {
        const shape = shapeOf(target);
        spoil.apply(shape);
        const wire = wireOf(target.route, shape, chunked);
        const answer = await sendWire(wire);
        const label = `${target.route.key} with ${spoil.what}`;
        expectEnvelope(answer, label);
        const tooLarge = bytesOf(wire.body) > maxBodyBytesOf(target.route.path);
        const code = tooLarge ? 'PAYLOAD_TOO_LARGE' : 'INVALID_INPUT';
        if (answer.body.error?.code !== code) expect.fail(`${label}: ${answer.text.slice(0, 400)}`);
      }),
      { numRuns: REFUSALS, ...REPLAY },
    );
    console.log(`${REFUSALS} refused requests in ${Date.now() - started} ms`);
    // Nothing was written, no workflow started: every node's version, every event, as before.
    expect(await snapshot(h)).toEqual(before);
  }, 300_000);

  it(`${ANYTHING} generated requests of any kind on every route never answer 5xx; every workflow they start ends`, async () => {
    const callers = [
      null,
      h.operatorKey,
      world.ownerKey,
      world.strangerKey,
      world.revokedKey,
      world.agent.credential,
      world.pending.credential,
      'garbage token',
    ];
    const withSpoils = targets.map((target) => ({ target, spoils: spoils(target) }));
    const request = fc.constantFrom(...withSpoils).chain(({ target, spoils: spoilsOf }) => {
      return fc.record({
        target: fc.constant(target),
        spoil: spoilsOf.length ? fc.array(fc.oneof(...spoilsOf), { maxLength: 3 }) : fc.constant<Spoil[]>([]),
        caller: fc.oneof(
          { arbitrary: fc.constant(undefined), weight: 4 },
          { arbitrary: fc.constantFrom(...callers), weight: 1 },
        ),
        extra: fc.oneof(
          { arbitrary: fc.constant(undefined), weight: 4 },
          {
            arbitrary: fc.constantFrom<Body>(
              new Uint8Array([0xff, 0xfe]),
              new Uint8Array([0x7b, 0x22, 0xed, 0xa0, 0x80, 0x22, 0x7d]),
              new Uint8Array([0xc0, 0x80]),
            ),
            weight: 1,
          },
          { arbitrary: fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v) ?? 'null'), weight: 1 },
        ),
        newline: fc.boolean(),
        chunked: fc.oneof(
          { arbitrary: fc.constant(0), weight: 3 },
          { arbitrary: fc.integer({ min: 1, max: 7 }), weight: 1 },
        ),
      });
    });
    const started = Date.now();
    await fc.assert(
      fc.asyncProperty(request, async ({ target, spoil, caller, extra, newline, chunked }) => {
        const shape = shapeOf(target);
        for (const s of spoil) s.apply(shape);
        if (caller !== undefined) shape.token = caller;
        if (extra !== undefined && target.route.method !== 'GET') shape.body = { raw: extra };
        if (newline && shape.body && 'json' in shape.body && typeof shape.body.json === 'object') {
          // The one control character a field documents (PEM keys), anywhere else.
          for (const path of placesOf(shape.body.json)) {
            const value = get(shape.body.json, path);
            if (typeof value === 'string') set(shape.body.json, path, `${value}\n`);
          }
        }
        const answer = await sendWire(wireOf(target.route, shape, chunked));
        expectEnvelope(
          answer,
          `${target.route.key} with ${spoil.map((x) => x.what).join(', ') || 'no spoil'}`,
        );
      }),
      { numRuns: ANYTHING, ...REPLAY },
    );
    console.log(`${ANYTHING} requests of any kind in ${Date.now() - started} ms; ${sent} in this file`);
    expect(sent).toBeGreaterThanOrEqual(20_000);
    // Workflow-backed routes ran for real; none is left waiting.
    await settle(h);
    await eventually(async () => {
      const { count } = await h.temporal.workflow.count(
        `TaskQueue = '${h.taskQueue}' AND ExecutionStatus = 'Running'`,
      );
      return count === 0;
    }, 60_000);
  }, 300_000);
});
