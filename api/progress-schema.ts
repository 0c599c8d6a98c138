import { z } from '@hono/zod-openapi';
import { ENDING_ACTIONS } from '../domain/observed';
import { POOL_DRAIN_SPAN_STATES } from '../domain/pool-drain-timeline';
import { DECOMMISSION_STEPS, PROGRESS_PHASES } from '../domain/progress';

// An operation's progress in the OpenAPI document: one schema per kind, a union by `kind`, the
// shapes of domain/progress.ts (api/progress-schema.test.ts fails when the two part).

const time = z.string().nullable();

const common = {
  startedAt: time.openapi({ description: 'when a worker began it; null while it waits for one' }),
  deadline: time.openapi({ description: 'when what is still live is released by force (drains)' }),
  nextCheckAt: time.openapi({ description: 'when its workflow looks again at the latest' }),
};

const failedNode = z.object({
  nodeId: z.string(),
  operationId: z.string().nullable(),
  code: z.string(),
  message: z.string(),
});

/** What a scheduler answered when asked to end work a drain let go (politely, or at its deadline). */
export const EndingSchema = z
  .object({
    action: z.enum(ENDING_ACTIONS).openapi({
      description:
        'requeue: back in its queue; cancel: ended for good; evict: asked politely, as its own disruption budget allows; delete: ended at once',
    }),
    answer: z.string().openapi({ description: 'what the scheduler said', example: 'requeued' }),
    at: z.string().openapi({ description: 'when its bridge recorded this answer' }),
  })
  .openapi('Ending');

const drainItem = z.object({
  id: z.string(),
  endsAt: time,
  source: z
    .string()
    .nullable()
    .openapi({ description: 'observed: the scheduler that placed it; null: placed here' }),
  externalId: z.string().nullable().openapi({ description: "observed: the scheduler's id of the work" }),
  endRequestedAt: time.openapi({ description: 'observed: when the drain asked its scheduler to end it' }),
  ending: EndingSchema.nullable().openapi({
    description: 'observed: what its scheduler answered, if it did',
  }),
});

const DrainProgressSchema = z
  .object({
    kind: z.literal('drain'),
    phase: z.enum(PROGRESS_PHASES.drain),
    ...common,
    waitingFor: z
      .object({
        allocations: z.number().int().openapi({ description: 'live allocations, the exact count' }),
        items: z.array(drainItem).openapi({ description: 'the first 20, earliest end first' }),
        earliestEndsAt: time,
        budget: z
          .object({ max: z.number().int(), used: z.number().int(), holders: z.array(z.string()) })
          .nullable()
          .openapi({ description: "past the deadline with no slot: the pool's disruption budget" }),
      })
      .nullable(),
  })
  .openapi('DrainProgress');

/** One node of a pool drain over time: its spans, oldest first, the last still open. */
const poolDrainRow = z.object({
  nodeId: z.string(),
  hostname: z.string(),
  operationId: z.string().nullable().openapi({ description: 'its drain, once requested or joined' }),
  spans: z.array(
    z.object({
      state: z.enum(POOL_DRAIN_SPAN_STATES).openapi({
        description:
          'waiting: for its turn; draining: its work ending; waiting-for-budget: past its deadline, for a slot; forced-release: past its deadline, its work released by force; drained; failed (or cancelled)',
      }),
      from: z.string(),
      to: time.openapi({ description: 'null: still so' }),
    }),
  ),
});

const PoolDrainProgressSchema = z
  .object({
    kind: z.literal('pool-drain'),
    phase: z.enum(PROGRESS_PHASES['pool-drain']),
    ...common,
    waitingFor: z
      .object({
        counts: z.object({
          pending: z.number().int(),
          draining: z.number().int(),
          waitingForBudget: z.number().int(),
          drained: z.number().int(),
          failed: z.number().int(),
        }),
        nodes: z
          .object({
            pending: z.array(z.string()),
            draining: z.array(z.string()),
            waitingForBudget: z.array(z.string()),
            drained: z.array(z.string()),
            failed: z.array(failedNode),
          })
          .openapi({ description: 'at most 20 of each (the counts are exact)' }),
        maxConcurrent: z.number().int(),
        graceAfterStart: z
          .string()
          .nullable()
          .openapi({ description: "a deadline counted from each node's drain start" }),
        budget: z
          .object({
            max: z.number().int(),
            used: z.number().int().openapi({ description: 'nodes out now, the exact count' }),
            holders: z
              .array(
                z.object({
                  nodeId: z.string(),
                  hostname: z.string(),
                  draining: z.boolean().openapi({
                    description: 'its drain still ends its work; false: drained, still cordoned',
                  }),
                }),
              )
              .openapi({ description: 'the nodes holding a slot, longest out first; at most 20' }),
            waiting: z
              .array(z.object({ nodeId: z.string(), hostname: z.string() }))
              .openapi({ description: "this pool drain's nodes waiting for a slot; at most 20" }),
          })
          .nullable()
          .openapi({
            description:
              "while some of its nodes wait for the pool's disruption budget: the budget and who holds it",
          }),
        timeline: z.array(poolDrainRow).openapi({
          description:
            'the first 100 nodes of its selection over time, one row a node (the console draws it)',
        }),
      })
      .nullable(),
  })
  .openapi('PoolDrainProgress');

