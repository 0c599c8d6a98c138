import type { Schemas } from '@drydock/client';
import type { Child } from 'hono/jsx';
import { NODE_UNREACHABLE } from '../../domain/liveness';
import { isDraining, QUARANTINED } from '../../domain/node';
import { TAINT_PREFIX } from '../../domain/taints';
import { canMove } from '../../domain/provision';
import {
  AccessBadge,
  Badge,
  ConditionBadge,
  CordonBadge,
  DrainingBadge,
  LivenessBadge,
  MaintenanceBadge,
  StatusBadge,
} from '../badge';
import { Csrf, Layout, Table } from '../layout';
import { NodeCommandsSection, type NodeActions, type NodeCommands } from './commands';
import { DangerZone } from './danger';
import { MaintenanceTimeline, stepsOfMaintenance } from './maintenance-timeline';
import { Schedulers } from './node-schedulers';
import { NodeSshSection, type NodeSshCertificates } from './node-ssh';
import { LiveRegion } from '../live';
import { Progress } from '../progress';
import type { Flash, Session } from '../sessions';
import { When } from '../time';
import { mayUse, refusalOf } from '../permissions';

type Node = Schemas['Node'];

export interface NodeView {
  session: Session;
  flash?: Flash;
  node: Node;
  allocations: Schemas['Allocation'][];
  /** Running operations as `GET /v1/operations/{id}` reads them (with `progress`). */
  operations: Schemas['Operation'][];
  /** Its latest maintenance, running or ended, with its progress; undefined when it never had one. */
  maintenance?: Schemas['Operation'];
  commands: NodeCommands;
  actions: NodeActions;
  sshCertificates: NodeSshCertificates;
  events: { items: Schemas['Event'][]; nextCursor: string | null; type?: string };
  /** Opens a workflow in the Temporal UI; undefined when no UI is configured. */
  workflowUrl?: (workflowId: string) => string;
}

export function NodePage(view: NodeView) {
  const { node } = view;
  return (
    <Layout title={node.hostname} session={view.session} flash={view.flash} watch={{ nodeId: node.id }}>
      <h1>
        {node.hostname} <span class="muted">{node.displayName ?? ''}</span>
      </h1>
      <LiveRegion id="summary">
        <p class="muted">
          <code>{node.id}</code> · pool {node.poolId ?? '—'} · tenant {node.tenantId ?? '—'} · site{' '}
          {node.siteId ?? '—'} · version {node.version}
        </p>
      </LiveRegion>
      <LiveRegion id="axes">
        <Badges node={node} />
        <Quarantine node={node} />
        <Axes node={node} />
      </LiveRegion>
      {/* The forms carry the node's version: live, so a change sent after an update is not stale. */}
      <LiveRegion id="controls">
        <Controls node={node} session={view.session} />
      </LiveRegion>
      <h2>Labels</h2>
      <LiveRegion id="labels">
        <Labels node={node} session={view.session} />
      </LiveRegion>
      <h2>Taints</h2>
      <LiveRegion id="taints">
        <Taints node={node} session={view.session} />
      </LiveRegion>
      <h2>Conditions</h2>
      <LiveRegion id="conditions">
        <Conditions node={node} session={view.session} />
      </LiveRegion>
      <h2>Schedulers</h2>
      <LiveRegion id="schedulers">
        <Schedulers schedulers={node.schedulers} allocations={view.allocations} />
      </LiveRegion>
      <h2 id="section-allocations">Live allocations</h2>
      <LiveRegion id="allocations">
        <Table
          columns={['Allocation', 'Tenant', 'Kind', 'Since', 'Ends']}
          items={view.allocations}
          row={(a) => [
            <code>{a.id}</code>,
            a.tenantId,
            a.kind,
            <When at={a.createdAt} />,
            a.endsAt ? <When at={a.endsAt} /> : 'open-ended',
          ]}
          empty="No live allocations."
        />
      </LiveRegion>
      <h2 id="section-operations">Running operations</h2>
      <LiveRegion id="operations" busy={view.operations.length > 0}>
        <Operations operations={view.operations} workflowUrl={view.workflowUrl} />
      </LiveRegion>
      <h2 id="section-maintenance">Maintenance</h2>
      <LiveRegion id="maintenance" busy={isOpen(view.maintenance)}>
        <Maintenance operation={view.maintenance} />
      </LiveRegion>
      <h2 id="section-commands">Commands</h2>
      <LiveRegion id="commands">
        <NodeCommandsSection
          node={node}
          session={view.session}
          actions={view.actions}
          commands={view.commands}
        />
      </LiveRegion>
      <h2 id="section-ssh">Break-glass SSH certificates</h2>
      <LiveRegion id="ssh">
        <NodeSshSection node={node} session={view.session} certificates={view.sshCertificates} />
      </LiveRegion>
      <h2>Events, newest first</h2>
      <LiveRegion id="events">
        <Events node={node} events={view.events} />
      </LiveRegion>
      <LiveRegion id="danger">
        <DangerZone node={node} session={view.session} liveAllocations={view.allocations.length} />
      </LiveRegion>
    </Layout>
  );
}

