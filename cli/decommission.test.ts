import { describe, expect, it } from 'vitest';
import { derivedIdempotencyKey, readPreviewFile, type ExecuteBody } from './commands/decommission';
import { UsageError } from './errors';

const NODE = 'node_01k5w8v3x9q2m4n6p8r0s2t4v6';
const DIGEST = `sha256:${'0f'.repeat(32)}`;

describe('derivedIdempotencyKey', () => {
  const body: ExecuteBody = {
    confirm: 'gpu-b7-03',
    nodeGeneration: 14,
    dependencyDigest: DIGEST,
    operator: 'alice',
    reason: 'EOL',
  };

  it('is the same for the same node and body, and a valid Idempotency-Key', () => {
    const key = derivedIdempotencyKey(NODE, body);
    expect(key).toMatch(/^dd-[0-9a-f]{32}$/);
    expect(key).toMatch(/^[A-Za-z0-9._:-]{8,128}$/);
    expect(derivedIdempotencyKey(NODE, { ...body })).toBe(key);
  });

  it('differs when anything the API would compare differs', () => {
    const key = derivedIdempotencyKey(NODE, body);
    const others = [
      derivedIdempotencyKey('node_01k5w8v3x9q2m4n6p8r0s2t4v7', body),
      derivedIdempotencyKey(NODE, { ...body, confirm: NODE }),
      derivedIdempotencyKey(NODE, { ...body, nodeGeneration: 15 }),
      derivedIdempotencyKey(NODE, { ...body, dependencyDigest: `sha256:${'1f'.repeat(32)}` }),
      derivedIdempotencyKey(NODE, { ...body, operator: 'bob' }),
      derivedIdempotencyKey(NODE, { ...body, reason: 'EOL ' }),
      // Fields are not run together: moving a character from one to the next is another request.
      derivedIdempotencyKey(NODE, { ...body, operator: 'alic', reason: 'eEOL' }),
    ];
    expect(new Set([key, ...others]).size).toBe(others.length + 1);
  });
});

describe('readPreviewFile', () => {
  const preview = {
    nodeId: NODE,
    hostname: 'gpu-b7-03',
    displayName: null,
    confirmationIdentities: [NODE, 'gpu-b7-03'],
    nodeGeneration: 14,
    dependencyDigest: DIGEST,
    ready: true,
    blockers: [],
    cleanup: [],
    retained: [],
  };
  const read = (content: unknown) => () => (typeof content === 'string' ? content : JSON.stringify(content));
  const refusal = (content: unknown, nodeId = NODE) => {
    try {
      readPreviewFile('p.json', nodeId, read(content));
    } catch (error) {
      expect(error).toBeInstanceOf(UsageError);
      expect((error as UsageError).helpFor).toBe('decommission execute');
      return (error as UsageError).message;
    }
    throw new Error('expected a usage error');
  };

  it('takes the generation, digest and identities of the saved preview', () => {
    expect(readPreviewFile('p.json', NODE, read(preview))).toEqual({
      nodeGeneration: 14,
      dependencyDigest: DIGEST,
      confirmationIdentities: [NODE, 'gpu-b7-03'],
    });
  });

  it("refuses another node's preview, a file that is not a preview, and one it cannot read", () => {
    const other = 'node_01k5w8v3x9q2m4n6p8r0s2t4v7';
    expect(refusal({ ...preview, nodeId: other })).toBe(
      `--from-preview p.json is the preview of ${other}, not of ${NODE}`,
    );
    const notOne = `--from-preview p.json is not a preview saved by: drydock decommission preview ${NODE} --json`;
    for (const bad of [
      '',
      'not json',
      'null',
      '[]',
      { ...preview, nodeId: 'gpu-b7-03' },
      { ...preview, nodeGeneration: '14' },
      { ...preview, nodeGeneration: 0 },
      { ...preview, dependencyDigest: 'sha256:abc' },
      { ...preview, confirmationIdentities: undefined },
      { ...preview, confirmationIdentities: [NODE, 3] },
    ]) {
      expect(refusal(bad), JSON.stringify(bad)).toBe(notOne);
    }
    const missing = () => {
      throw Object.assign(new Error('no such file'), { code: 'ENOENT' });
    };
    expect(() => readPreviewFile('p.json', NODE, missing)).toThrow(
      '--from-preview p.json cannot be read (ENOENT)',
    );
  });
});
