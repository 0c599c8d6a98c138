import type { Child } from 'hono/jsx';

/**
 * How a badge looks: its colour and its icon, which only repeat its words (never colour alone).
 * `ok` fine, `warn` needs a look, `bad` broken or refused, `idle` not moving or over, `busy` at
 * work, `paused` stopped until someone acts.
 */
export type Tone = 'ok' | 'warn' | 'bad' | 'idle' | 'busy' | 'paused';

/** Each tone's icon, drawn in the badge's colour (16×16, strokes only). */
const ICONS: Record<Tone, Child> = {
  ok: (
    <>
      <circle cx="8" cy="8" r="6.5" />
      <path d="M5 8.3l2 2 4-4.4" />
    </>
  ),
  warn: (
    <>
      <path d="M8 1.8L15 14H1z" />
      <path d="M8 6.2v3.6M8 11.6v.2" />
    </>
  ),
  bad: (
    <>
      <circle cx="8" cy="8" r="6.5" />
      <path d="M5.6 5.6l4.8 4.8M10.4 5.6l-4.8 4.8" />
    </>
  ),
  idle: (
    <>
      <circle cx="8" cy="8" r="6.5" />
      <path d="M5 8h6" />
    </>
  ),
  busy: (
    <>
      <circle cx="8" cy="8" r="6.5" />
      <path d="M8 4.5V8l2.5 1.6" />
    </>
  ),
  paused: (
    <>
      <circle cx="8" cy="8" r="6.5" />
      <path d="M6.5 5.5v5M9.5 5.5v5" />
    </>
  ),
};

/**
 * A status badge: an icon (hidden from screen readers: the words say it) and the words, in the
 * tone's colour. `data` names what it shows (`data-badge="liveness"`) for tests and scripts.
 */
export function Badge(props: { tone: Tone; data?: string; children: Child }) {
  return (
    <span class={`badge ${props.tone}`} data-badge={props.data}>
      <svg
        viewBox="0 0 16 16"
        width="14"
        height="14"
        aria-hidden="true"
        focusable="false"
        fill="none"
        stroke="currentColor"
        stroke-width="1.7"
        stroke-linecap="round"
        stroke-linejoin="round"
      >
        {ICONS[props.tone]}
      </svg>
      <span>{props.children}</span>
    </span>
  );
}

const LIVENESS_TONES: Record<string, Tone> = {
  alive: 'ok',
  unreachable: 'warn',
  lost: 'bad',
  offline: 'idle',
  decommissioned: 'idle',
};

/** A node's liveness: alive, unreachable, lost, offline, decommissioned. */
export function LivenessBadge(props: { liveness: string }) {
  return (
    <Badge tone={LIVENESS_TONES[props.liveness] ?? 'idle'} data="liveness">
      {props.liveness}
    </Badge>
  );
}

/** Whether a node is cordoned (no new work placed there). */
export function CordonBadge(props: { cordoned: boolean }) {
  return (
    <Badge tone={props.cordoned ? 'warn' : 'ok'} data="cordon">
      {props.cordoned ? 'cordoned' : 'not cordoned'}
    </Badge>
  );
}

/** Whether a node is in maintenance. */
export function MaintenanceBadge(props: { maintenance: boolean }) {
  return (
    <Badge tone={props.maintenance ? 'warn' : 'ok'} data="maintenance">
      {props.maintenance ? 'in maintenance' : 'not in maintenance'}
    </Badge>
  );
}

/** A node a drain is emptying. */
export function DrainingBadge() {
  return (
    <Badge tone="busy" data="draining">
      draining
    </Badge>
  );
}

/** A node's access: allowed, or blocked (refused at the API). */
export function AccessBadge(props: { access: string }) {
  return (
    <Badge tone={props.access === 'blocked' ? 'bad' : 'ok'} data="access">
      {props.access}
    </Badge>
  );
}

/** A condition's status: true (the problem it names holds) or false. */
export function ConditionBadge(props: { status: boolean }) {
  return (
    <Badge tone={props.status ? 'bad' : 'ok'} data="condition">
      {props.status ? 'true' : 'false'}
    </Badge>
  );
}

const STATUS_TONES: Record<string, Tone> = {
  pending: 'idle',
  running: 'busy',
  succeeded: 'ok',
  acked: 'ok',
  failed: 'bad',
  refused: 'bad',
  cancelled: 'idle',
  expired: 'warn',
  returned: 'warn',
  paused: 'paused',
};

/**
 * The status of an operation or a command (pending, running, succeeded, failed, cancelled; a
 * command's acked, refused, expired, returned; a rolling maintenance's paused); `text` words it
 * otherwise (`Paused`).
 */
export function StatusBadge(props: { status: string; text?: string }) {
  return (
    <Badge tone={STATUS_TONES[props.status] ?? 'idle'} data="status">
      {props.text ?? props.status}
    </Badge>
  );
}
