import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../config';
import { createDb } from '../db/client';
import { writeShapePki, type ShapePki } from '../scripts/prod-shape';
import { issueCertificate, type Issued } from '../scripts/services/pki';
import { startPostgres, type PostgresServer } from '../scripts/services/postgres';
import { freePort } from '../scripts/services/process';
import {
  startTemporalCluster,
  temporalPorts,
  type TemporalCluster,
} from '../scripts/services/temporal-cluster';
import { temporalConnection } from '../temporal-connection';

// The production shape's links as `startProdShape` makes them: its certificates (a CA made at the
// start, the servers', Drydock's client's), its embedded Postgres serving TLS and its Temporal
// server, built from source, on that Postgres over TLS and taking only clients with a certificate.
let home: string;
let pki: ShapePki;
let pg: PostgresServer;
let temporal: TemporalCluster;
beforeAll(async () => {
  mkdirSync(resolve('.drydock'), { recursive: true });
  home = mkdtempSync(join(resolve('.drydock'), 'tls-links-test-'));
  chmodSync(home, 0o755);
  pki = await writeShapePki(join(home, 'tls'));
  pg = await startPostgres({
    home,
    port: await freePort(),
    tls: { server: pki.postgres, caFile: pki.ca.certFile },
  });
  const target = new URL(pg.url);
  temporal = await startTemporalCluster({
    postgres: {
      host: target.hostname,
      port: Number(target.port),
      user: 'drydock',
      password: 'drydock',
      caFile: pki.ca.certFile,
    },
    home: resolve('.drydock'),
    dir: join(home, 'temporal'),
    ports: await temporalPorts('free'),
    tls: { ca: pki.ca.certFile, server: pki.temporal, client: pki.client, serverName: 'localhost' },
  });
}, 300_000);
afterAll(async () => {
  await temporal?.stop();
  await pg?.stop();
  if (home) rmSync(home, { recursive: true, force: true });
});

/** The error `connect` ends with, or 'connected'. */
async function refusal(connect: () => Promise<{ close(): Promise<void> }>): Promise<string> {
  try {
    const connection = await connect();
    await connection.close();
    return 'connected';
  } catch (error) {
    return String((error as Error).message);
  }
}

/**
 * How the frontend ends a TLS handshake by a client presenting `certificate` (or none): 'accepted',
 * or the code of the alert it sent. In TLS 1.3 the server judges the client's certificate after the
 * client's side of the handshake is done, so a refusal is an alert a moment after `secureConnect`.
 */
