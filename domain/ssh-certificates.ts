/**
 * Break-glass SSH (docs/security.md#break-glass-ssh): short-lived OpenSSH user certificates, each
 * valid on one node only, signed by the cluster's SSH CA.
 */

/** How long a certificate lives when the caller does not say. */
export const DEFAULT_SSH_CERTIFICATE_TTL_MS = 15 * 60_000;
export const MIN_SSH_CERTIFICATE_TTL_MS = 60_000;
export const MAX_SSH_CERTIFICATE_TTL_MS = 60 * 60_000;

/**
 * A certificate is valid from this long before it was issued: a node whose clock lags the API's
 * by up to a minute still takes it at once.
 */
export const SSH_CLOCK_SKEW_MS = 60_000;

/**
 * The one principal a node's sshd accepts: its node id, which the API assigned at join and no agent
 * chooses (a hostname is the agent's word, and two nodes may claim the same one).
 */
export function sshPrincipalOf(nodeId: string): string {
  return `drydock-node:${nodeId}`;
}

/**
 * The certificate's key id, which sshd logs with every login it accepts: who asked, for which
 * node, and why.
 */
export function sshKeyIdOf(input: { actor: string; nodeId: string; reason: string }): string {
  return `${input.actor} for ${input.nodeId}: ${input.reason}`;
}

/**
 * What a certificate permits beyond running a command: a terminal. No agent, port or X11
 * forwarding, and no ~/.ssh/rc: a break-glass login is a shell on the node, not a tunnel.
 */
export const SSH_CERTIFICATE_EXTENSIONS = ['permit-pty'] as const;

/** The user keys a certificate may be issued for, and the smallest RSA modulus taken. */
export const SSH_USER_KEY_TYPES = ['ed25519', 'rsa'] as const;
export const MIN_RSA_BITS = 2048;
