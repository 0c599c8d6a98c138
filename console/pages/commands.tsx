import { randomUUID } from 'node:crypto';
import type { Schemas } from '@drydock/client';
import { CONSOLE_PATH } from '../context';
import { Csrf, Layout, Table } from '../layout';
import { LiveRegion } from '../live';
import { MachineText } from '../output';
import { mayUse } from '../permissions';
import type { Flash, Session } from '../sessions';
import { StatusBadge } from '../badge';
import { When } from '../time';

type Node = Schemas['Node'];
type Command = Schemas['NodeCommand'];
type Action = Schemas['NodeAction'];

/** `GET /v1/nodes/{id}/actions`, or the API's refusal of it (a key that is not the node's owner). */
export type NodeActions = { items: Action[]; reportedAt: string | null } | { problem: string };
/** `GET /v1/nodes/{id}/commands`, or the API's refusal of it. */
export type NodeCommands = { items: Command[]; nextCursor: string | null } | { problem: string };

/** Whether this key may run, read and cancel commands at all (the API decides for each node). */
export function mayCommand(session: Session): boolean {
  return session.caller.kind === 'operator' || session.caller.actions.includes('compute:nodes:command');
}

/** A command's id, linked to its page when the key may read commands. */
function CommandLink(props: { id: string; session: Session }) {
  return mayCommand(props.session) ? (
    <a href={`${CONSOLE_PATH}/commands/${props.id}`}>
      <code>{props.id}</code>
    </a>
  ) : (
    <code>{props.id}</code>
  );
}

/** What a command runs: the action and its arguments, or the kind of an operation's command. */
function whatOf(command: Command): string {
  const args = Object.entries(command.args)
    .map(([name, value]) => `${name}=${value}`)
    .join(' ');
  return `${command.action ?? command.kind}${args ? ` ${args}` : ''}`;
}

/** The node page's Commands section: a run form per configured action, then the recent commands. */
export function NodeCommandsSection(props: {
  node: Node;
  session: Session;
  actions: NodeActions;
  commands: NodeCommands;
}) {
  const { node, session, commands } = props;
  return (
    <>
      {mayUse(node, session, 'compute:nodes:command') && (
        <RunForms node={node} session={session} actions={props.actions} />
      )}
      {'problem' in commands ? (
        <p class="muted">Commands not shown: {commands.problem}</p>
      ) : (
        <Table
          columns={['Command', 'Runs', 'Status', 'Exit code', 'Asked by', 'When', 'Reason']}
          items={commands.items}
          row={(command) => [
            <CommandLink id={command.id} session={session} />,
            <code>{whatOf(command)}</code>,
            <StatusBadge status={command.status} />,
            command.exitCode ?? '—',
            command.requestedBy ?? '—',
            <When at={command.createdAt} />,
            command.reason ?? '—',
          ]}
          empty="No commands yet."
        />
      )}
    </>
  );
}

/**
 * One form per action the node's agent said it runs: an input per declared parameter (its
 * pattern shown, its default filled in) and a required reason. An action that restarts the
 * machine is offered as the verified Reboot instead. A node whose agent never said gets a form
 * with the action's name typed.
 */
function RunForms(props: { node: Node; session: Session; actions: NodeActions }) {
  const { node, session, actions } = props;
  if ('problem' in actions) return <p class="muted">Actions not shown: {actions.problem}</p>;
  if (actions.reportedAt === null) {
    return (
      <>
        <p class="muted" data-actions-unknown="">
          This node's agent has not said which actions it runs: it says so each time its session starts. Check
          that the agent runs and reaches the API (connectivity above). Until it does, any action name is
          taken and sent; its agent refuses one it does not run.
        </p>
        <RunForm node={node} session={session} />
      </>
    );
  }
  const runnable = actions.items.filter((action) => !action.restarts);
  const restarting = actions.items.filter((action) => action.restarts).map((action) => action.name);
  return (
    <>
      {runnable.length === 0 && (
        <p class="muted">
          Its agent runs no other actions (said <When at={actions.reportedAt} />
          ): they are set in its file.
        </p>
      )}
      {runnable.map((action) => (
        <RunForm node={node} session={session} action={action} />
      ))}
      {restarting.length > 0 && (
        <p class="muted">
          {restarting.join(', ')} restart{restarting.length === 1 ? 's' : ''} the machine: use Reboot above,
          which checks that the node comes back on a new boot.
        </p>
      )}
    </>
  );
}

