import { readFileSync } from 'node:fs';
import { createRemoteJWKSet, decodeJwt, errors as joseErrors, jwtVerify, type JWTPayload } from 'jose';
import { DrydockError } from '../domain/errors';
import { actorOf, type Principal } from '../domain/principal';
import type { Config } from '../config';
import { parseGroupMap, roleOf, type GroupMap } from './group-map';
import type { People } from './people';

/** How the API trusts an OpenID provider's access tokens (docs/sign-in.md). */
export interface OidcSettings {
  /** The provider's issuer URL, exactly as its tokens' `iss` and its discovery document say it. */
  issuer: string;
  /** The `aud` the tokens must carry: Drydock's API as the provider knows it. */
  audience: string;
  /** The claim that lists the person's groups (default `groups`). */
  groupsClaim: string;
  /** How far `exp` and `nbf` may be off (seconds). */
  clockSkewSeconds: number;
  groupMap: GroupMap;
  /** The clock tokens are judged by (epoch ms); tests move it, everything else leaves it unset. */
  now?: () => number;
}

/**
 * The OpenID settings `config` sets, the group map read and checked; undefined when no issuer is
 * configured. Throws naming what is missing or wrong, so a misconfigured API does not start.
 */
export function oidcSettingsOf(config: Config): OidcSettings | undefined {
  const {
    DRYDOCK_OIDC_ISSUER: issuer,
    DRYDOCK_OIDC_AUDIENCE: audience,
    DRYDOCK_OIDC_GROUP_MAP: mapFile,
  } = config;
  if (!issuer && !audience && !mapFile) return undefined;
  if (!issuer || !audience || !mapFile) {
    throw new Error(
      'invalid configuration: DRYDOCK_OIDC_ISSUER, DRYDOCK_OIDC_AUDIENCE and DRYDOCK_OIDC_GROUP_MAP go together (docs/sign-in.md)',
    );
  }
  let text: string;
  try {
    text = readFileSync(mapFile, 'utf8');
  } catch (error) {
    throw new Error(`invalid configuration: DRYDOCK_OIDC_GROUP_MAP ${mapFile} cannot be read`, {
      cause: error,
    });
  }
  return {
    issuer,
    audience,
    groupsClaim: config.DRYDOCK_OIDC_GROUPS_CLAIM,
    clockSkewSeconds: config.DRYDOCK_OIDC_CLOCK_SKEW,
    groupMap: parseGroupMap(text, `DRYDOCK_OIDC_GROUP_MAP ${mapFile}`),
  };
}

/**
 * Asymmetric signatures only: a symmetric one would be checked with a secret the API would have to
 * share with the provider, and `none` is no signature at all.
 */
const ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
  'Ed25519',
];

/** A bearer of three base64url parts: a JWT, not an API key or a node credential. */
export function looksLikeJwt(secret: string): boolean {
  return /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/.test(secret);
}

/**
 * Verifies a provider's access tokens and maps the person to a principal by the group map. The
 * provider's keys come from its discovery document's `jwks_uri`, read once, and are kept by jose's
 * remote key set (refetched when a token names a key it does not hold, at most every 30 s).
 */
export class PersonTokens {
  private keys: Promise<ReturnType<typeof createRemoteJWKSet>> | null = null;

  constructor(
    private readonly settings: OidcSettings,
    private readonly people: People,
  ) {}

