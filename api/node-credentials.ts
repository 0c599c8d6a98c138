import { hashSecret } from '../domain/secrets';
import type { Db } from '../db/client';
import { nodeOfCredential } from '../db/identity';
import type { NodeRow } from '../db/nodes';
import type { NodeWakeups } from './node-events';

/** How long a resolved node credential is trusted without asking Postgres again. */
const CACHE_MS = 500;

type Resolved = { credentialId: string; node: NodeRow } | null;

/**
 * Resolves agent credentials to their node. Agents call often (heartbeats, long-polls), so an
 * answer is kept for half a second, and forgotten at once when the node is woken (block, revoke,
 * delete — by any API process): a revoked credential is refused well within the one second of the spec.
 */
export class NodeCredentials {
  private readonly cache = new Map<string, { at: number; value: Resolved }>();
  private readonly hashesByNode = new Map<string, Set<string>>();

  constructor(
    private readonly db: Db,
    wakeups: NodeWakeups,
  ) {
    wakeups.onWake((nodeId) => this.forgetNode(nodeId));
  }

  async resolve(secret: string): Promise<Resolved> {
    const hash = hashSecret(secret);
    const hit = this.cache.get(hash);
    if (hit && Date.now() - hit.at < CACHE_MS) return hit.value;
    const row = await nodeOfCredential(this.db, secret);
    const value: Resolved = row ? { credentialId: row.credentialId, node: row.node } : null;
    this.cache.set(hash, { at: Date.now(), value });
    if (value) {
      let hashes = this.hashesByNode.get(value.node.id);
      if (!hashes) this.hashesByNode.set(value.node.id, (hashes = new Set()));
      hashes.add(hash);
    }
    if (this.cache.size > 100_000) this.cache.clear();
    return value;
  }

  private forgetNode(nodeId: string): void {
    for (const hash of this.hashesByNode.get(nodeId) ?? []) this.cache.delete(hash);
    this.hashesByNode.delete(nodeId);
  }
}