function handshake(address: string, certificate?: Issued): Promise<string> {
  const [host, port] = address.split(':');
  return new Promise((resolve) => {
    const socket = tlsConnect({
      host,
      port: Number(port),
      ca: readFileSync(pki.ca.certFile),
      servername: 'localhost',
      ALPNProtocols: ['h2'],
      ...(certificate
        ? { cert: readFileSync(certificate.certFile), key: readFileSync(certificate.keyFile) }
        : {}),
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
    socket.once('secureConnect', () =>
      setTimeout(() => {
        socket.destroy();
        resolve('accepted');
      }, 1_000),
    );
  });
}

describe("the production shape's Temporal server, with mTLS", () => {
  it("takes a client with the shape's certificate (through the one connection builder the worker uses) and its UI", async () => {
    const { options } = temporalConnection(loadConfig(temporal.env))!;
    expect(options.tls?.clientCertPair).toBeDefined();
    const connection = await Connection.connect(options);
    try {
      const namespace = await connection.workflowService.describeNamespace({ namespace: 'default' });
      expect(namespace.namespaceInfo?.name).toBe('default');
      const client = new Client({ connection, namespace: 'default' });
      for await (const workflow of client.workflow.list({ pageSize: 10 }))
        expect(workflow.workflowId).toBeTruthy();
    } finally {
      await connection.close();
    }
    // The Web UI's server is a client of the frontend too, with the shape's client certificate.
    expect(temporal.uiUrl).not.toBeNull();
    const ui = await fetch(`${temporal.uiUrl}/api/v1/namespaces/default`);
    expect(ui.status).toBe(200);
    expect(((await ui.json()) as { namespaceInfo: { name: string } }).namespaceInfo.name).toBe('default');
    // The worker's connection is the SDK's native one (Rust core): the same options serve it.
    const native = await NativeConnection.connect(options);
    try {
      const info = await native.workflowService.getSystemInfo({});
      expect(info.capabilities).toBeDefined();
    } finally {
      await native.close();
    }
  });

  it('refuses a client without a certificate, one whose certificate another CA signed, and one without TLS', async () => {
    const { options } = temporalConnection(loadConfig(temporal.env))!;
    const withoutCertificate = { ...options, tls: { ...options.tls, clientCertPair: undefined } };
    const stranger = await issueCertificate(join(home, 'tls'), 'stranger-ca', '/CN=stranger-ca');
    const strangerClient = await issueCertificate(join(home, 'tls'), 'stranger', '/CN=drydock', {
      ca: stranger,
      extensions: ['extendedKeyUsage=clientAuth'],
    });
    const withStrangersCertificate = temporalConnection(
      loadConfig({
        ...temporal.env,
        TEMPORAL_TLS_CERT: strangerClient.certFile,
        TEMPORAL_TLS_KEY: strangerClient.keyFile,
      }),
    )!.options;
    // What the server says, at the TLS layer: a certificate is required; the stranger's CA is unknown.
    expect(await handshake(options.address, pki.client)).toBe('accepted');
    expect(await handshake(options.address)).toBe('ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED');
    expect(await handshake(options.address, strangerClient)).toBe('ERR_SSL_TLSV1_ALERT_UNKNOWN_CA');
    // And what the SDK's clients make of it: the Node client only says it never connected, the
    // native one (the worker's) that its first call's connection closed (as the alert races the call).
    expect(await refusal(() => Connection.connect({ ...withoutCertificate, connectTimeout: 2_000 }))).toBe(
      'Failed to connect before the deadline',
    );
    expect(await refusal(() => NativeConnection.connect(withoutCertificate))).toMatch(
      /^Failed to call GetSystemInfo: .*transport::Error/,
    );
    expect(
      await refusal(() => Connection.connect({ ...withStrangersCertificate, connectTimeout: 2_000 })),
    ).toBe('Failed to connect before the deadline');
    expect(await refusal(() => NativeConnection.connect(withStrangersCertificate))).toMatch(
      /^Failed to call GetSystemInfo: .*transport::Error/,
    );
    // A client without TLS at all.
    expect(await refusal(() => Connection.connect({ address: options.address, connectTimeout: 2_000 }))).toBe(
      'Failed to connect before the deadline',
    );
  });
});

describe("the production shape's Postgres, over TLS", () => {
  const sslOf = async (url: string) => {
    const { sql, close } = createDb(url, { max: 1 });
    try {
      const [row] = await sql<{ ssl: boolean; version: string }[]>`
        select ssl, version from pg_stat_ssl where pid = pg_backend_pid()`;
      return row!;
    } finally {
      await close();
    }
  };

  it('is reached with sslmode=verify-full and the CA file, by 127.0.0.1 and by localhost (both in its certificate)', async () => {
    expect(pg.url).toMatch(/\?sslmode=verify-full&sslrootcert=/);
    expect(await sslOf(pg.url)).toEqual({ ssl: true, version: expect.stringMatching(/^TLSv1\.[23]$/) });
    expect((await sslOf(pg.url.replace('127.0.0.1', 'localhost'))).ssl).toBe(true);
  });

  it('refuses a server its CA file did not sign: verify-full with another CA fails', async () => {
    const other = await issueCertificate(join(home, 'tls'), 'other-ca', '/CN=other-ca');
    const wrongCa = pg.url.replace(encodeURIComponent(pki.ca.certFile), encodeURIComponent(other.certFile));
    expect(wrongCa).not.toBe(pg.url);
    await expect(sslOf(wrongCa)).rejects.toThrow(
      /self-signed certificate in certificate chain|unable to verify/,
    );
  });

  it("carries the Temporal server's own connections encrypted", async () => {
    const { sql, close } = createDb(pg.url, { max: 1 });
    try {
      const rows = await sql<{ datname: string; ssl: boolean }[]>`
        select a.datname, s.ssl from pg_stat_activity a join pg_stat_ssl s using (pid)
        where a.datname in ('temporal', 'temporal_visibility')`;
      expect(rows.length).toBeGreaterThan(0);
      expect(rows.filter((row) => !row.ssl)).toEqual([]);
    } finally {
      await close();
    }
  });
});
