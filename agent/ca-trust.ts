import { caFingerprint, followCaOffer } from '../domain/signing';
import type { OfferedCa } from './client';
import type { Log } from './log';

/**
 * The cluster CA key a node checks signed commands against: the join's, or one it rotated to
 * since. A rotation the API offers is followed only when the key this node trusts endorses the new
 * one (domain/signing.ts): stored first, then used. Anything else is refused and the node keeps its
 * key: an API answer alone — without a signature by a CA key the node trusts — moves nothing.
 */
export class CaTrust {
  private key: string;
  /** The last offer refused, so that a refusal is logged once, not on every heartbeat. */
  private refusedOffer: string | null = null;

  constructor(
    private readonly identity: { caPublicKey: string; clusterId: string },
    /** Stores a key rotated to; throws when it cannot, and the node keeps trusting the key it has. */
    private readonly persist: ((caPublicKey: string) => void) | undefined,
    private readonly log: Log,
  ) {
    this.key = identity.caPublicKey;
  }

  get publicKey(): string {
    return this.key;
  }

  /** Follows the offer of one answer (undefined: the answer offered none). */
  follow(offer: OfferedCa): void {
    if (offer === undefined) return;
    const verdict = offer
      ? followCaOffer(this.key, offer, this.identity.clusterId)
      : ({ ok: false, reason: 'a malformed CA offer' } as const);
    if (verdict.ok && !verdict.changed) return;
    if (!verdict.ok) {
      const key = offer?.publicKey ?? 'malformed';
      if (this.refusedOffer === key) return;
      this.refusedOffer = key;
      this.log('warn', `CA key not followed: ${verdict.reason}; still trusting ${caFingerprint(this.key)}`);
      return;
    }
    try {
      this.persist?.(verdict.publicKey);
    } catch (error) {
      this.log(
        'error',
        `CA key rotation not stored (${(error as Error).message}); retrying on the next answer`,
      );
      return;
    }
    this.key = verdict.publicKey;
    this.refusedOffer = null;
    this.log('info', `the cluster CA key rotated: trusting ${caFingerprint(verdict.publicKey)} from now on`);
  }
}
