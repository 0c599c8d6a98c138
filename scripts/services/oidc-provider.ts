import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider, { errors, type Configuration } from 'oidc-provider';

/** A person the local provider knows: the email is the login name and the subject. */
export interface ProviderPerson {
  email: string;
  name: string;
  groups: string[];
}

/** The demo people: one operator, one tenant member (docs/sign-in.md, Try it locally). */
export const DEMO_PEOPLE: ProviderPerson[] = [
  { email: 'alice@example.com', name: 'Alice Example', groups: ['drydock-operators'] },
  { email: 'bob@example.com', name: 'Bob Example', groups: ['ml-team'] },
];

/** The group map that fits the demo people: alice an operator, bob the demo tenant's member. */
export const DEMO_GROUP_MAP = `# People's groups at the OpenID provider → what they are in Drydock (docs/sign-in.md).
groups:
  drydock-operators:
    role: operator
  ml-team:
    role: tenant
    tenantId: acme
    actions:
      - compute:nodes:read
      - compute:nodes:cordon
      - compute:nodes:drain
      - compute:allocations:write
`;

export interface OidcProviderOptions {
  people?: ProviderPerson[];
  /** The `aud` of access tokens for Drydock (default `drydock`). */
  audience?: string;
  /** Where the console client may be sent back to after sign-in. */
  redirectUris?: string[];
  /** Where the console client may be sent back to after signing out at the provider. */
  postLogoutRedirectUris?: string[];
  /** Access token lifetime in seconds (default 600). */
  accessTokenTtlSeconds?: number;
  /**
   * Every refresh answers a new refresh token and spends the old one; using a spent one revokes
   * the whole grant (reuse detection), as providers that rotate refresh tokens do. Default: the
   * library's (a confidential client's token rotates only near its end).
   */
  rotateRefreshTokens?: boolean;
  /** The port to listen on, on 127.0.0.1 (default: any free one). */
  port?: number;
  /**
   * A second API the provider issues tokens for, at `urn:other:api` with this audience: a real
   * token of this issuer meant for someone else (tests).
   */
  otherAudience?: string;
}

/** A running provider: its issuer URL, clients, people; `stop` closes it. */
export interface RunningOidcProvider {
  issuer: string;
  audience: string;
  /** The `resource` parameter that asks for an access token for Drydock's API. */
  resource: string;
  /** The console's confidential client (authorization code with PKCE). */
  consoleClient: {
    clientId: string;
    clientSecret: string;
    redirectUris: string[];
    postLogoutRedirectUris: string[];
  };
  /** The CLI's public client (device authorization grant). */
  cliClientId: string;
  /**
   * The people, live: a change to one's `groups` shows in the tokens issued after it (a refresh
   * included), as a group removed at a real provider does.
   */
  people: ProviderPerson[];
  stop(): Promise<void>;
}

/** The resource indicator (RFC 8707) clients send for Drydock's API; it must be an absolute URI. */
export const DRYDOCK_RESOURCE = 'urn:drydock:api';
/** The resource indicator of `otherAudience`. */
export const OTHER_RESOURCE = 'urn:other:api';

/**
 * A real OpenID provider (`oidc-provider`, a certified implementation) on 127.0.0.1, for tests and
 * `npm start -- --oidc`: its own signing key, the given people with a `groups` claim, a console
 * client and a CLI client, and JWT access tokens for Drydock's audience. Its login and consent
 * pages are the library's development ones: they take any password.
 */
export async function startOidcProvider(options: OidcProviderOptions = {}): Promise<RunningOidcProvider> {
  const people = options.people ?? DEMO_PEOPLE;
  const audience = options.audience ?? 'drydock';
  const ttl = options.accessTokenTtlSeconds ?? 600;
  const redirectUris = options.redirectUris ?? ['http://127.0.0.1/oidc/callback'];
  const byEmail = new Map(people.map((person) => [person.email, person]));
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const signingKey = {
    ...generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' }),
    kid: randomBytes(8).toString('hex'),
    use: 'sig',
    alg: 'RS256',
  };
  const consoleClient = {
    clientId: 'drydock-console',
    clientSecret: randomBytes(24).toString('base64url'),
    redirectUris,
    postLogoutRedirectUris: options.postLogoutRedirectUris ?? [],
  };
  const cliClientId = 'drydock-cli';
  const configuration: Configuration = {
    clients: [
      {
        client_id: consoleClient.clientId,
        client_secret: consoleClient.clientSecret,
        redirect_uris: redirectUris,
        post_logout_redirect_uris: consoleClient.postLogoutRedirectUris,
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
      },
      {
        client_id: cliClientId,
        token_endpoint_auth_method: 'none',
        grant_types: ['urn:ietf:params:oauth:grant-type:device_code', 'refresh_token'],
        response_types: [],
        redirect_uris: [],
      },
    ],
    jwks: { keys: [signingKey] },
    cookies: { keys: [randomBytes(32).toString('base64url')] },
    pkce: { required: () => true },
    // Both clients get a refresh token, whatever the scopes asked: the console renews a session's
    // access token with it (and so re-reads the person's groups), the CLI its cached token.
    issueRefreshToken: (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    ...(options.rotateRefreshTokens ? { rotateRefreshToken: () => true } : {}),
    scopes: ['openid', 'email', 'profile', 'groups', 'offline_access'],
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'], groups: ['groups'] },
    // The ID token carries the scopes' claims (groups, email) even when an access token is issued.
    conformIdTokenClaims: false,
    ttl: {
      AccessToken: ttl,
      IdToken: 3600,
      Interaction: 600,
      Session: 86_400,
      Grant: 86_400,
      DeviceCode: 600,
    },
    features: {
      devInteractions: { enabled: true },
      deviceFlow: { enabled: true },
      // `drydock logout` revokes the CLI's refresh token (RFC 7009).
      revocation: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => DRYDOCK_RESOURCE,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, indicator) => {
          if (indicator === OTHER_RESOURCE && options.otherAudience) {
            return {
              scope: 'drydock',
              audience: options.otherAudience,
              accessTokenFormat: 'jwt',
              accessTokenTTL: ttl,
            };
          }
          if (indicator !== DRYDOCK_RESOURCE) throw new errors.InvalidTarget();
          return { scope: 'drydock', audience, accessTokenFormat: 'jwt', accessTokenTTL: ttl };
        },
      },
    },
    findAccount: (_ctx, id) => {
      const person = byEmail.get(id);
      if (!person) return undefined;
      return {
        accountId: id,
        claims: () => ({
          sub: id,
          email: person.email,
          email_verified: true,
          name: person.name,
          groups: person.groups,
        }),
      };
    },
    // The API maps people by their access token alone: it carries the email and the groups.
    extraTokenClaims: (_ctx, token) => {
      const person = 'accountId' in token && token.accountId ? byEmail.get(token.accountId) : undefined;
      return person ? { email: person.email, groups: person.groups } : undefined;
    },
  };
  const provider = new Provider(issuer, configuration);
  const handle = provider.callback();
  server.on('request', (request, response) => void handle(request, response));
  return {
    issuer,
    audience,
    resource: DRYDOCK_RESOURCE,
    consoleClient,
    cliClientId,
    people,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