/** A node whose identity two machines used: what happened and what to do, above everything else. */
function Quarantine(props: { node: Node }) {
  if (!props.node.noScheduleReasons.includes(QUARANTINED)) return null;
  return (
    <div class="flash error" role="alert" data-quarantined>
      <p>
        <strong>Quarantined: this node's identity was in use on two machines at once</strong> (a copied disk,
        image or identity file). Its credentials were revoked; neither machine can call in with it.
      </p>
      <ol>
        <li>
          Find the copy: the <code>security.node.duplicate-session</code> events below name both agent runs,
          and each machine's <code>drydock-agent</code> log names its own. Remove the copy's data directory.
        </li>
        <li>
          Join the real machine again as a new node: <code>drydock-agent join --reset --yes --token …</code>
        </li>
        <li>Delete this node once the new one is in service (Danger zone below).</li>
      </ol>
    </div>
  );
}

/** The node's state at a glance, under its name: liveness, and what keeps work off it. */
function Badges(props: { node: Node }) {
  const { node } = props;
  return (
    <p class="badges" data-badges="">
      <LivenessBadge liveness={node.liveness} />
      {node.access === 'blocked' && <AccessBadge access={node.access} />}
      {node.noScheduleReasons.includes(QUARANTINED) && (
        <Badge tone="bad" data="quarantined">
          quarantined
        </Badge>
      )}
      {node.cordoned && <CordonBadge cordoned />}
      {isDraining(node) && <DrainingBadge />}
      {node.maintenance && <MaintenanceBadge maintenance />}
    </p>
  );
}

function Axes(props: { node: Node }) {
  const { node } = props;
  const axes: [string, Child][] = [
    ['state', node.provisionState],
    ['access', <AccessBadge access={node.access} />],
    ['cordon', <CordonBadge cordoned={node.cordoned} />],
    ['maintenance', <MaintenanceBadge maintenance={node.maintenance} />],
    ['NoSchedule', node.noScheduleReasons.join(', ') || 'none'],
    ['connectivity', node.connectivity],
    ['liveness', <LivenessBadge liveness={node.liveness} />],
    ['last seen', node.lastSeenAt ? <When at={node.lastSeenAt} /> : 'never (no heartbeat yet)'],
    [
      'booted',
      node.bootId ? (
        <>
          {node.bootedAt ? <When at={node.bootedAt} /> : 'at a time not said'} (boot {node.bootId})
        </>
      ) : (
        'not said yet'
      ),
    ],
  ];
  return (
    <div class="axes">
      {axes.map(([name, value]) => (
        <div class="axis" data-axis={name}>
          <span class="name">{name}</span>
          <span class="value">{value}</span>
        </div>
      ))}
    </div>
  );
}

/** The labels with their source; operator labels may be set and removed, the others are read-only. */
function Labels(props: { node: Node; session: Session }) {
  const { node, session } = props;
  const can = allowed(node, session);
  return (
    <>
      <Table
        columns={['Key', 'Value', 'Source', '']}
        items={node.labels}
        row={(label) => [
          <code>{label.key}</code>,
          label.value,
          label.source,
          can.update && label.source === 'operator' && (
            <ControlForm node={node} session={session} control="unlabel" button="Remove" reason={false}>
              <input type="hidden" name="key" value={label.key} />
            </ControlForm>
          ),
        ]}
        empty="No labels."
      />
      {can.update && (
        <div class="controls">
          <ControlForm node={node} session={session} control="label" button="Set label">
            <input name="key" placeholder="key" required maxlength={128} />
            <input name="value" placeholder="value" maxlength={256} />
          </ControlForm>
        </div>
      )}
    </>
  );
}

/**
 * The node's conditions; a true one (but the liveness sweep's `NodeUnreachable`, which a heartbeat
 * clears) may be cleared by hand, with a reason.
 */
