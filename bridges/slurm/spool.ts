import { mkdirSync, readdirSync, rmSync, watch } from 'node:fs';
import { join } from 'node:path';

/**
 * Follows the hook's spool directory: slurmctld's PrologSlurmctld and EpilogSlurmctld run
 * bin/drydock-slurm-hook at each job's start and end, which drops a file named for the job there.
 * Each file is a wake-up, not a record (squeue says what runs): `changed` is called, the files
 * removed. Files left while the bridge was down wake it once at start.
 */
export function watchSpool(dir: string, changed: () => void): () => void {
  // Sticky and open to all, as /tmp: slurmctld runs its hooks as SlurmUser, not as the bridge.
  mkdirSync(dir, { recursive: true, mode: 0o1777 });
  const drain = () => {
    const files = readdirSync(dir);
    for (const file of files) rmSync(join(dir, file), { force: true });
    if (files.length > 0) changed();
  };
  const watcher = watch(dir, () => drain());
  drain();
  return () => watcher.close();
}
