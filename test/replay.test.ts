import { readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { Worker } from '@temporalio/worker';
import { describe, expect, inject, it } from 'vitest';
import { HISTORIES_DIR } from './support/histories';

// Histories recorded from real runs (RECORD_HISTORIES=1 npx vitest run <the tests that record them>).
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
        'drain-deleted.json',
        'liveness-sweep.json',
        'decommission.json',
        'purge.json',
        'purge-deleted.json',
        // A purge that waited long: its first run continued as new; the run it continued as, purged.
        'purge-continued-as-new.json',
        'purge-continued.json',
        'remediation.json',
        // A remediation whose refused rung climbed to the next, which cleared it.
        'remediation-climb.json',
        // A remediation that ended with another condition queued behind it.
        'remediation-queued.json',
        // A pool drain whose nodes drained, were refused or were cancelled.
        'pool-drain.json',
        // A pool drain of the shape that looked every 10 s (two of its looks a timer's): a run
        // begun before the change still replays; and one whose nodes waited for the budget.
        'pool-drain-polled.json',
        'pool-drain-waited-for-budget.json',
        // A verified reboot: drain, reboot, back on a new boot id, verify, uncordon.
        'maintenance-reboot.json',
        // A rolling maintenance paused at its maxFailures, resumed, ended failed.
        'pool-maintenance-paused.json',
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
