import { mkdirSync, readdirSync, rmSync, watch, type FSWatcher } from 'node:fs';
import { join } from 'node:path';

/**
 * Follows the hook's spool directory: slurmctld's PrologSlurmctld and EpilogSlurmctld run
 * bin/drydock-slurm-hook at each job's start and end, which drops a file named for the job there.
 * Each file is a wake-up, not a record (the directory is open to all; squeue says what runs):
 * `changed` is called with the names, the files removed. Files left while the bridge was down are
 * handed over at start. The directory gone or unreadable: `failed`, once, and no more wake-ups.
 */
export function watchSpool(
  dir: string,
  changed: (files: string[]) => void,
  failed: (error: Error) => void,
): () => void {
  // Sticky and open to all, as /tmp: slurmctld runs its hooks as SlurmUser, not as the bridge.
  mkdirSync(dir, { recursive: true, mode: 0o1777 });
  let watcher: FSWatcher | null = null;
  const fail = (error: Error) => {
    if (!watcher) return;
    watcher.close();
    watcher = null;
    failed(error);
  };
  const drain = () => {
    try {
      const files = readdirSync(dir);
      for (const file of files) rmSync(join(dir, file), { force: true });
      if (files.length > 0) changed(files);
    } catch (error) {
      fail(error as Error);
    }
  };
  watcher = watch(dir, () => drain());
  watcher.on('error', fail);
  drain();
  return () => {
    watcher?.close();
    watcher = null;
  };
}
