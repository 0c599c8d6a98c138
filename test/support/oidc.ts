import { createHash, randomBytes } from 'node:crypto';
import type { RunningOidcProvider } from '../../scripts/services/oidc-provider';

/**
 * Signs `email` in at the provider the way a browser does, over HTTP: the authorization request
 * with PKCE, the provider's own login and consent pages, the redirect with the code, and the code
 * exchanged at the token endpoint by the console client. The tokens are the provider's, made by
 * its real flow: nothing here signs anything.
 */
export async function signIn(
  provider: RunningOidcProvider,
  email: string,
  resource = provider.resource,
): Promise<{ accessToken: string; idToken: string; expiresIn: number }> {
  const { clientId, clientSecret, redirectUris } = provider.consoleClient;
  const redirectUri = redirectUris[0]!;
  const verifier = randomBytes(32).toString('base64url');
  const challenge = createHash('sha256').update(verifier).digest('base64url');
  const cookies = new Map<string, string>();
  let url = new URL(`${provider.issuer}/auth`);
  url.search = new URLSearchParams({
    client_id: clientId,
    redirect_uri: redirectUri,
    response_type: 'code',
    scope: 'openid email groups drydock',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    state: randomBytes(8).toString('hex'),
    resource,
  }).toString();
  let form: URLSearchParams | undefined;
  let code: string | null = null;
  for (let step = 0; step < 20 && code === null; step++) {
    const response = await fetch(url, {
      method: form ? 'POST' : 'GET',
      body: form,
      redirect: 'manual',
      headers: { cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; ') },
    });
    for (const line of response.headers.getSetCookie()) {
      const [pair = ''] = line.split(';');
      const at = pair.indexOf('=');
      cookies.set(pair.slice(0, at), pair.slice(at + 1));
    }
    form = undefined;
    const location = response.headers.get('location');
    if (response.status >= 300 && response.status < 400 && location) {
      url = new URL(location, url);
      if (url.href.startsWith(redirectUri)) {
        const error = url.searchParams.get('error');
        if (error) throw new Error(`sign-in refused: ${error} ${url.searchParams.get('error_description')}`);
        code = url.searchParams.get('code');
      }
      continue;
    }
    const page = await response.text();
    if (response.status !== 200) throw new Error(`sign-in: ${url.href} answered ${response.status}: ${page}`);
    // The provider's development pages: a login form, then a consent form, posted back to the page.
    if (page.includes('name="prompt" value="login"')) {
      form = new URLSearchParams({ prompt: 'login', login: email, password: 'any' });
    } else if (page.includes('name="prompt" value="consent"')) {
      form = new URLSearchParams({ prompt: 'consent' });
    } else {
      throw new Error(`sign-in: unexpected page at ${url.href}: ${page.slice(0, 500)}`);
    }
  }
  if (!code) throw new Error('sign-in: no authorization code');
  const token = await fetch(`${provider.issuer}/token`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri: redirectUri,
      code_verifier: verifier,
      resource,
    }),
  });
  const body = (await token.json()) as Record<string, unknown>;
  if (token.status !== 200) throw new Error(`token exchange: ${token.status} ${JSON.stringify(body)}`);
  return {
    accessToken: body.access_token as string,
    idToken: body.id_token as string,
    expiresIn: body.expires_in as number,
  };
}
