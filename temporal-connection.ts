import { createPrivateKey, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { TLSConfig } from '@temporalio/client';
import type { Config } from './config';
import { hashSecret } from './domain/secrets';
import { certificateSummary, privateKeyFingerprint, readPrivateKeyFile } from './private-key-file';

type TemporalSettings = Pick<
  Config,
  | 'TEMPORAL_ADDRESS'
  | 'TEMPORAL_TLS_CA'
  | 'TEMPORAL_TLS_CERT'
  | 'TEMPORAL_TLS_KEY'
  | 'TEMPORAL_TLS_SERVER_NAME'
  | 'TEMPORAL_API_KEY_FILE'
>;

/** How a process reaches Temporal, and what its start-up says of it. */
export interface TemporalConnection {
  /** What `Connection.connect` and `NativeConnection.connect` both take. */
  options: { address: string; tls?: TLSConfig; apiKey?: string };
  /** For the start-up's log line: the files' fingerprints, subjects and expiries, never a key. */
  summary: Record<string, unknown>;
}

/**
 * The one way Drydock connects to Temporal, from its settings (docs/production.md): TLS when any
 * of TEMPORAL_TLS_CA, _CERT, _KEY, _SERVER_NAME or TEMPORAL_API_KEY_FILE is set (an API key implies
 * it), mTLS with a certificate and its key. Null when TEMPORAL_ADDRESS is unset and nothing asks
 * for TLS (`npm start` runs a dev server, which serves none). Every file is read now, so a missing,
 * unreadable, unprotected or mismatched one stops the start naming its setting.
 */
export function temporalConnection(config: TemporalSettings): TemporalConnection | null {
  const ca = config.TEMPORAL_TLS_CA;
  const cert = config.TEMPORAL_TLS_CERT;
  const key = config.TEMPORAL_TLS_KEY;
  const serverName = config.TEMPORAL_TLS_SERVER_NAME;
  const apiKeyFile = config.TEMPORAL_API_KEY_FILE;
  const secured = [ca, cert, key, serverName, apiKeyFile].some((setting) => setting !== undefined);
  const address = config.TEMPORAL_ADDRESS;
  if (!address) {
    if (!secured) return null;
    throw new Error(
      'invalid configuration: TEMPORAL_TLS_* and TEMPORAL_API_KEY_FILE configure the link to the ' +
        'server TEMPORAL_ADDRESS names, and it is unset (the dev server npm start runs serves no TLS)',
    );
  }
  if (!secured) return { options: { address }, summary: { address, tls: false } };
  if ((cert === undefined) !== (key === undefined)) {
    throw new Error(
      `invalid configuration: ${cert ? 'TEMPORAL_TLS_CERT is set without TEMPORAL_TLS_KEY' : 'TEMPORAL_TLS_KEY is set without TEMPORAL_TLS_CERT'}`,
    );
  }
  const tls: TLSConfig = {};
  const summary: Record<string, unknown> = { address, tls: true };
  if (serverName) tls.serverNameOverride = summary.serverName = serverName;
  if (ca) {
    const caPem = readSetting('TEMPORAL_TLS_CA', ca);
    summary.ca = certificateOf('TEMPORAL_TLS_CA', caPem);
    tls.serverRootCACertificate = caPem;
  }
  if (cert && key) {
    const crt = readSetting('TEMPORAL_TLS_CERT', cert);
    summary.clientCertificate = certificateOf('TEMPORAL_TLS_CERT', crt);
    const keyPem = readPrivateKeyFile(key, 'TEMPORAL_TLS_KEY');
    if (!new X509Certificate(crt).checkPrivateKey(createPrivateKey(keyPem))) {
      throw new Error(
        `invalid configuration: TEMPORAL_TLS_KEY ${key} is not the key of TEMPORAL_TLS_CERT ${cert}`,
      );
    }
    tls.clientCertPair = { crt, key: Buffer.from(keyPem) };
    summary.clientKey = privateKeyFingerprint(keyPem);
  }
  const options: TemporalConnection['options'] = { address, tls };
  if (apiKeyFile) {
    const apiKey = readPrivateKeyFile(apiKeyFile, 'TEMPORAL_API_KEY_FILE').trim();
    if (!apiKey) throw new Error(`invalid configuration: TEMPORAL_API_KEY_FILE ${apiKeyFile} is empty`);
    options.apiKey = apiKey;
    summary.apiKey = `sha256:${hashSecret(apiKey)}`;
  }
  return { options, summary };
}

function readSetting(setting: string, file: string): Buffer {
  try {
    return readFileSync(file);
  } catch (error) {
    throw new Error(`invalid configuration: ${setting}: ${(error as Error).message}`);
  }
}

function certificateOf(setting: string, pem: Buffer) {
  try {
    return certificateSummary(pem);
  } catch {
    throw new Error(`invalid configuration: ${setting} holds no PEM certificate`);
  }
}
