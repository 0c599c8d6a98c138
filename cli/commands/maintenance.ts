import { parseStep, stepText, type MaintenanceStep } from '../../domain/maintenance';
import { defineCommand, type Command } from '../command';
import { nodeName } from '../views/nodes';
import { reportFinished, waitForOperation } from '../wait';
import { deadlineFlag, idempotencyKeyFlag, reasonFlag, timeoutFlag, waitFlag } from './flags';

/**
 * A node's maintenance (docs/lifecycle/maintenance.md): a plan of steps, or the verified reboot;
 * with --wait, followed step by step to its end.
 */

const durationFlag = (help: string) => ({ type: 'duration', value: 'DURATION', help }) as const;

const timeoutFlags = {
  'reboot-timeout': durationFlag('how long the node may take to come back on a new boot id (default 15m)'),
  'healthy-after': durationFlag('how long every probe must hold healthy to verify (default 60s)'),
  'verify-timeout': durationFlag('how long verify waits for the probes to hold (default 10m)'),
};

/** The timeouts a request carries, as the API writes durations. */
function timeoutsOf(flags: {
  'reboot-timeout'?: number;
  'healthy-after'?: number;
  'verify-timeout'?: number;
}) {
  const text = (ms: number | undefined) => (ms === undefined ? undefined : `${Math.round(ms / 1000)}s`);
  return {
    rebootTimeout: text(flags['reboot-timeout']),
    healthyAfter: text(flags['healthy-after']),
    verifyTimeout: text(flags['verify-timeout']),
  };
}

/** `--step S`, repeatable: a plan's steps in order. */
export const stepFlag = {
  type: 'list',
  value: 'STEP',
  maxItems: 16,
  repeatable: true,
  whole: true,
  required: true,
  help: 'a step, in order (repeat): drain[:DEADLINE], run:ACTION[:K=V,…], reboot, verify[:ACTION], uncordon',
  checkItem: (item: string) =>
    parseStep(item)
      ? undefined
      : 'must be drain[:DEADLINE], run:ACTION[:K=V,…], reboot, verify[:ACTION] or uncordon',
} as const;

/** The steps of `--step` flags (each checked by the parser already). */
export const stepsOf = (items: readonly string[]): MaintenanceStep[] => items.map((item) => parseStep(item)!);

const maintain = defineCommand({
  words: ['nodes', 'maintain'],
  summary: 'Carry out a maintenance plan on a node: drain, run actions, reboot, verify, uncordon',
  operands: [{ name: 'NODE', type: 'node' }],
  flags: {
    step: stepFlag,
    reason: { ...reasonFlag, required: true },
    ...timeoutFlags,
    'idempotency-key': idempotencyKeyFlag,
    wait: waitFlag,
    timeout: timeoutFlag,
  },
  async run({ api, out, args, flags }) {
    const steps = stepsOf(flags.step);
    const { node, operation } = await api.POST('/v1/nodes/{id}/maintenances', {
      params: { path: { id: args.NODE }, header: { 'idempotency-key': flags['idempotency-key'] } },
      body: { steps, reason: flags.reason, ...timeoutsOf(flags) },
    });
    const said = `${nodeName(node)}: maintenance ${operation.id} (${steps.map(stepText).join(' → ')}) ${operation.status}`;
    if (!flags.wait) return void out.result({ node, operation }, () => said);
    if (!out.json) out.note(`${said}; waiting`);
    return reportFinished(out, await waitForOperation(api, out, operation, flags.timeout, undefined, true));
  },
});

const reboot = defineCommand({
  words: ['nodes', 'reboot'],
  summary: 'A verified reboot: (drain), reboot, back on a new boot id, probes healthy, (uncordon)',
  operands: [{ name: 'NODE', type: 'node' }],
  flags: {
    reason: { ...reasonFlag, required: true },
    drain: { type: 'boolean', help: 'drain the node first' },
    deadline: { ...deadlineFlag('with --drain: when what is still live goes by force'), requires: 'drain' },
    uncordon: { type: 'boolean', help: 'uncordon the node once it is back and healthy' },
    ...timeoutFlags,
    'idempotency-key': idempotencyKeyFlag,
    wait: waitFlag,
    timeout: timeoutFlag,
  },
  async run({ api, out, args, flags }) {
    const { node, operation } = await api.POST('/v1/nodes/{id}/reboot', {
      params: { path: { id: args.NODE }, header: { 'idempotency-key': flags['idempotency-key'] } },
      body: {
        reason: flags.reason,
        ...(flags.drain ? { drain: flags.deadline ? { deadline: flags.deadline } : {} } : {}),
        ...(flags.uncordon ? { uncordon: true } : {}),
        ...timeoutsOf(flags),
      },
    });
    const said = `${nodeName(node)}: reboot ${operation.id} ${operation.status}`;
    if (!flags.wait) return void out.result({ node, operation }, () => said);
    if (!out.json) out.note(`${said}; waiting`);
    return reportFinished(out, await waitForOperation(api, out, operation, flags.timeout, undefined, true));
  },
});

export const maintenanceCommands: Command[] = [maintain, reboot];
