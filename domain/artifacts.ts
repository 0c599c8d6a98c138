import type { ProvisionState } from './provision';

/**
 * Artifact copies: where the storage layer says a copy of an artifact (model weights, a dataset,
 * an image) lives, one live copy per node and artifact. A node holding the only copy of an
 * artifact cannot be decommissioned (domain/decommission.ts).
 */

/**
 * An artifact's id, as the storage layer names it (`llama-3.1-70b`, `sha256:9f86d0…`): 1–128 of
 * letters, digits and `. _ : -`, starting with a letter or digit. It is a path segment of the
 * API, so it is never `.` or `..` and needs no percent-encoding.
 */
export const ARTIFACT_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

/**
 * The longest path a copy is recorded at, in UTF-16 code units: at most 1,536 bytes of UTF-8, so
 * a copy's place (artifact, node, path) always fits its unique index's entry.
 */
export const MAX_ARTIFACT_PATH = 512;

/**
 * What makes `path` no place for a copy, or null when it is one: an absolute POSIX path, its
 * segments neither empty (`//`, a trailing `/`) nor `.` or `..`, so one place has one spelling.
 * It is free text besides (domain/text.ts `textFault`) of at most `MAX_ARTIFACT_PATH` characters,
 * which the API checks first.
 */
export function artifactPathFault(path: string): string | null {
  if (!path.startsWith('/')) return 'must be an absolute path, starting with /';
  const segments = path.slice(1).split('/');
  if (segments.some((s) => s === '')) return 'must have no empty segment (// or a trailing /)';
  if (segments.some((s) => s === '.' || s === '..')) return 'must have no . or .. segment';
  return null;
}

/**
 * Nodes on their way out, or turned away: they take no new copy, and a copy recorded on one (or on
 * a deleted node) is no copy another node's decommission may count on, since its data goes with
 * it. A copy on a node in any other state (offline, unreachable, lost, in maintenance) still
 * counts: nothing is released by silence.
 */
export const COPYLESS_STATES = [
  'rejected',
  'purging',
  'decommissioning',
  'decommissioned',
] as const satisfies readonly ProvisionState[];

/** Why the node takes no new copy, or null when it does. */
export function copyRefusal(node: { provisionState: ProvisionState; deletedAt: Date | null }): string | null {
  if (node.deletedAt !== null) return 'the node is deleted';
  if ((COPYLESS_STATES as readonly ProvisionState[]).includes(node.provisionState)) {
    return `the node is ${node.provisionState}`;
  }
  return null;
}
