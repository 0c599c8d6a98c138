import type { Schemas } from '@drydock/client';
import { Csrf, Table } from '../layout';
import { mayUse } from '../permissions';
import type { Session } from '../sessions';
import { When } from '../time';

type SshCertificate = Schemas['SshCertificate'];

/** The node's recent break-glass SSH certificates, or why they cannot be shown to this key. */
export type NodeSshCertificates = { items: SshCertificate[] } | { problem: string };

/**
 * Break-glass SSH certificates issued for the node (docs/security.md#break-glass-ssh): who, why,
 * until when; a live one can be revoked, behind a ticked box and a reason.
 */
export function NodeSshSection(props: {
  node: Schemas['Node'];
  session: Session;
  certificates: NodeSshCertificates;
}) {
  const { node, session, certificates } = props;
  if ('problem' in certificates) return <p class="muted">{certificates.problem}</p>;
  const mayRevoke = mayUse(node, session, 'compute:nodes:ssh-root');
  const now = Date.now();
  return (
    <Table
      columns={['Serial', 'Issued by', 'Why', 'Valid until', 'Revoked', '']}
      items={certificates.items}
      row={(cert) => [
        <code>{cert.serial}</code>,
        cert.issuedBy,
        cert.reason,
        <When at={cert.validBefore} />,
        cert.revokedAt ? (
          <>
            <When at={cert.revokedAt} /> by {cert.revokedBy}: {cert.revokedReason}
          </>
        ) : (
          '—'
        ),
        mayRevoke && !cert.revokedAt && Date.parse(cert.validBefore) > now ? (
          <form method="post" action={`/console/nodes/${node.id}/ssh-certificates/${cert.serial}/revoke`}>
            <Csrf session={session} />
            <input name="reason" required maxlength={256} placeholder="why" />
            <label class="check">
              <input type="checkbox" name="confirm" value="yes" required /> revoke it
            </label>
            <button type="submit">Revoke</button>
          </form>
        ) : (
          ''
        ),
      ]}
      empty="No SSH certificates issued for this node."
    />
  );
}
