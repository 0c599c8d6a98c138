import { execFile } from 'node:child_process';

export interface Exit {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs `node ARGS` to its end with exactly `env` (nothing of the test's own environment leaks in,
 * so an unset variable is really unset) and resolves to how it ended.
 */
export function runNode(args: readonly string[], env: NodeJS.ProcessEnv, timeoutMs = 60_000): Promise<Exit> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      args,
      { env: { PATH: process.env.PATH, ...env }, timeout: timeoutMs },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}
