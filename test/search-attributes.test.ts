import { randomBytes } from 'node:crypto';
import { Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import proto from '@temporalio/proto';
import { NativeConnection } from '@temporalio/worker';
import { describe, expect, inject, it } from 'vitest';
import { registerSearchAttributes } from '../worker';
import { SEARCH_ATTRIBUTE_KEYS } from '../workflows/search-attributes';
import { eventually } from './support/harness';

const KEYWORD = proto.temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD;
const WORKERS = 4;

describe('registerSearchAttributes', () => {
  it(`${WORKERS} workers starting at once on a namespace without them: all start, each attribute added once`, async () => {
    const address = inject('temporalAddress');
    const client = await Connection.connect({ address });
    const connections = await Promise.all(
      Array.from({ length: WORKERS }, () => NativeConnection.connect({ address })),
    );
    const namespace = `sa-race-${randomBytes(4).toString('hex')}`;
    try {
      await client.workflowService.registerNamespace({
        namespace,
        workflowExecutionRetentionPeriod: msToTs('1 day'),
      });
      // A new namespace reaches the frontend's cache a moment later.
      const before = await eventually(() =>
        client.operatorService.listSearchAttributes({ namespace }).catch(() => undefined),
      );
      const names = SEARCH_ATTRIBUTE_KEYS.map((key) => key.name);
      expect(names.filter((name) => name in (before.customAttributes ?? {}))).toEqual([]);

      // Each worker lists, sees them missing, and sends its add only once every worker has listed:
      // the race of a deploy that starts its workers together, made certain.
      let listed = 0;
      let adds = 0;
      let allListed!: () => void;
      const barrier = new Promise<void>((resolve) => (allListed = resolve));
      const racing = connections.map(
        (connection) =>
          ({
            operatorService: {
              listSearchAttributes: async (request: { namespace: string }) => {
                const answer = await connection.operatorService.listSearchAttributes(request);
                if (++listed === WORKERS) allListed();
                return answer;
              },
              addSearchAttributes: async (
                request: Parameters<NativeConnection['operatorService']['addSearchAttributes']>[0],
              ) => {
                adds++;
                await barrier;
                return connection.operatorService.addSearchAttributes(request);
              },
            },
          }) as unknown as NativeConnection,
      );
      const results = await Promise.allSettled(
        racing.map((connection) => registerSearchAttributes(connection, namespace)),
      );
      expect(results.filter((result) => result.status === 'rejected')).toEqual([]);
      expect(adds).toBe(WORKERS);

      const after = await client.operatorService.listSearchAttributes({ namespace });
      for (const name of names)
        expect({ name, type: after.customAttributes?.[name] }).toEqual({ name, type: KEYWORD });
      // With SQL visibility an attribute is an alias of a pre-made column: one column each, none taken twice.
      const described = await client.workflowService.describeNamespace({ namespace });
      const aliases = Object.values(described.config?.customSearchAttributeAliases ?? {});
      expect(aliases.sort()).toEqual([...names].sort());

      // Once they are there, another start changes nothing.
      await registerSearchAttributes(connections[0]!, namespace);
      const again = await client.workflowService.describeNamespace({ namespace });
      expect(again.config?.customSearchAttributeAliases).toEqual(
        described.config?.customSearchAttributeAliases,
      );
    } finally {
      await Promise.all(connections.map((connection) => connection.close()));
      await client.close();
    }
  });
});
