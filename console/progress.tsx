import type { Schemas } from '@drydock/client';
import { progressInWords, type OperationProgress } from '../domain/progress';
import { PoolDrainGantt } from './pool-drain-gantt';

/**
 * An operation's progress in words (domain/progress.ts, as the CLI and the Temporal UI say it);
 * a pool drain's also as a picture, node by node.
 */
export function Progress(props: { operation: Schemas['Operation'] }) {
  const progress = props.operation.progress as OperationProgress;
  return (
    <>
      <p class="progress" data-progress={progress.kind} data-phase={progress.phase}>
        {progressInWords(progress)}
      </p>
      {progress.kind === 'pool-drain' && <PoolDrainGantt operation={props.operation} now={Date.now()} />}
    </>
  );
}