const PurgeProgressSchema = z
  .object({
    kind: z.literal('purge'),
    phase: z.enum(PROGRESS_PHASES.purge),
    ...common,
    waitingFor: z
      .object({ commandId: z.string().nullable(), refusedReason: z.string().nullable() })
      .nullable(),
  })
  .openapi('PurgeProgress');

const DecommissionProgressSchema = z
  .object({
    kind: z.literal('decommission'),
    phase: z.enum(PROGRESS_PHASES.decommission),
    ...common,
    waitingFor: z
      .object({
        step: z.enum(DECOMMISSION_STEPS).nullable().openapi({ description: 'the step it is at' }),
        stepsDone: z.array(z.enum(DECOMMISSION_STEPS)),
      })
      .nullable(),
  })
  .openapi('DecommissionProgress');

const attempt = z.object({
  attempt: z.number().int(),
  action: z.string(),
  commandId: z.string(),
  outcome: z.enum(['cleared', 'acked', 'refused', 'timed-out', 'cancelled']).nullable(),
  refuseReason: z.string().nullable().optional(),
});

const RemediationProgressSchema = z
  .object({
    kind: z.literal('remediation'),
    phase: z.enum(PROGRESS_PHASES.remediation),
    ...common,
    waitingFor: z
      .object({
        condition: z.string(),
        attempt: z.number().int(),
        action: z.string().nullable(),
        attemptDeadline: time,
        attempts: z.array(attempt),
        ladder: z.array(z.string()),
        queued: z.array(z.string()).openapi({ description: 'other true conditions, remediated after it' }),
      })
      .nullable(),
  })
  .openapi('RemediationProgress');

const stepRecord = z.object({
  step: z
    .string()
    .openapi({ description: 'the step as a plan writes it: drain:2h, run:ACTION, reboot, verify, uncordon' }),
  outcome: z.enum(['done', 'failed', 'cancelled']).nullable(),
  startedAt: time,
  endedAt: time,
  operationId: z.string().optional().openapi({ description: 'the drain a drain step followed' }),
  commandId: z.string().optional().openapi({
    description: 'the command a run, reboot or verify step ran (its output: GET /v1/commands/{id})',
  }),
  reason: z.string().optional().openapi({ description: 'why it failed' }),
});

const MaintenanceProgressSchema = z
  .object({
    kind: z.literal('maintenance'),
    phase: z.enum(PROGRESS_PHASES.maintenance),
    ...common,
    waitingFor: z
      .object({
        step: z
          .number()
          .int()
          .openapi({ description: 'the step it is at (0-based); the number of steps once all are done' }),
        steps: z.array(stepRecord),
        bootIdBefore: z
          .string()
          .nullable()
          .optional()
          .openapi({ description: 'a reboot step: the boot id before it' }),
        healthySince: time
          .optional()
          .openapi({ description: 'a verify step: since when every probe is healthy' }),
        failing: z
          .array(z.object({ type: z.string(), reason: z.string().nullable(), since: z.string() }))
          .optional()
          .openapi({ description: 'a verify step: the probes (conditions) that are not healthy' }),
        stepDeadline: time
          .optional()
          .openapi({ description: "when the current step gives up (a reboot's or a verify's timeout)" }),
        parentOperationId: z
          .string()
          .nullable()
          .optional()
          .openapi({ description: 'the rolling maintenance it belongs to' }),
      })
      .nullable(),
  })
  .openapi('MaintenanceProgress');

const PoolMaintenanceProgressSchema = z
  .object({
    kind: z.literal('pool-maintenance'),
    phase: z.enum(PROGRESS_PHASES['pool-maintenance']),
    ...common,
    waitingFor: z
      .object({
        counts: z.object({
          pending: z.number().int(),
          running: z.number().int(),
          succeeded: z.number().int(),
          failed: z.number().int(),
          cancelled: z.number().int(),
        }),
        atStep: z
          .array(z.number().int())
          .openapi({ description: 'how many nodes run each step of the plan now' }),
        doneStep: z
          .array(z.number().int())
          .openapi({ description: 'how many nodes are done with each step' }),
        steps: z.array(z.string()),
        nodes: z
          .array(
            z.object({
              nodeId: z.string(),
              hostname: z.string().nullable(),
              operationId: z
                .string()
                .nullable()
                .openapi({ description: "the node's maintenance: its steps and their commands" }),
              status: z.enum(['pending', 'running', 'succeeded', 'failed', 'cancelled']),
              step: z.string().nullable(),
              reason: z.string().nullable(),
            }),
          )
          .openapi({
            description: 'the nodes that run or ended, oldest first (up to 200; the counts are exact)',
          }),
        maxConcurrent: z.number().int(),
        maxFailures: z.number().int(),
        failuresSinceResume: z.number().int(),
        paused: z.boolean(),
      })
      .nullable(),
  })
  .openapi('PoolMaintenanceProgress');

/** What an operation is doing, as its record says; its workflow's `progress` query answers the same. */
export const ProgressSchema = z
  .discriminatedUnion('kind', [
    DrainProgressSchema,
    PoolDrainProgressSchema,
    PurgeProgressSchema,
    DecommissionProgressSchema,
    RemediationProgressSchema,
    MaintenanceProgressSchema,
    PoolMaintenanceProgressSchema,
  ])
  .openapi('OperationProgress');
