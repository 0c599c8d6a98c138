import {
  ApplicationFailure,
  NamespaceNotFoundError,
  ServiceError,
  TimeoutFailure,
  WorkflowExecutionAlreadyStartedError,
  WorkflowFailedError,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  WorkflowUpdateRPCTimeoutOrCancelledError,
} from '@temporalio/client';
import { RetryState } from '@temporalio/common';
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { toResponse } from '../../api/errors';
import { classifyTemporalError } from '../../api/temporal-errors';

// The errors the Temporal client raises on the start path, built as the client builds them
// (workflow-client.js: rethrowUpdateGrpcError, rethrowGrpcError, _pollForUpdateOutcome).
const ADDRESS = '10.1.2.3:7233';
function grpcError(code: number, details: string) {
  return Object.assign(new Error(`${code} ${details}`), { code, details, metadata: {} });
}
const service = (code: number, details: string) =>
  new ServiceError('Update-With-Start failed', {
    cause: grpcError(code, `${details}, remote_addr=${ADDRESS}`),
  });

const NOTHING_CHANGED = /nothing was changed/;
const MAY_TAKE_EFFECT = /may still take effect/;

const cases: [string, unknown, RegExp][] = [
  [
    'update RPC timed out',
    new WorkflowUpdateRPCTimeoutOrCancelledError('Deadline exceeded', {
      cause: grpcError(4, 'Deadline exceeded'),
    }),
    MAY_TAKE_EFFECT,
  ],
  [
    'update RPC cancelled by the server',
    new WorkflowUpdateRPCTimeoutOrCancelledError('Call cancelled', { cause: grpcError(1, 'Call cancelled') }),
    MAY_TAKE_EFFECT,
  ],
  ['deadline on another call', service(4, 'Deadline exceeded'), MAY_TAKE_EFFECT],
  ['unreachable', service(14, 'No connection established'), MAY_TAKE_EFFECT],
  ['throttled', service(8, 'namespace rate limit exceeded'), NOTHING_CHANGED],
  ['previous run closing, after retries', service(9, 'workflow is closing'), NOTHING_CHANGED],
  ['update aborted by a closing run', service(10, 'workflow update was aborted'), NOTHING_CHANGED],
  ['a request the server rejects', service(3, 'summary too large'), NOTHING_CHANGED],
  ['server internal error', service(13, 'internal'), MAY_TAKE_EFFECT],
  ['namespace missing', new NamespaceNotFoundError('default'), NOTHING_CHANGED],
  [
    'already started',
    new WorkflowExecutionAlreadyStartedError('Workflow execution already started', 'drain/n', 'drain'),
    NOTHING_CHANGED,
  ],
  [
    'workflow gone while polling the update',
    new WorkflowNotFoundError('not found', 'drain/n', undefined),
    MAY_TAKE_EFFECT,
  ],
  [
    'update failed without a Drydock code',
    new WorkflowUpdateFailedError(
      'Workflow Update failed',
      new TimeoutFailure('activity timed out', undefined, 'START_TO_CLOSE'),
    ),
    MAY_TAKE_EFFECT,
  ],
  [
    'update failed with a foreign failure type',
    new WorkflowUpdateFailedError(
      'Workflow Update failed',
      ApplicationFailure.create({ type: 'ReferenceError' }),
    ),
    MAY_TAKE_EFFECT,
  ],
  [
    'workflow ended before it took the update',
    new WorkflowFailedError('Workflow execution failed', undefined, RetryState.NON_RETRYABLE_FAILURE),
    MAY_TAKE_EFFECT,
  ],
];

async function answerTo(error: unknown) {
  const app = new Hono().onError(toResponse);
  app.get('/', () => {
    throw error;
  });
  const response = await app.request('/');
  return { status: response.status, text: await response.text() };
}

describe('every Temporal client error of the start path', () => {
  it.each(cases)(
    '%s: UNAVAILABLE, saying only what is known, naming nothing inside',
    async (_, error, says) => {
      const failure = classifyTemporalError(error);
      expect(failure).toMatchObject({ code: 'UNAVAILABLE', details: {} });
      expect(failure!.message).toMatch(says);
      const answer = await answerTo(error);
      expect(answer.status).toBe(503);
      expect(JSON.parse(answer.text).error).toMatchObject({ code: 'UNAVAILABLE', message: failure!.message });
      expect(answer.text).not.toContain(ADDRESS);
      expect(answer.text).not.toMatch(/cause|:\d+:\d+\)/);
    },
  );

  it('an error that is not Temporal’s is not classified as one', () => {
    expect(classifyTemporalError(new TypeError('a bug'))).toBeNull();
  });
});
