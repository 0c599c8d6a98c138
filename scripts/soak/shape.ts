/**
 * What the soak needs of a running Drydock: the production shape's interface (scripts/prod-shape.ts,
 * helper `cluster`) narrowed to the parts it drives, so that any shape of that contract fits.
 */
export interface SoakProcess {
  name: string;
  pid: number;
  kill(signal?: NodeJS.Signals): void;
  exited: Promise<number | null>;
  restart(): Promise<void>;
  /** The last lines the current process wrote. */
  lastOutput(): string;
}

export interface SoakShape {
  apiUrls: string[];
  apis: SoakProcess[];
  workers: SoakProcess[];
  /** `env`: what a client of it sets (TEMPORAL_ADDRESS, TEMPORAL_TLS_*; temporal-connection.ts). */
  temporal: { address: string; env: Record<string, string>; restart(): Promise<void> };
  postgres: { restart(): Promise<void> };
  /** Connect through `postgresClient` (db/client.ts), which reads its TLS parameters. */
  databaseUrl: string;
  operatorKey: string;
}
