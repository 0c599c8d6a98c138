import { defineSearchAttributeKey, WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import proto from '@temporalio/proto';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../observability/log';
import { onceSearchAttributesServed } from '../worker';
import { useHarness } from './support/harness';

const h = useHarness({ worker: false });

/** A start naming `attribute`, on a queue nobody polls: only Temporal's answer to it counts. */
const startNaming = (attribute: string, workflowId: string) => () =>
  h.temporal.workflow
    .start('neverRuns', {
      taskQueue: 'search-attributes-nobody-polls',
      workflowId,
      typedSearchAttributes: [{ key: defineSearchAttributeKey(attribute, 'KEYWORD'), value: 'x' }],
    })
    .then(() => {});

describe('a worker start that names a search attribute', () => {
  it('is tried again while Temporal has no mapping for the attribute, and goes through once it has', async () => {
    // Unique to this run: Temporal has no mapping for it until the test adds one.
    const attribute = `DrydockProbe${Date.now()}`;
    const start = startNaming(attribute, `probe-${attribute}`);
    const refusals: string[] = [];
    await onceSearchAttributesServed(async () => {
      try {
        await start();
      } catch (error) {
        if (refusals.push(String((error as Error).cause ?? error)) === 1) {
          await h.temporal.connection.operatorService.addSearchAttributes({
            namespace: 'default',
            searchAttributes: {
              [attribute]: proto.temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
            },
          });
        }
        throw error;
      }
    }, silentLogger());

    expect(refusals[0]).toContain(`no mapping defined for search attribute ${attribute}`);
    const started = await h.temporal.workflow.getHandle(`probe-${attribute}`).describe();
    expect(started.status.name).toBe('RUNNING');
    expect(started.typedSearchAttributes.get(defineSearchAttributeKey(attribute, 'KEYWORD'))).toBe('x');
    await h.temporal.workflow.getHandle(`probe-${attribute}`).terminate('test over');
  });

  it('is not tried again for any other refusal', async () => {
    const attribute = `DrydockProbeOther${Date.now()}`;
    await h.temporal.connection.operatorService.addSearchAttributes({
      namespace: 'default',
      searchAttributes: {
        [attribute]: proto.temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
      },
    });
    const workflowId = `probe-${attribute}`;
    await onceSearchAttributesServed(startNaming(attribute, workflowId), silentLogger());
    let attempts = 0;
    const again = onceSearchAttributesServed(() => {
      attempts += 1;
      return startNaming(attribute, workflowId)();
    }, silentLogger());
    await expect(again).rejects.toBeInstanceOf(WorkflowExecutionAlreadyStartedError);
    expect(attempts).toBe(1);
    await h.temporal.workflow.getHandle(workflowId).terminate('test over');
  });
});