  /** The person's principal; 401 for a token that does not verify, 403 for a person no group maps. */
  async resolve(token: string): Promise<Principal> {
    const { settings } = this;
    let payload: JWTPayload;
    try {
      // Refused before any key is looked at: another provider's token would only make jose fetch
      // our key set again for a key id it cannot hold. (Nothing unverified is believed: this refuses.)
      if (decodeJwt(token).iss !== settings.issuer) {
        throw new joseErrors.JWTClaimValidationFailed(
          'unexpected "iss" claim value',
          {},
          'iss',
          'check_failed',
        );
      }
      ({ payload } = await jwtVerify(token, await this.keySet(), {
        issuer: settings.issuer,
        audience: settings.audience,
        algorithms: ALGORITHMS,
        clockTolerance: settings.clockSkewSeconds,
        requiredClaims: ['sub', 'exp'],
        ...(settings.now ? { currentDate: new Date(settings.now()) } : {}),
      }));
    } catch (error) {
      if (error instanceof DrydockError) throw error;
      if (error instanceof joseErrors.JWKSTimeout || !(error instanceof joseErrors.JOSEError)) {
        throw new DrydockError(
          'UNAVAILABLE',
          `the OpenID provider's keys could not be read`,
          {},
          { cause: error },
        );
      }
      throw new DrydockError(
        'UNAUTHENTICATED',
        `the bearer token was refused: ${reasonOf(error)}`,
        {},
        { cause: error },
      );
    }
    const subject = payload.sub!;
    const email = typeof payload.email === 'string' && payload.email.length > 0 ? payload.email : null;
    const groupsClaim = payload[settings.groupsClaim];
    const groups = Array.isArray(groupsClaim)
      ? groupsClaim.filter((g): g is string => typeof g === 'string')
      : [];
    const who = email ?? `subject ${subject}`;
    const role = roleOf(settings.groupMap, groups, who);
    const person = { issuer: settings.issuer, subject, email };
    const keyId = `user:${subject}`;
    const name = email ?? subject;
    const principal: Principal = Object.freeze(
      role.role === 'operator'
        ? { kind: 'operator' as const, keyId, name, person }
        : { kind: 'tenant' as const, keyId, name, tenantId: role.tenantId, actions: role.actions, person },
    );
    // Before the request acts: its records name `user:<email>`, the table says whose it was.
    await this.people.seen({ ...person, actor: actorOf(principal) });
    return principal;
  }

  /** The provider's key set, from its discovery document; a failed read is tried again next time. */
  private keySet(): Promise<ReturnType<typeof createRemoteJWKSet>> {
    this.keys ??= discover(this.settings.issuer).catch((error: unknown) => {
      this.keys = null;
      throw new DrydockError(
        'UNAVAILABLE',
        `the OpenID provider ${this.settings.issuer} could not be read`,
        {},
        {
          cause: error,
        },
      );
    });
    return this.keys;
  }
}

async function discover(issuer: string): Promise<ReturnType<typeof createRemoteJWKSet>> {
  const url = `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;
  const response = await fetch(url, { signal: AbortSignal.timeout(5_000) });
  if (!response.ok) throw new Error(`${url} answered ${response.status}`);
  const document = (await response.json()) as { issuer?: unknown; jwks_uri?: unknown };
  // OpenID Connect Discovery 1.0 §4.3: the document must name the issuer it was asked for.
  if (document.issuer !== issuer)
    throw new Error(`${url} names issuer ${String(document.issuer)}, not ${issuer}`);
  if (typeof document.jwks_uri !== 'string') throw new Error(`${url} has no jwks_uri`);
  return createRemoteJWKSet(new URL(document.jwks_uri));
}

/** What was wrong with the token, in words a caller can act on (never the token itself). */
function reasonOf(error: InstanceType<typeof joseErrors.JOSEError>): string {
  if (error instanceof joseErrors.JWTExpired) return 'it has expired';
  if (error instanceof joseErrors.JWTClaimValidationFailed) {
    if (error.claim === 'iss') return 'it was issued by another provider';
    if (error.claim === 'aud') return 'it is meant for another audience';
    if (error.claim === 'nbf') return 'it is not valid yet';
    return `its ${error.claim} claim is wrong`;
  }
  if (error instanceof joseErrors.JOSEAlgNotAllowed) return 'its signature algorithm is not accepted';
  if (error instanceof joseErrors.JWKSNoMatchingKey)
    return "it is signed by a key the provider's key set does not hold";
  if (error instanceof joseErrors.JWSSignatureVerificationFailed) return 'its signature does not verify';
  return 'it is not a valid signed token';
}
