import { Layout } from '../layout';

/**
 * The landing page after the provider's callback: a 200 that moves on to `next` by itself. A
 * redirect would not do: the callback was reached by a redirect chain that began at the provider's
 * site, and a browser leaves the new SameSite=Strict session cookie off the chain's next hop — the
 * person would land on the sign-in page. A navigation this page starts is this origin's own.
 */
export function SignedInPage(props: { who: string; next: string }) {
  return (
    <Layout title="Signed in" moveTo={props.next}>
      <h1>Signed in</h1>
      <p>
        {`Signed in as ${props.who}. `}
        <a href={props.next}>Continue</a>
      </p>
    </Layout>
  );
}

/** Why a person signed in at the provider may not use Drydock: nothing was opened. */
export interface Refusal {
  /** Who the provider says they are (their email, or the subject). */
  who: string;
  /** Their groups, as the API read them from the access token, when the refusal is that none is mapped. */
  groups?: string[];
  /** The API's own words. */
  message: string;
  providerName: string;
  /** The provider's logout, when it offers one. */
  signOutUrl?: string;
}

/** The refusal page (403): who they are, their groups, whom to ask, a way to sign out at the provider. */
export function RefusedPage(props: { refusal: Refusal }) {
  const { refusal } = props;
  return (
    <Layout title="Not allowed in">
      <div class="signin">
        <h1>Drydock does not let you in</h1>
        <p class="flash error" role="alert">
          {`You are signed in at ${refusal.providerName} as ${refusal.who}, but ${
            refusal.groups
              ? 'none of your groups is mapped to a role in Drydock'
              : 'Drydock does not let you in'
          }.`}
        </p>
        {refusal.groups && (
          <p>
            {'Your groups: '}
            {refusal.groups.length > 0 ? (
              refusal.groups.map((group, i) => (
                <>
                  {i > 0 && ', '}
                  <code>{group}</code>
                </>
              ))
            ) : (
              <em>none</em>
            )}
          </p>
        )}
        <p>Ask an administrator to add you to a group mapped in Drydock, then sign in again.</p>
        <p class="muted">{`The API said: ${refusal.message}`}</p>
        <p>
          {refusal.signOutUrl ? (
            <a href={refusal.signOutUrl}>{`Sign out of ${refusal.providerName}`}</a>
          ) : (
            <a href="/console/sign-in">Back to sign-in</a>
          )}
        </p>
      </div>
    </Layout>
  );
}

/** A sign-in at the provider that did not complete: what went wrong, and a way to start again. */
export function SignInFailedPage(props: { message: string }) {
  return (
    <Layout title="Sign-in failed">
      <div class="signin">
        <h1>Sign-in failed</h1>
        <p class="flash error" role="alert">
          {props.message}
        </p>
        <p>Nothing was opened.</p>
        <p>
          <a href="/console/sign-in">Sign in again</a>
        </p>
      </div>
    </Layout>
  );
}

/** Signed out of Drydock; on to the provider's logout, which comes back to the sign-in page. */
export function SignedOutPage(props: { providerName: string; signOutUrl: string }) {
  return (
    <Layout title="Signed out" moveTo={props.signOutUrl}>
      <h1>Signed out of Drydock</h1>
      <p>
        {`Your Drydock session has ended. Now signing you out of ${props.providerName}… `}
        <a href={props.signOutUrl}>Continue</a>
      </p>
    </Layout>
  );
}
