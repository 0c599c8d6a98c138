import { ApiError } from '@drydock/client';
import { sleep } from './backoff';
import type { AgentClient } from './client';
import type { DiscoveryConfig } from './config';
import { parseInventory, type Inventory } from './inventory';
import type { Log } from './log';
import { spokenDuration } from '../domain/duration';
import { runArgv, scriptEnv } from './run-argv';

/**
 * The machine's inventory, discovered: the configured command (docs/agent/gpu-machine.md#discovery)
 * runs at the start of each session and every `everyMs`, prints the inventory as JSON, and the
 * agent reports it (`PUT /v1/agent/inventory`) when it is not what the API last took from this
 * session — at the session's start always, then only on change. A run that fails, prints no
 * valid inventory or cannot be reported is logged (once in a row) and tried again at the next run.
 */
export class Discovery {
  private reported: string | null = null;
  private lastProblem: string | null = null;

  constructor(
    private readonly options: { config: DiscoveryConfig; client: AgentClient; nodeId: string; log: Log },
  ) {}

  /** Runs until `signal` aborts (the session stops or pauses). */
  async run(signal: AbortSignal): Promise<void> {
    this.reported = null;
    while (!signal.aborted) {
      const started = Date.now();
      await this.once(signal);
      await sleep(Math.max(0, this.options.config.everyMs - (Date.now() - started)), signal);
    }
  }

  private async once(signal: AbortSignal): Promise<void> {
    const { config, client, log } = this.options;
    const result = await runArgv(config.command, {
      env: scriptEnv({ nodeId: this.options.nodeId }),
      timeoutMs: config.timeoutMs,
      signal,
    });
    if (result.kind === 'stopped') return;
    let inventory: Inventory;
    try {
      if (result.kind === 'not-started') throw new Error(`could not start: ${result.message}`);
      if (result.kind === 'timed-out') throw new Error(`timed out after ${spokenDuration(config.timeoutMs)}`);
      if (result.code !== 0) {
        throw new Error(
          `exited ${result.code ?? result.signal}: ${result.stderr.trim().split('\n').at(-1) ?? ''}`,
        );
      }
      inventory = parseInventory(result.stdout, 'its output');
    } catch (error) {
      this.problem(`inventory discovery ${config.command[0]}: ${(error as Error).message}`);
      return;
    }
    const said = JSON.stringify(inventory);
    if (said === this.reported) return;
    try {
      const answer = await client.reportInventory(inventory, signal);
      this.reported = said;
      this.lastProblem = null;
      if (answer.changed) log('info', 'inventory reported: it changed', { labels: answer.labels });
    } catch (error) {
      if (signal.aborted) return;
      const message = error instanceof ApiError ? error.message : (error as Error).message;
      this.problem(`inventory not reported: ${message}`);
    }
  }

  private problem(message: string): void {
    if (message !== this.lastProblem) this.options.log('error', message);
    this.lastProblem = message;
  }
}
