import { readFileSync, statSync } from 'node:fs';
import { uptime } from 'node:os';
import { UsageError } from './errors';
import type { Boot } from './session';

/** Where Linux says which boot this is: a new random id at every boot. */
export const KERNEL_BOOT_ID = '/proc/sys/kernel/random/boot_id';

/**
 * The machine's boot, read at each session start: the id in `file` (the kernel's by default) and
 * when it booted — from the uptime for the kernel's id, from the file's last change for another
 * (a test or a container that stands in for a reboot by writing a new id).
 */
export function readBoot(file: string = KERNEL_BOOT_ID): Boot {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new UsageError(`--boot-id-file ${file}: cannot read it (${(error as Error).message})`);
  }
  const bootId = text.trim().toLowerCase();
  if (!/^[0-9a-f-]{1,64}$/.test(bootId)) {
    throw new UsageError(
      `--boot-id-file ${file}: ${JSON.stringify(bootId.slice(0, 80))} is not a boot id (hex digits and -)`,
    );
  }
  const bootedAt = file === KERNEL_BOOT_ID ? Date.now() - uptime() * 1000 : statSync(file).mtimeMs;
  return { bootId, bootedAt: new Date(Math.floor(bootedAt)).toISOString() };
}
