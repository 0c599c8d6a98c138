import { sleep } from './backoff';
import type { AgentClient } from './client';
import type { ProbeConfig } from './config';
import { DampedCondition, type ProbeVerdict } from './damping';
import { freeText, MAX_REASON } from './free-text';
import type { Log } from './log';
import { spokenDuration } from '../domain/duration';
import { runArgv, scriptEnv } from './run-argv';

/** One probe and what the agent says of its condition. */
interface Probed {
  name: string;
  probe: ProbeConfig;
  condition: DampedCondition;
  /** A report is on its way (a result coming in meanwhile waits for the next run or a reconnect). */
  sending: boolean;
  /** The last report failed; logged once until one gets through. */
  failing: boolean;
  /** The probe could not start last time; logged once until it does. */
  broken: boolean;
}

export interface ProbesOptions {
  probes: Record<string, ProbeConfig>;
  client: Pick<AgentClient, 'reportCondition'>;
  nodeId: string;
  log: Log;
}

/**
 * The node's health probes (docs/agent/gpu-machine.md): each runs its command every `every`, and
 * its exit status is its condition's — 0 healthy, anything else (or no exit within its timeout) the
 * fault, with the first line of its output as the reason. What changes is reported, clears damped
 * by `healthyAfter` (`DampedCondition`); every condition is reported again after a reconnect. A
 * probe that cannot start says nothing of the machine, so it reports nothing: the agent logs it.
 */
export class Probes {
  private readonly probed: Probed[];

  constructor(private readonly options: ProbesOptions) {
    this.probed = Object.entries(options.probes).map(([name, probe]) => ({
      name,
      probe,
      condition: new DampedCondition(),
      sending: false,
      failing: false,
      broken: false,
    }));
  }

  /** Runs every probe until `signal` aborts. */
  async run(signal: AbortSignal): Promise<void> {
    await Promise.all(this.probed.map((p) => this.loop(p, signal)));
  }

  /** The session reached the API again after failing to: every condition is said again. */
  reconnected(): void {
    for (const p of this.probed) {
      p.condition.resend();
      void this.send(p);
    }
  }

  private async loop(p: Probed, signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      const started = Date.now();
      const verdict = await this.check(p, signal);
      if (verdict) {
        if (p.condition.observe(verdict, Date.now()) === 'clearing') {
          this.options.log(
            'info',
            `probe ${p.name}: healthy; ${p.probe.condition} is reported cleared once it holds for ${spokenDuration(p.condition.clearAfterMs)}`,
            { probe: p.name, condition: p.probe.condition },
          );
        }
        await this.send(p);
      }
      await sleep(Math.max(0, p.probe.everyMs - (Date.now() - started)), signal);
    }
  }

  /** Runs the probe once; null when it could not run (or the agent stopped). */
  private async check(p: Probed, signal: AbortSignal): Promise<ProbeVerdict | null> {
    const result = await runArgv(p.probe.command, {
      env: scriptEnv({ nodeId: this.options.nodeId, condition: p.probe.condition }),
      timeoutMs: p.probe.timeoutMs,
      signal,
    });
    if (result.kind === 'stopped') return null;
    if (result.kind === 'not-started') {
      if (!p.broken) this.options.log('error', `probe ${p.name} could not start: ${result.message}`);
      p.broken = true;
      return null;
    }
    p.broken = false;
    if (result.kind === 'exited' && result.code === 0) return { healthy: true };
    const fallback =
      result.kind === 'timed-out'
        ? `timed out after ${spokenDuration(p.probe.timeoutMs)}`
        : `exit ${result.code ?? result.signal}`;
    const line = firstLine(result.stdout) || firstLine(result.stderr) || fallback;
    return { healthy: false, reason: freeText(line, MAX_REASON, fallback) };
  }

  /** Reports the condition if a report is due; a failure is retried on the next run or reconnect. */
  private async send(p: Probed): Promise<void> {
    const report = p.condition.due();
    if (!report || p.sending) return;
    p.sending = true;
    try {
      const answer = await this.options.client.reportCondition(
        p.probe.condition,
        report.status,
        report.reason,
      );
      p.condition.took(report, answer.healthyAfterSeconds);
      p.failing = false;
      this.options.log(
        'info',
        `probe ${p.name}: reported ${p.probe.condition} ${report.status ? `true: ${report.reason}` : 'cleared'}`,
        { probe: p.name, condition: p.probe.condition, status: report.status },
      );
    } catch (error) {
      if (!p.failing) {
        this.options.log(
          'warn',
          `probe ${p.name}: ${p.probe.condition} not reported (${(error as Error).message}); retrying`,
        );
      }
      p.failing = true;
    } finally {
      p.sending = false;
    }
  }
}

function firstLine(text: string): string {
  return (
    text
      .split('\n')
      .find((line) => line.trim())
      ?.trim() ?? ''
  );
}
