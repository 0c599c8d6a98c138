/**
 * A runbook script on @drydock/client: decommission a node for good. It previews (changes
 * nothing), asks for a confirmation, executes with exactly what the preview showed, and follows
 * the operation to its end.
 *
 *   export DRYDOCK_API=https://drydock.example:8080 DRYDOCK_TOKEN=<operator key>
 *   npx tsx decommission.ts NODE_ID --reason "EOL: leaving the fleet" [--operator NAME] [--yes] [--json]
 *
 * Without --yes it asks on a terminal for the node's hostname, and refuses where there is none.
 * --json prints JSON lines on stdout (the preview, then the finished operation); progress and
 * errors go to stderr either way. Exit 0 once the node is decommissioned, 1 when the API refuses
 * (its error message on stderr) or the operation does not succeed, 2 for a wrong command line.
 */
import { randomUUID } from 'node:crypto';
import { userInfo } from 'node:os';
import { createInterface } from 'node:readline/promises';
import { parseArgs } from 'node:util';
import { ApiError, createApiClient, Unreachable, type Schemas } from '@drydock/client';

type Preview = Schemas['DecommissionPreview'];
type Operation = Schemas['Operation'];

const USAGE =
  'usage: decommission.ts NODE_ID --reason TEXT [--operator NAME] [--yes] [--json] [--api URL] [--token SECRET]';

/** A stop the script decides on; `code` is its exit code. */
class Stop extends Error {
  readonly code: number;

  // No parameter properties: plain `node decommission.ts` strips types but transforms nothing.
  constructor(message: string, code = 1) {
    super(message);
    this.code = code;
  }
}

function commandLine() {
  let parsed;
  try {
    parsed = parseArgs({
      allowPositionals: true,
      options: {
        api: { type: 'string' },
        token: { type: 'string' },
        reason: { type: 'string' },
        operator: { type: 'string' },
        yes: { type: 'boolean', default: false },
        json: { type: 'boolean', default: false },
      },
    });
  } catch (error) {
    throw new Stop(`${(error as Error).message}\n${USAGE}`, 2);
  }
  const { values, positionals } = parsed;
  if (positionals.length !== 1) throw new Stop(USAGE, 2);
  if (!values.reason) throw new Stop(`--reason is required (it goes on the audit event)\n${USAGE}`, 2);
  return {
    nodeId: positionals[0]!,
    reason: values.reason,
    operator: values.operator ?? userInfo().username,
    yes: values.yes,
    json: values.json,
    // The same variables and default as the drydock CLI.
    api: values.api ?? process.env.DRYDOCK_API ?? 'http://localhost:8080',
    token: values.token ?? process.env.DRYDOCK_TOKEN,
  };
}

async function main(): Promise<void> {
  const args = commandLine();
  const api = createApiClient({ baseUrl: args.api, token: args.token, timeoutMs: 30_000 });
  const id = args.nodeId;

  const preview = await api.POST('/v1/nodes/{id}/decommission/preview', { params: { path: { id } } });
  print(args.json ? JSON.stringify(preview) : previewText(preview));
  if (!preview.ready) {
    throw new Stop('not ready: resolve the blockers above, then run this again');
  }

  const body = {
    confirm: await confirmation(preview, args.yes),
    nodeGeneration: preview.nodeGeneration,
    dependencyDigest: preview.dependencyDigest,
    operator: args.operator,
    reason: args.reason,
  };
  // One key for this decommission: a resent request that had arrived after all is answered with
  // the operation it started, never with a second one.
  const key = randomUUID();
  let op = await resentWhileUnanswered(() =>
    api.POST('/v1/nodes/{id}/decommission', {
      params: { path: { id }, header: { 'idempotency-key': key } },
      body,
    }),
  );

  let shown = '';
  while (op.status === 'pending' || op.status === 'running') {
    const line = `${op.kind} ${op.id} ${op.status}: ${progressOf(op)}`;
    if (line !== shown) note((shown = line));
    await sleep(1_000);
    op = await api.GET('/v1/operations/{id}', { params: { path: { id: op.id } } });
  }
  print(args.json ? JSON.stringify(op) : `${op.kind} ${op.id} ${op.status} at ${op.completedAt}`);
  if (op.status !== 'succeeded')
    throw new Stop(`${op.kind} ${op.id} ${op.status}: ${JSON.stringify(op.error)}`);
}

/** The identity the execute presents: the node id given with --yes, else what the operator types. */
async function confirmation(preview: Preview, yes: boolean): Promise<string> {
  if (yes) return preview.nodeId;
  if (!process.stdin.isTTY) throw new Stop('not confirmed: pass --yes (there is no terminal to ask on)');
  const prompt = createInterface({ input: process.stdin, output: process.stderr });
  const typed = await prompt
    .question(`Type ${preview.hostname} to decommission it for good (there is no undo): `)
    .finally(() => prompt.close());
  if (!preview.confirmationIdentities.includes(typed.trim())) {
    throw new Stop(`not confirmed: '${typed.trim()}' is not ${preview.confirmationIdentities.join(', ')}`);
  }
  return typed.trim();
}

/** Sends a call again, up to 3 times, while no answer comes; an answer, error or not, is final. */
async function resentWhileUnanswered<T>(send: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await send();
    } catch (error) {
      if (!(error instanceof Unreachable) || attempt === 3) throw error;
      note(`${error.message}; sending the same request again`);
      await sleep(attempt * 1_000);
    }
  }
}

function previewText(p: Preview): string {
  const counts = (list: { kind: string; count: number }[]) =>
    list.map((c) => `${c.kind} ${c.count}`).join(', ');
  return [
    `Node        ${p.nodeId} ${p.hostname}${p.displayName ? ` "${p.displayName}"` : ''}`,
    `Confirm as  ${p.confirmationIdentities.join(', ')}`,
    `Generation  ${p.nodeGeneration}`,
    `Digest      ${p.dependencyDigest}`,
    `Ready       ${p.ready ? 'yes' : `no: ${p.blockers.length} blocker(s)`}`,
    ...p.blockers.map((b) => `  blocker   ${b.kind} ${b.id}: ${b.message}`),
    `Cleans up   ${counts(p.cleanup)}`,
    `Keeps       ${counts(p.retained)}`,
  ].join('\n');
}

/** The workflow's answer to its `progress` query, which the API types per operation kind as `unknown`. */
function progressOf(op: Operation): string {
  const progress = op.progress;
  if (!progress) return 'starting';
  const step = progress.kind === 'decommission' ? progress.waitingFor?.step : null;
  return step ? `${progress.phase} (${step})` : progress.phase;
}

const print = (text: string) => process.stdout.write(`${text}\n`);
const note = (text: string) => process.stderr.write(`${text}\n`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

main().catch((error: unknown) => {
  if (error instanceof ApiError) {
    note(`error: ${error.code}: ${error.message}${error.requestId ? ` (request ${error.requestId})` : ''}`);
    if (error.code === 'CONFLICT' || error.code === 'INVALID_STATE') note('preview again: run this again');
  } else if (error instanceof Stop || error instanceof Unreachable) {
    note(`error: ${error.message}`);
  } else {
    throw error;
  }
  process.exitCode = error instanceof Stop ? error.code : 1;
});
