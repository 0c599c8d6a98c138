import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Client } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';

export const HISTORIES_DIR = resolve(import.meta.dirname, '..', 'histories');

/**
 * With RECORD_HISTORIES=1, saves a finished workflow's history (its latest run, or run `runId`)
 * under test/histories/ for the replay test. Recording is a deliberate act (after a workflow change
 * that is meant to break replay).
 */
export async function recordHistory(
  client: Client,
  workflowId: string,
  name: string,
  runId?: string,
): Promise<void> {
  if (process.env.RECORD_HISTORIES !== '1') return;
  const history = await client.workflow.getHandle(workflowId, runId).fetchHistory();
  writeFileSync(resolve(HISTORIES_DIR, `${name}.json`), historyToJSON(history));
}
