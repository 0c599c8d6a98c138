import { createHash, randomBytes } from 'node:crypto';
import { parseGroupMap } from '../../api/group-map';
import type { OidcSettings } from '../../api/person-tokens';
import { DEMO_GROUP_MAP, type RunningOidcProvider } from '../../scripts/services/oidc-provider';

/**
 * The OpenID settings of an API that trusts `provider` as `npm start -- --oidc` does: its issuer
 * and audience, the `groups` claim, a minute of clock skew and the demo group map (alice an
 * operator, bob the tenant `acme`'s member), for `useHarness({ oidc: () => trusting(provider) })`.
 */
export function trusting(provider: RunningOidcProvider, groupMap = DEMO_GROUP_MAP): OidcSettings {
  return {
    issuer: provider.issuer,
    audience: provider.audience,
    groupsClaim: 'groups',
    clockSkewSeconds: 60,
    groupMap: parseGroupMap(groupMap, 'the group map'),
  };
}

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
  const browser = browserSession();
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
    const response = await browser(url, form);
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

/**
 * Confirms a device authorization at the provider the way a person does in a browser, over HTTP:
 * opens `url` (the `verification_uri_complete` the CLI printed), submits the user code and its
 * confirmation, then the provider's own login and consent pages as `email`, until its "Sign-in
 * Success" page. Each form is read from the page and posted back to its action.
 */
export async function confirmDevice(
  provider: RunningOidcProvider,
  url: string,
  email: string,
): Promise<void> {
  const browser = browserSession();
  let at = new URL(url);
  if (at.origin !== new URL(provider.issuer).origin)
    throw new Error(`device: ${url} is not at ${provider.issuer}`);
  let form: URLSearchParams | undefined;
  for (let step = 0; step < 20; step++) {
    const response = await browser(at, form);
    form = undefined;
    const location = response.headers.get('location');
    if (response.status >= 300 && response.status < 400 && location) {
      at = new URL(location, at);
      continue;
    }
    const page = await response.text();
    if (response.status !== 200) throw new Error(`device: ${at.href} answered ${response.status}: ${page}`);
    if (page.includes('<title>Sign-in Success</title>')) return;
    const action = /<form[^>]*\baction="([^"]*)"/.exec(page)?.[1];
    if (action === undefined) throw new Error(`device: no form at ${at.href}: ${page.slice(0, 500)}`);
    // The hidden inputs of the page's first form: the user code, its XSRF token, the prompt.
    form = new URLSearchParams();
    for (const [, name, value] of page.matchAll(
      /<input type="hidden" name="([^"]+)" value="([^"]*)"\s*\/?>/g,
    )) {
      form.set(name!, unescapeHtml(value!));
    }
    if (form.get('prompt') === 'login') {
      form.set('login', email);
      form.set('password', 'any');
    }
    at = new URL(unescapeHtml(action), at);
  }
  throw new Error('device: no "Sign-in Success" page after 20 steps');
}

/**
 * A browser's requests, as far as the provider's pages need: its cookies kept, redirects not
 * followed (the caller reads where they lead), a form posted when given.
 */
function browserSession(): (url: URL, form?: URLSearchParams) => Promise<Response> {
  const cookies = new Map<string, string>();
  return async (url, form) => {
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
    return response;
  };
}

const unescapeHtml = (text: string) =>
  text.replace(
    /&(amp|lt|gt|quot|#39|#x27);/g,
    (_, name: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'", '#x27': "'" })[name]!,
  );
