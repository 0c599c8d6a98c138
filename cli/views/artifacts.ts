import type { Schemas } from '@drydock/client';
import { table } from '../output';

export type ArtifactCopy = Schemas['ArtifactCopy'];

export function artifactCopiesTable(copies: readonly ArtifactCopy[]): string {
  return table(
    ['ARTIFACT', 'NODE', 'PATH', 'RECORDED'],
    copies.map((c) => [c.artifactId, c.nodeId, c.path, c.createdAt]),
  );
}
