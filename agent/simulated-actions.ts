import { randomUUID } from 'node:crypto';
import { sleep } from './backoff';
import type { AgentFacts } from './client';
import type { ActionRunner, PreparedRun } from './run-commands';
import type { Boot } from './session';

/** An action a simulated machine runs: what it prints, how long it takes, whether it restarts it. */
export interface SimulatedAction {
  /** Its stdout; `{name}` stands for parameter `name`'s value. */
  stdout?: string;
  params?: Record<string, { pattern: string; default?: string }>;
  /** How long it runs (default: at once). */
  takesMs?: number;
  /** It restarts the machine: the agent falls silent, and comes back after `rebootMs` on a new boot. */
  restarts?: boolean;
}

/** How a simulated action ends: as configured, or failing (exit 1) as told (`Simulator.actionOutcomes`). */
export type ActionOutcome = 'succeed' | 'fail';

/** The actions every simulated machine runs unless told otherwise: the demo fleet's maintenance window. */
export const SIMULATED_ACTIONS: Record<string, SimulatedAction> = {
  diagnostics: {
    stdout:
      'GPU 00000000:18:00.0\n    Product Name: NVIDIA H100 80GB HBM3 (simulated)\n    Temperature: 41 C\n    Xid errors: 0\nall GPUs healthy\n',
    takesMs: 200,
  },
  logs: {
    stdout: '-- simulated journal since {since} --\nkernel: NVRM: loading NVIDIA UNIX x86_64 Kernel Module\n',
    params: { since: { pattern: '[0-9]+[smhd]', default: '1h' } },
  },
  'driver-upgrade': {
    stdout: 'Setting up nvidia-driver-{version} (simulated) ...\nthe new driver is active after a reboot\n',
    params: { version: { pattern: '[0-9]{3}(-server|-open)?', default: '570' } },
    takesMs: 1_000,
  },
  acceptance: { stdout: 'burn-in passed (simulated)\n', takesMs: 200 },
  reboot: { restarts: true },
};

/** A simulated machine's boot, which a simulated reboot replaces. */
export class SimulatedBoot {
  private current: Boot = { bootId: randomUUID(), bootedAt: new Date().toISOString() };

  get(): Boot {
    return this.current;
  }

  /** The machine started again: a new boot id, booted now. */
  renew(): void {
    this.current = { bootId: randomUUID(), bootedAt: new Date().toISOString() };
  }
}

/**
 * The `run` commands of one simulated machine: `actions` as configured, each ending as `outcome`
 * says at the time it runs (`fail`: exit 1 with a simulated error). A restarting action calls
 * `restart` once it went through, which takes the machine away for its reboot.
 */
export function simulatedActions(
  actions: Record<string, SimulatedAction>,
  outcome: (action: string) => ActionOutcome,
  restart: () => void,
): ActionRunner {
  return {
    describe: (): AgentFacts['actions'] =>
      Object.entries(actions).map(([name, action]) => ({
        name,
        params: action.params ?? {},
        timeoutSeconds: Math.max(1, Math.ceil((action.takesMs ?? 0) / 1000) + 60),
        restarts: action.restarts ?? false,
      })),
    prepare: (command): PreparedRun => {
      const name = command.action ?? '';
      const action = Object.hasOwn(actions, name) ? actions[name] : undefined;
      if (!action) {
        return {
          refuse: `no action ${name} is configured on this node (configured: ${Object.keys(actions).join(', ')})`,
        };
      }
      const params = action.params ?? {};
      const values: Record<string, string> = {};
      for (const [param, declared] of Object.entries(params)) {
        const value = command.args?.[param] ?? declared.default;
        if (value === undefined) return { refuse: `action ${name} needs a value for ${param}` };
        if (!new RegExp(`^(?:${declared.pattern})$`).test(value)) {
          return {
            refuse: `${param}=${JSON.stringify(value)} does not match the pattern ${declared.pattern} of action ${name}`,
          };
        }
        values[param] = value;
      }
      return {
        restarts: action.restarts ?? false,
        run: async (context) => {
          await sleep(action.takesMs ?? 0, context.signal);
          if (context.signal.aborted) return { status: 'stopped' };
          if (outcome(name) === 'fail') {
            return {
              status: 'failed',
              exitCode: 1,
              reason: `${name} exited 1`,
              output: { stdout: '', stderr: base64(`${name}: failed (simulated)\n`), droppedBytes: 0 },
            };
          }
          if (action.restarts) {
            restart();
            return { status: 'restarting' };
          }
          const stdout = (action.stdout ?? '').replace(
            /\{([a-z][a-z0-9-]*)\}/g,
            (_, p: string) => values[p] ?? '',
          );
          return {
            status: 'succeeded',
            exitCode: 0,
            output: { stdout: base64(stdout), stderr: '', droppedBytes: 0 },
          };
        },
      };
    },
  };
}

const base64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');
