import type { Log } from './benchmark';

/**
 * What a benchmark started, stopped in reverse order: workers before connections, connections
 * before the database is dropped, the database before the servers stop. Every step runs even when
 * one before it fails; running it twice (an interrupt during a normal finish) runs it once.
 */
export class Teardown {
  private readonly steps: { name: string; stop: () => Promise<unknown> | unknown }[] = [];
  private running: Promise<boolean> | null = null;

  constructor(private readonly log: Log) {}

  add(name: string, stop: () => Promise<unknown> | unknown): void {
    this.steps.push({ name, stop });
  }

  /** Resolves to true when every step succeeded. */
  run(): Promise<boolean> {
    this.running ??= (async () => {
      let ok = true;
      for (const step of this.steps.reverse()) {
        try {
          await step.stop();
        } catch (error) {
          ok = false;
          this.log(`teardown: ${step.name} failed: ${(error as Error).message}`);
        }
      }
      return ok;
    })();
    return this.running;
  }

  /** Ctrl-C tears down what was started (databases dropped, servers stopped) before exiting. */
  onInterrupt(): () => void {
    const handler = () => {
      this.log('interrupted: tearing down');
      void this.run().finally(() => process.exit(130));
    };
    process.once('SIGINT', handler);
    process.once('SIGTERM', handler);
    return () => {
      process.off('SIGINT', handler);
      process.off('SIGTERM', handler);
    };
  }
}
