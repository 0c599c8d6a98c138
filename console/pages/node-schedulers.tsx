import type { Schemas } from '@drydock/client';
import { downConditionOf } from '../../domain/scheduler-view';
import { Table } from '../layout';
import { When } from '../time';

type Allocation = Schemas['Allocation'];
type SchedulerView = Schemas['SchedulerView'];

/**
 * What each scheduler placing work on the node says of it (`node.schedulers`), beside Drydock's
 * own state: one section per scheduler, with its state and reason, whose cordon it is there, where
 * it and Drydock disagree (highlighted), when its bridge last said so, and the node's live work it
 * placed — with the end a drain asked of it and what it answered.
 */
export function Schedulers(props: { schedulers: SchedulerView[]; allocations: Allocation[] }) {
  if (props.schedulers.length === 0) return <p class="muted">No scheduler reports on this node.</p>;
  return (
    <>
      {props.schedulers.map((view) => (
        <Scheduler view={view} allocations={props.allocations.filter((a) => a.source === view.source)} />
      ))}
    </>
  );
}

function Scheduler(props: { view: SchedulerView; allocations: Allocation[] }) {
  const { view } = props;
  return (
    <section class="scheduler" data-source={view.source}>
      <h3>
        Scheduler <code>{view.source}</code> <span class="muted">as {view.name}</span>
      </h3>
      {view.disagreement && (
        <p class="disagreement" data-disagreement="">
          Disagrees with Drydock: {view.disagreement}
        </p>
      )}
      <dl class="facts">
        <dt>state</dt>
        <dd>{view.state}</dd>
        <dt>reason</dt>
        <dd>{view.reason ?? '—'}</dd>
        <dt>cordon there</dt>
        <dd data-cordon="">{cordonInWords(view)}</dd>
        <dt>down</dt>
        <dd>
          {view.down ? `yes: the scheduler marks it down (condition ${downConditionOf(view.source)})` : 'no'}
        </dd>
        <dt>observed</dt>
        <dd>
          <When at={view.observedAt} />{' '}
          <span class="muted">
            (changed <When at={view.changedAt} />)
          </span>
        </dd>
      </dl>
      <Table
        columns={['Work', 'Tenant', 'Ends', 'End requested', 'Scheduler answered']}
        items={props.allocations}
        row={(a) => [
          <code>{a.externalId}</code>,
          a.tenantId,
          a.endsAt ? <When at={a.endsAt} /> : 'open-ended',
          a.endRequestedAt ? <When at={a.endRequestedAt} /> : '—',
          a.ending ? (
            <>
              {a.ending.action}: {a.ending.answer} (<When at={a.ending.at} />)
            </>
          ) : a.endRequestedAt ? (
            'no answer yet'
          ) : (
            '—'
          ),
        ]}
        empty={`No live work of ${view.source} on this node.`}
      />
    </section>
  );
}

function cordonInWords(view: SchedulerView): string {
  if (!view.cordoned) return 'no: it places new work there';
  return view.cordonedByDrydock ? "yes, Drydock's cordon" : 'yes, not by Drydock';
}
