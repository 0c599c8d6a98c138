import { Layout } from '../layout';

/** How this console signs people in, for its sign-in page. */
export interface SignInOptions {
  /** The API-key form is offered. */
  keySignIn: boolean;
  /** The provider's name, when sign-in at an OpenID provider is configured. */
  providerName?: string;
}

/**
 * The sign-in page: "Sign in with <provider>" when one is configured, and the API-key form when
 * key sign-in is on. `next` is the console page to land on; `problem` is why the last try was
 * refused or the session ended.
 */
export function SignInPage(props: { options: SignInOptions; next?: string; problem?: string }) {
  const { options, next } = props;
  const start = `/console/oidc/start${next ? `?${new URLSearchParams({ next }).toString()}` : ''}`;
  return (
    <Layout title="Sign in">
      <div class="signin">
        <h1>Sign in to the Drydock console</h1>
        {props.problem && (
          <p class="flash error" role="alert">
            {props.problem}
          </p>
        )}
        {options.providerName && (
          <p>
            {/* A link, not a form: the provider is another origin, which the CSP's form-action refuses. */}
            <a class="button" href={start}>
              {`Sign in with ${options.providerName}`}
            </a>
          </p>
        )}
        {options.keySignIn && (
          <>
            {options.providerName && <h2>Or with an API key</h2>}
            <p>
              Paste an API key (an operator key, or a tenant key holding <code>compute:nodes:read</code>). It
              stays on the server; your browser keeps only a session cookie.
            </p>
            <form method="post" action="/console/sign-in">
              {next && <input type="hidden" name="next" value={next} />}
              <p>
                <label>
                  API key
                  <br />
                  <input type="password" name="key" autocomplete="off" required />
                </label>
              </p>
              <button type="submit">Sign in</button>
            </form>
          </>
        )}
      </div>
    </Layout>
  );
}
