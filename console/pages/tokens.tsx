import type { Schemas } from '@drydock/client';
import { Badge, type Tone } from '../badge';
import { Csrf, Layout, Table } from '../layout';
import type { CreatedToken, Flash, Session } from '../sessions';
import { When } from '../time';

type Token = Schemas['JoinToken'];
/** A token as its creation answers it: the only time its secret is known. */

/** Where the join line puts the agent's data directory (docs/agent.md). */
const DATA_DIR = '/var/lib/drydock';

export interface TokensView {
  session: Session;
  flash?: Flash;
  /** The token list, or the API's refusal of it (a key without `compute:tokens:read`). */
  tokens: Token[] | { problem: string };
  /** The pools this key may create tokens for. */
  pools: string[];
  /** The token just created, shown once with its secret. */
  created?: CreatedToken;
  /** The API's address, as the agent on a machine calls it. */
  apiUrl: string;
}

export function TokensPage(view: TokensView) {
  const { session, tokens } = view;
  const write = session.caller.actions.includes('compute:tokens:write');
  return (
    <Layout title="Join tokens" session={session} flash={view.flash}>
      <h1>Join tokens</h1>
      {view.created && <Created token={view.created} apiUrl={view.apiUrl} />}
      {write && <CreateForm session={session} pools={view.pools} />}
      <h2>Tokens</h2>
      {'problem' in tokens ? (
        <p class="flash error" role="alert">
          {tokens.problem}
        </p>
      ) : (
        <Table
          columns={['Token', 'Pool', 'Labels', 'Description', 'Uses', 'Expires', 'Created', 'State', '']}
          items={tokens}
          row={(token) => [
            <code>{token.id}</code>,
            <a href={`/console/pools/${token.poolId}`}>{token.poolId}</a>,
            Object.entries(token.labels)
              .map(([k, v]) => `${k}=${v}`)
              .join(', ') || '—',
            token.description ?? '—',
            token.maxUses === 0
              ? `${token.uses} (unlimited)`
              : `${token.uses} of ${token.maxUses} (${token.usesLeft} left)`,
            token.expiresAt ? <When at={token.expiresAt} /> : 'never',
            <>
              <When at={token.createdAt} /> by {token.createdBy}
            </>,
            <TokenState token={token} />,
            write && token.revokedAt === null && <RevokeForm token={token} session={session} />,
          ]}
          empty="No join tokens."
        />
      )}
    </Layout>
  );
}

/** Whether new machines may join with the token: usable, or why not (revoked, expired, used up). */
function TokenState(props: { token: Token }) {
  const { token } = props;
  const [tone, words]: [Tone, string] = token.revokedAt
    ? ['bad', 'revoked']
    : token.expiresAt && Date.parse(token.expiresAt) <= Date.now()
      ? ['idle', 'expired']
      : token.usesLeft === 0
        ? ['idle', 'used up']
        : ['ok', 'usable'];
  return (
    <>
      <Badge tone={tone} data="token">
        {words}
      </Badge>
      {token.revokedAt && (
        <>
          {' '}
          <When at={token.revokedAt} />
        </>
      )}
    </>
  );
}

/** The secret of the token just created, with the agent's command line that uses it. */
function Created(props: { token: CreatedToken; apiUrl: string }) {
  const { token } = props;
  return (
    <section class="secret" role="status">
      <h2>
        Token {token.id} created for pool {token.poolId}
      </h2>
      <p>Its secret is shown this once: copy it now. On the machine, as root, join with:</p>
      <pre class="join-line">
        <code>
          {`drydock-agent join --api ${props.apiUrl} --token ${token.secret} --data-dir ${DATA_DIR}`}
        </code>
      </pre>
      <p class="muted">
        Secret: <code class="token-secret">{token.secret}</code>
      </p>
    </section>
  );
}

function CreateForm(props: { session: Session; pools: string[] }) {
  if (props.pools.length === 0) return <p class="muted">No pool of this key's to make join tokens for.</p>;
  return (
    <>
      <h2>Create a token</h2>
      <form method="post" action="/console/tokens" class="filters">
        <Csrf session={props.session} />
        <label>
          pool
          <select name="poolId" required>
            {props.pools.map((id) => (
              <option value={id}>{id}</option>
            ))}
          </select>
        </label>
        <label>
          valid for
          <input name="ttl" value="24h" placeholder="24h, 30m; 0: never expires" size={14} maxlength={32} />
        </label>
        <label>
          uses
          <input name="maxUses" type="number" min={0} value="1" size={6} />
        </label>
        <label>
          labels for the nodes
          <input name="labels" placeholder="rack=b7,row=3" size={22} />
        </label>
        <label>
          description
          <input name="description" placeholder="what it is for" size={22} maxlength={256} />
        </label>
        <button type="submit">Create token</button>
      </form>
      <p class="muted">Uses 0: any number of machines may join with it until it expires or is revoked.</p>
    </>
  );
}

/** Revoke, confirmed by a box the form requires (and the console checks). */
function RevokeForm(props: { token: Token; session: Session }) {
  return (
    <form method="post" action={`/console/tokens/${props.token.id}/revoke`} class="inline">
      <Csrf session={props.session} />
      <label>
        <input type="checkbox" name="confirm" value="yes" required /> no more joins with it
      </label>{' '}
      <button type="submit">Revoke</button>
    </form>
  );
}