function RunForm(props: { node: Node; session: Session; action?: Action }) {
  const { node, action } = props;
  return (
    <form method="post" action={`${CONSOLE_PATH}/nodes/${node.id}/commands`} class="run">
      <Csrf session={props.session} />
      {/* A second submit of this form is a replay of the first, not a second command. */}
      <input type="hidden" name="idempotencyKey" value={`console-run-${randomUUID()}`} />
      {action ? (
        <>
          <input type="hidden" name="action" value={action.name} />
          <span class="run-action">
            <code>{action.name}</code> <span class="muted">at most {duration(action.timeoutSeconds)}</span>
          </span>
          {Object.entries(action.params).map(([name, param]) => (
            <label>
              <span>
                {name} <span class="muted">pattern</span> <code>{param.pattern}</code>
              </span>
              <input
                name={`arg.${name}`}
                value={param.default}
                required={param.default === undefined}
                maxlength={256}
              />
            </label>
          ))}
        </>
      ) : (
        <input name="action" placeholder="action, e.g. diagnostics" required maxlength={63} />
      )}
      <input name="reason" placeholder="reason (required)" required maxlength={256} />
      <button type="submit">{action ? `Run ${action.name}` : 'Run'}</button>
    </form>
  );
}

function duration(seconds: number): string {
  if (seconds % 3600 === 0) return `${seconds / 3600} h`;
  if (seconds % 60 === 0) return `${seconds / 60} min`;
  return `${seconds} s`;
}

/** A command's page: its fields, its output escaped in monospace with downloads, Cancel while pending. */
export function CommandPage(props: { session: Session; flash?: Flash; node: Node; command: Command }) {
  const { session, node, command } = props;
  const base = `${CONSOLE_PATH}/commands/${command.id}`;
  const output = command.output;
  return (
    <Layout
      title={`${whatOf(command)} on ${node.hostname}`}
      session={session}
      flash={props.flash}
      watch={{ nodeId: node.id }}
    >
      <h1>
        <code>{whatOf(command)}</code> on <a href={`${CONSOLE_PATH}/nodes/${node.id}`}>{node.hostname}</a>
      </h1>
      <LiveRegion id="command">
        <dl class="facts">
          <dt>command</dt>
          <dd>
            <code>{command.id}</code> ({command.kind})
          </dd>
          <dt>status</dt>
          <dd>
            <StatusBadge status={command.status} />
            {command.statusReason ? `: ${command.statusReason}` : ''}
          </dd>
          <dt>exit code</dt>
          <dd>{command.exitCode ?? '—'}</dd>
          <dt>asked by</dt>
          <dd>{command.requestedBy ?? '—'}</dd>
          <dt>reason</dt>
          <dd>{command.reason ?? '—'}</dd>
          {command.operationId && (
            <>
              <dt>operation</dt>
              <dd>
                <a href={`${CONSOLE_PATH}/operations/${command.operationId}`}>
                  <code>{command.operationId}</code>
                </a>
              </dd>
            </>
          )}
          <dt>asked</dt>
          <dd>
            <When at={command.createdAt} />
          </dd>
          <dt>waits until</dt>
          <dd>{command.expiresAt ? <When at={command.expiresAt} /> : '—'}</dd>
          <dt>started</dt>
          <dd>{command.startedAt ? <When at={command.startedAt} /> : '—'}</dd>
          <dt>finished</dt>
          <dd>{command.finishedAt ? <When at={command.finishedAt} /> : '—'}</dd>
        </dl>
        {command.status === 'pending' && (
          <form method="post" action={`${base}/cancel`} class="controls">
            <Csrf session={session} />
            <label class="check">
              <input type="checkbox" name="confirm" value="yes" required /> withdraw it: the node has not
              started it
            </label>
            <button type="submit">Cancel command</button>
          </form>
        )}
      </LiveRegion>
      <LiveRegion id="output">
        {output === null ? (
          <p class="muted">No output yet.</p>
        ) : (
          <>
            {output.droppedBytes > 0 && (
              <p class="problem" data-dropped={String(output.droppedBytes)}>
                The action wrote {output.droppedBytes} more byte{output.droppedBytes === 1 ? '' : 's'} than
                its output limit: they were not kept.
              </p>
            )}
            {(['stdout', 'stderr'] as const).map((stream) => (
              <>
                <h2>
                  {stream}{' '}
                  <a href={`${base}/${stream}`} download="" class="download">
                    download
                  </a>
                </h2>
                <MachineText id={stream} text={output[stream]} empty={`Nothing on ${stream}.`} />
              </>
            ))}
          </>
        )}
      </LiveRegion>
    </Layout>
  );
}
