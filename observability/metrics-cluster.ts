import cluster from 'node:cluster';
import { AggregatorRegistry, type Registry } from 'prom-client';

/** The messages an API process and the primary exchange for one scrape. */
const ASK = 'drydock:cluster-metrics';
const ANSWER = 'drydock:cluster-metrics-answer';

interface Ask {
  type: typeof ASK;
  id: number;
}
interface Answer {
  type: typeof ANSWER;
  id: number;
  text?: string;
  error?: string;
}

/**
 * The primary of `API_PROCESSES` > 1: answers an API process that was scraped with the metrics of
 * every API process summed (prom-client's cluster aggregation over IPC), so a scrape of the one
 * port counts every process's requests, whichever process took the connection.
 */
export function aggregateApiMetrics(): void {
  const aggregator = new AggregatorRegistry();
  cluster.on('message', (worker, message: Partial<Ask>) => {
    if (message.type !== ASK || typeof message.id !== 'number') return;
    const id = message.id;
    aggregator.clusterMetrics().then(
      (text) => worker.send({ type: ANSWER, id, text } satisfies Answer),
      (error: Error) => worker.send({ type: ANSWER, id, error: error.message } satisfies Answer),
    );
  });
}

/**
 * What this process's `/metrics` answers: its own registry, or — in an API process forked by the
 * primary — every process's, asked of the primary.
 */
export function metricsText(registry: Registry): () => Promise<string> {
  if (!cluster.isWorker) return () => registry.metrics();
  // Constructed for its side effect: it answers the primary's requests for this process's metrics.
  new AggregatorRegistry();
  AggregatorRegistry.setRegistries([registry]);
  const pending = new Map<number, { resolve: (text: string) => void; reject: (error: Error) => void }>();
  let next = 0;
  process.on('message', (message: Partial<Answer>) => {
    if (message.type !== ANSWER || typeof message.id !== 'number') return;
    const waiter = pending.get(message.id);
    pending.delete(message.id);
    if (message.error !== undefined) waiter?.reject(new Error(`cluster metrics: ${message.error}`));
    else waiter?.resolve(message.text ?? '');
  });
  return () =>
    new Promise((resolve, reject) => {
      const id = next++;
      pending.set(id, { resolve, reject });
      process.send!({ type: ASK, id } satisfies Ask);
    });
}