function Conditions(props: { node: Node; session: Session }) {
  const { node, session } = props;
  const can = allowed(node, session);
  return (
    <Table
      columns={['Type', 'Status', 'Reason', 'Since', 'Source', '']}
      items={node.conditions}
      row={(condition) => [
        condition.type,
        <ConditionBadge status={condition.status} />,
        condition.reason ?? '—',
        <When at={condition.since} />,
        condition.source ?? 'agent',
        can.remediate && condition.status && condition.type !== NODE_UNREACHABLE && (
          <ControlForm node={node} session={session} control="clear-condition" button="Clear" reason={false}>
            <input type="hidden" name="condition" value={condition.type} />
            <input name="reason" placeholder="reason (required)" required maxlength={256} />
          </ControlForm>
        ),
      ]}
      empty="No conditions reported."
    />
  );
}

/** NoSchedule reasons that are taints (`taint:<key>`), as the API reports them. */
function Taints(props: { node: Node; session: Session }) {
  const { node, session } = props;
  const can = allowed(node, session);
  const taints = node.noScheduleReasons
    .filter((r) => r.startsWith(TAINT_PREFIX))
    .map((r) => r.slice(TAINT_PREFIX.length));
  return (
    <>
      {taints.length === 0 ? (
        <p class="muted">No taints.</p>
      ) : (
        <ul>
          {taints.map((taint) => (
            <li>
              <code>{taint}</code>{' '}
              {can.update && (
                <ControlForm node={node} session={session} control="untaint" button="Remove" reason={false}>
                  <input type="hidden" name="key" value={taint} />
                </ControlForm>
              )}
            </li>
          ))}
        </ul>
      )}
      {can.update && (
        <div class="controls">
          <ControlForm node={node} session={session} control="taint" button="Add taint">
            <input name="key" placeholder="taint key, e.g. rma-pending" required maxlength={128} />
          </ControlForm>
        </div>
      )}
    </>
  );
}

type ActionName = Schemas['Caller']['actions'][number];

/** Which controls this key may use on this node as it is now; none for a deleted or retired node. */
function allowed(node: Node, session: Session) {
  const may = (action: ActionName) => mayUse(node, session, action);
  return {
    refusal: refusalOf(node),
    cordon: may('compute:nodes:cordon'),
    drain: may('compute:nodes:drain'),
    block: may('compute:nodes:block'),
    update: may('compute:nodes:update'),
    provision: may('compute:nodes:provision'),
    revokeIdentity: may('compute:nodes:revoke-identity'),
    remediate: may('compute:nodes:remediate'),
    command: may('compute:nodes:command'),
  };
}

/** A POST form of one control: the CSRF token, the node version it was read at, an optional reason. */
function ControlForm(props: {
  node: Node;
  session: Session;
  control: string;
  button: string;
  reason?: boolean;
  children?: Child;
}) {
  return (
    <form method="post" action={`/console/nodes/${props.node.id}/${props.control}`} class="inline">
      <Csrf session={props.session} />
      <input type="hidden" name="version" value={String(props.node.version)} />
      {props.children}
      {props.reason !== false && <input name="reason" placeholder="reason (optional)" maxlength={256} />}
      <button type="submit">{props.button}</button>
    </form>
  );
}

/** The controls this key may use on this node in its state; each a POST form through the API. */
function Controls(props: { node: Node; session: Session }) {
  const { node, session } = props;
  const can = allowed(node, session);
  if (can.refusal) return <p class="muted">No controls: {can.refusal}.</p>;
  return (
    <>
      {can.cordon && (
        <div class="controls">
          {node.cordoned ? (
            <ControlForm node={node} session={session} control="uncordon" button="Uncordon" />
          ) : (
            <ControlForm node={node} session={session} control="cordon" button="Cordon" />
          )}
        </div>
      )}
      {can.drain && !isDraining(node) && (
        <div class="controls">
          <ControlForm node={node} session={session} control="drain" button="Drain">
            <input
              name="deadline"
              placeholder="deadline (2h, or a time; empty: wait)"
              size={32}
              maxlength={64}
            />
          </ControlForm>
        </div>
      )}
      {can.block && (
        <div class="controls">
          {node.access === 'blocked' ? (
            <ControlForm node={node} session={session} control="unblock" button="Unblock" />
          ) : (
            <ControlForm node={node} session={session} control="block" button="Block" reason={false}>
              <input name="reason" placeholder="reason (required)" required maxlength={256} />
            </ControlForm>
          )}
        </div>
      )}
      {can.update && node.maintenance && (
        <div class="controls">
          <ControlForm node={node} session={session} control="clear-maintenance" button="Clear maintenance" />
        </div>
      )}
      {can.provision && (node.provisionState === 'adopting' || canMove(node.provisionState, 'readopt')) && (
        <div class="controls">
          <ControlForm node={node} session={session} control="adopt" button="Adopt again" />
          <span class="muted">back to adopting; adopted once acceptance passes</span>
        </div>
      )}
      {can.remediate && <Remediate node={node} session={session} />}
      {can.command && node.provisionState === 'adopted' && node.access !== 'blocked' && (
        <div class="controls">
          <form method="get" action={`/console/nodes/${node.id}/reboot`} class="inline">
            <button type="submit">Reboot…</button>
          </form>
          <span class="muted">verified: back on a new boot, probes healthy</span>
        </div>
      )}
      {can.revokeIdentity && (
        <div class="controls">
          <form method="get" action={`/console/nodes/${node.id}/revoke-identity`} class="inline">
            <button type="submit">Revoke identity…</button>
          </form>
        </div>
      )}
    </>
  );
}

