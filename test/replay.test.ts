import { readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { Worker } from '@temporalio/worker';
import { describe, expect, inject, it } from 'vitest';
import { HISTORIES_DIR } from './support/histories';

// Histories recorded from real runs (RECORD_HISTORIES=1 npx vitest run test/drain.test.ts).
// A workflow change that would break workflows already running fails here.
const files = readdirSync(HISTORIES_DIR).filter((f) => f.endsWith('.json'));

describe('replay of recorded histories', () => {
  it('has recorded histories to replay', () => {
    expect(files).toEqual(
      expect.arrayContaining([
        'drain-released.json',
        'drain-cancelled.json',
        'drain-forced-release.json',
        'drain-waited-for-budget.json',
        'liveness-sweep.json',
        'decommission.json',
        'purge.json',
        'remediation.json',
        'drain-deleted.json',
        'purge-deleted.json',
        'pool-drain.json',
        'drain-child.json',
        // A child drain recorded before children were followed by their result: it signals its parent.
        'drain-child-signalled.json',
        // A purge that waited long: its first run continued as new; the run it continued as, purged.
        'purge-continued-as-new.json',
        'purge-continued.json',
        // A remediation whose refused rung climbed to the next, which cleared it.
        'remediation-climb.json',
        // A remediation that ended with another condition waiting and continued as new for it,
        // and the run that began that one itself.
        'remediation-continued.json',
        'remediation-queued.json',
        // A remediation that a begin reached as it ended: it continued as new for that operation.
        'remediation-late-begin.json',
      ]),
    );
  });

  it.each(files)('replays %s without nondeterminism', async (file) => {
    const history = historyFromJSON(JSON.parse(readFileSync(resolve(HISTORIES_DIR, file), 'utf8')));
    await Worker.runReplayHistory(
      { workflowBundle: { codePath: inject('workflowBundlePath') } },
      history,
      file,
    );
  });
});
