import { Client, Connection } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import type { Teardown } from './teardown';

let runtimeInstalled = false;

/** A worker connection and a client on `address`, both closed at teardown. */
export async function connectTemporal(address: string, teardown: Teardown) {
  if (!runtimeInstalled) {
    // Quiet, and no signal handlers of its own: the benchmark's teardown handles Ctrl-C.
    Runtime.install({ shutdownSignals: [], logger: new DefaultLogger('WARN') });
    runtimeInstalled = true;
  }
  const native = await NativeConnection.connect({ address });
  teardown.add('close the worker connection', () => native.close());
  const connection = await Connection.connect({ address });
  teardown.add('close the client connection', () => connection.close());
  return { native, client: new Client({ connection, namespace: 'default' }) };
}

type Timestamp = temporal.api.history.v1.IHistoryEvent['eventTime'];

/** A history event's time in epoch milliseconds, with the sub-millisecond part kept. */
export function eventMs(ts: Timestamp): number {
  if (!ts) return NaN;
  const seconds = ts.seconds ?? 0;
  const whole = typeof seconds === 'number' ? seconds : seconds.toNumber();
  return whole * 1000 + (ts.nanos ?? 0) / 1e6;
}

export type HistoryEvent = temporal.api.history.v1.IHistoryEvent;
