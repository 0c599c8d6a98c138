import type { Child } from 'hono/jsx';
import type { Watch } from './live';
import type { Flash, Session } from './sessions';
import { RenderedAt } from './time';

/**
 * The frame of every console page: a skip link to the content, the nav with the caller and
 * sign-out, the flash, the content. Its render's moment is the `now` of the page's relative times.
 * A page with `watch` has live regions (console/live.tsx) that follow the event feed it names.
 * A page with `moveTo` moves on to that address by itself (`<meta http-equiv="refresh">`: no
 * script, and a navigation of this origin's own).
 */
export function Layout(props: {
  title: string;
  session?: Session;
  flash?: Flash;
  watch?: Watch;
  moveTo?: string;
  children?: Child;
}) {
  const { session, flash } = props;
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{`${props.title} · Drydock`}</title>
        {props.moveTo && <meta http-equiv="refresh" content={`0; url=${props.moveTo}`} />}
        <link rel="stylesheet" href="/console/assets/console.css" />
        {props.watch && <script src="/console/assets/live.js" defer />}
      </head>
      <body data-watch={props.watch ? new URLSearchParams({ ...props.watch }).toString() : undefined}>
        <a class="skip" href="#main">
          Skip to content
        </a>
        <header>
          <a class="brand" href="/console">
            Drydock
          </a>
          {session && (
            <nav>
              <a href="/console">Overview</a>
              <a href="/console/nodes">Nodes</a>
              <a href="/console/pools">Pools</a>
              {session.caller.actions.includes('compute:tokens:read') && (
                <a href="/console/tokens">Join tokens</a>
              )}
              <a href="/console/operations">Operations</a>
              {session.caller.kind === 'operator' && <a href="/console/audit">Audit</a>}
              <span class="caller">{callerLabel(session)}</span>
              <form method="post" action="/console/sign-out" class="inline">
                <Csrf session={session} />
                <button type="submit">Sign out</button>
              </form>
            </nav>
          )}
        </header>
        <main id="main">
          {flash && (
            <p class={`flash ${flash.kind}`} role={flash.kind === 'error' ? 'alert' : 'status'}>
              {flash.text}
            </p>
          )}
          <RenderedAt.Provider value={Date.now()}>{props.children}</RenderedAt.Provider>
        </main>
      </body>
    </html>
  );
}

/** Who is signed in: a person by their email, a key by its name; operator or which tenant. */
function callerLabel(session: Session): string {
  const { caller } = session;
  const who = session.person ? caller.name : `key ${caller.name}`;
  return caller.kind === 'tenant' ? `${who} (tenant ${caller.tenantId})` : `${who} (operator)`;
}

/**
 * A table of `items` under `columns`, one row each (`row` gives its cells); `empty` when none. It
 * scrolls sideways inside its own box when the screen is narrower than it.
 */
export function Table<T>(props: { columns: string[]; items: T[]; row: (item: T) => Child[]; empty: string }) {
  if (props.items.length === 0) return <p class="muted">{props.empty}</p>;
  return (
    <div class="table-box">
      <table>
        <thead>
          <tr>
            {props.columns.map((column) => (
              <th>{column}</th>
            ))}
          </tr>
        </thead>
        <tbody>
          {props.items.map((item) => (
            <tr>
              {props.row(item).map((cell) => (
                <td>{cell}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** The hidden CSRF field every POST form carries. */
export function Csrf(props: { session: Session }) {
  return <input type="hidden" name="csrf" value={props.session.csrf} />;
}

/** A page that says what went wrong (404, 403, an API refusal). */
export function Problem(props: { title: string; message: string; session?: Session }) {
  return (
    <Layout title={props.title} session={props.session}>
      <h1>{props.title}</h1>
      <p class="problem">{props.message}</p>
      <p>
        <a href="/console">Back to the fleet</a>
      </p>
    </Layout>
  );
}