/**
 * Remediate one condition: the node's true conditions are offered; another type may be typed (the
 * API records it as operator-reported).
 */
function Remediate(props: { node: Node; session: Session }) {
  const { node, session } = props;
  const conditions = node.conditions
    .filter((condition) => condition.status)
    .map((condition) => condition.type);
  const list = `conditions-${node.id}`;
  return (
    <div class="controls">
      <ControlForm node={node} session={session} control="remediate" button="Remediate">
        <input
          name="condition"
          list={list}
          required
          maxlength={128}
          placeholder={
            conditions[0] ? `condition, e.g. ${conditions[0]}` : 'condition type, e.g. GpuXidError'
          }
          value={conditions.length === 1 ? conditions[0] : undefined}
        />
        <datalist id={list}>
          {conditions.map((type) => (
            <option value={type} />
          ))}
        </datalist>
      </ControlForm>
    </div>
  );
}

function Operations(props: { operations: Schemas['Operation'][]; workflowUrl?: (id: string) => string }) {
  const { workflowUrl } = props;
  return (
    <Table
      columns={['Operation', 'Kind', 'Status', 'Since', 'Progress', 'Workflow']}
      items={props.operations}
      row={(op) => [
        <a href={`/console/operations/${op.id}`}>
          <code>{op.id}</code>
        </a>,
        op.kind,
        <StatusBadge status={op.status} />,
        <When at={op.createdAt} />,
        <Progress operation={op} />,
        workflowUrl ? <a href={workflowUrl(op.workflowId)}>{op.workflowId}</a> : <code>{op.workflowId}</code>,
      ]}
      empty="No running operations."
    />
  );
}

function Events(props: { node: Node; events: NodeView['events'] }) {
  const { node, events } = props;
  const base = `/console/nodes/${node.id}`;
  return (
    <>
      <form method="get" action={base} class="filters">
        <label>
          type prefix
          <input name="type" value={events.type ?? ''} placeholder="node." size={20} />
        </label>
        <button type="submit">Filter</button>
      </form>
      <Table
        columns={['When', 'Type', 'Actor', 'Reason', 'Operation']}
        items={events.items}
        row={(event) => [
          <When at={event.createdAt} />,
          event.type,
          event.actor,
          event.reason ?? '—',
          event.operationId ? <code>{event.operationId}</code> : '—',
        ]}
        empty="No events."
      />
      {events.nextCursor && (
        <p>
          <a
            href={`${base}?${new URLSearchParams({ ...(events.type ? { type: events.type } : {}), cursor: events.nextCursor })}`}
          >
            Older events
          </a>
        </p>
      )}
    </>
  );
}

const isOpen = (op: Schemas['Operation'] | undefined) => op?.status === 'pending' || op?.status === 'running';

/** The node's latest maintenance: what it is at in words, and its steps as a timeline. */
function Maintenance(props: { operation?: Schemas['Operation'] }) {
  const op = props.operation;
  if (!op) return <p class="muted">No maintenance yet.</p>;
  return (
    <>
      <p>
        <a href={`/console/operations/${op.id}`}>
          <code>{op.id}</code>
        </a>{' '}
        <StatusBadge status={op.status} /> · asked by {op.actor} · <When at={op.createdAt} />
        {op.reason ? ` · ${op.reason}` : ''}
      </p>
      <Progress operation={op} />
      <MaintenanceTimeline rows={[{ steps: stepsOfMaintenance(op) }]} />
    </>
  );
}
