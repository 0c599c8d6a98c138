import { Layout } from '../layout';

/** The sign-in form: paste an API key. `problem` is why the last try was refused. */
export function SignInPage(props: { problem?: string }) {
  return (
    <Layout title="Sign in">
      <div class="signin">
        <h1>Sign in to the Drydock console</h1>
        <p>
          Paste an API key (an operator key, or a tenant key holding <code>compute:nodes:read</code>). It
          stays on the server; your browser keeps only a session cookie.
        </p>
        {props.problem && (
          <p class="flash error" role="alert">
            {props.problem}
          </p>
        )}
        <form method="post" action="/console/sign-in">
          <p>
            <label>
              API key
              <br />
              <input type="password" name="key" autocomplete="off" required />
            </label>
          </p>
          <button type="submit">Sign in</button>
        </form>
      </div>
    </Layout>
  );
}
