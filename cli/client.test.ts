import { describe, expect, it } from 'vitest';
import { ApiError, Unreachable } from '@drydock/client';
import { cliFailure } from './client';
import { CliError } from './errors';

const globals = { api: 'http://drydock.example:8080', token: 'sekret' };

describe('cliFailure', () => {
  it('keeps the code of a refusal, which sets the exit code', () => {
    const failure = cliFailure(new ApiError(409, 'CONFLICT', 'node changed', { version: 3 }), globals);
    expect(failure).toBeInstanceOf(CliError);
    expect(failure).toMatchObject({ code: 'CONFLICT', message: 'node changed', exitCode: 3 });
  });

  it('says how to pass a credential on a 401 only when none was given', () => {
    const refusal = new ApiError(401, 'UNAUTHENTICATED', 'missing credential');
    expect(cliFailure(refusal, { ...globals, token: undefined })).toMatchObject({
      message: 'missing credential; pass --token SECRET or set DRYDOCK_TOKEN',
      exitCode: 5,
    });
    expect(cliFailure(refusal, globals)).toMatchObject({ message: 'missing credential' });
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
