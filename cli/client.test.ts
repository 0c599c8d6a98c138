import { describe, expect, it } from 'vitest';
import { ApiError, Unreachable } from '@drydock/client';
import { cliFailure } from './client';
import type { Credential } from './credential';
import { CliError } from './errors';

const keyed: Credential = { source: 'token', signIn: undefined, bearer: async () => 'sekret' };
const globals = { api: 'http://drydock.example:8080', credential: keyed };

describe('cliFailure', () => {
  it('keeps the code of a refusal, which sets the exit code', () => {
    const failure = cliFailure(new ApiError(409, 'CONFLICT', 'node changed', { version: 3 }), globals);
    expect(failure).toBeInstanceOf(CliError);
    expect(failure).toMatchObject({ code: 'CONFLICT', message: 'node changed', exitCode: 3 });
  });

  it('says how to sign in or pass a credential on a 401 only when none was given', () => {
    const refusal = new ApiError(401, 'UNAUTHENTICATED', 'missing credential');
    const none: Credential = { source: 'none', signIn: undefined, bearer: async () => undefined };
    expect(cliFailure(refusal, { ...globals, credential: none })).toMatchObject({
      message:
        "missing credential; sign in with 'drydock login --issuer URL', or pass --token SECRET or set DRYDOCK_TOKEN",
      exitCode: 5,
    });
    expect(cliFailure(refusal, globals)).toMatchObject({ message: 'missing credential' });
  });

  it("says to sign in again when a sign-in's token is refused", () => {
    const refusal = new ApiError(401, 'UNAUTHENTICATED', 'the token has expired');
    const signIn = {
      issuer: 'https://id.example.com',
      clientId: 'drydock-cli',
      scope: 'openid',
      accessToken: 'a.b.c',
      expiresAt: '2026-12-05T04:00:00Z',
      subject: 'alice',
    };
    const signedIn: Credential = { source: 'sign-in', signIn, bearer: async () => 'a.b.c' };
    expect(cliFailure(refusal, { ...globals, credential: signedIn })).toMatchObject({
      code: 'UNAUTHENTICATED',
      message: `the token has expired; run 'drydock login --issuer https://id.example.com --api ${globals.api}' again`,
      exitCode: 5,
    });
  });

  it('asks whether the API is Drydock when the answer was not Drydock JSON', () => {
    const bad = new ApiError(502, 'BAD_RESPONSE', 'GET /v1/nodes answered 502 without Drydock JSON');
    expect(cliFailure(bad, globals)).toMatchObject({
      code: 'BAD_RESPONSE',
      message: `GET /v1/nodes answered 502 without Drydock JSON; is ${globals.api} a Drydock API?`,
      exitCode: 1,
    });
  });

  it('names the API it could not reach and how to point at another', () => {
    expect(cliFailure(new Unreachable(globals.api, 'no answer within 30s'), globals)).toMatchObject({
      code: 'UNREACHABLE',
      message: `cannot reach the Drydock API at ${globals.api} (no answer within 30s); pass --api URL or set DRYDOCK_API`,
      exitCode: 1,
    });
    expect(cliFailure(new Unreachable(globals.api, ''), globals)).toMatchObject({
      message: `cannot reach the Drydock API at ${globals.api}; pass --api URL or set DRYDOCK_API`,
    });
  });

  it('returns anything else as it is', () => {
    const bug = new TypeError('x is undefined');
    expect(cliFailure(bug, globals)).toBe(bug);
  });
});
