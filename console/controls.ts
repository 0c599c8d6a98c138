import type { ApiClient, Schemas } from '@drydock/client';

/** A POST's form fields (its CSRF token already checked). */
export type Fields = Record<string, string | File>;

/**
 * One console control: the one API call a form makes, what its flash says, where it returns.
 * A control with `confirm` has a page of its own (`GET /console/nodes/<id>/<name>`, which the node
 * page's Actions menu links to) that says what it does; unless the page is `optional`, the control
 * runs only from it: its form posts `confirm=yes`, and a POST without it makes no call.
 */
interface Control {
  run(api: ApiClient, id: string, form: Fields): Promise<string>;
  back: 'node' | 'fleet';
  confirm?: Confirmation;
}

/** What a control's page says before it runs. */
export interface Confirmation {
  /** The page's title and button, e.g. "Purge". */
  title: string;
  /**
   * The page is the control's form, not a gate: a POST without `confirm=yes` runs too (cordon, a
   * drain, the overview's one-click Approve and Reject). Without it the control is one that acts
   * at once on a single click otherwise (block, adopt again, remediate) or cannot be taken back.
   */
  optional?: boolean;
  /** The hostname must be typed to confirm (`hostname`): a mismatch makes no call. */
  typeHostname?: boolean;
  /** What the control does, in sentences. */
  says: string[];
  /** A refusal goes back to the confirmation page (it offers what the refusal asks for). */
  refusalBack?: boolean;
  /** The reason is required (the API refuses the call without one). */
  reasonRequired?: boolean;
  /** Who the node page offers the control to: the action it takes, or operator keys only. */
  offeredTo: Schemas['Caller']['actions'][number] | 'operator';
}

/** The node controls a console form may post, by the last segment of its action. */
export const CONTROLS: Record<string, Control> = {
  cordon: {
    ...plain('/v1/nodes/{id}/cordon', 'cordoned'),
    confirm: {
      title: 'Cordon',
      optional: true,
      offeredTo: 'compute:nodes:cordon',
      says: [
        'No new work is placed on the node; what runs there now keeps running. Uncordon puts it back in placement.',
      ],
    },
  },
  uncordon: {
    ...plain('/v1/nodes/{id}/uncordon', 'uncordoned'),
    confirm: {
      title: 'Uncordon',
      optional: true,
      offeredTo: 'compute:nodes:cordon',
      says: ['The node takes new work again (unless another NoSchedule reason keeps it off).'],
    },
  },
  block: {
    back: 'node',
    confirm: {
      title: 'Block',
      offeredTo: 'compute:nodes:block',
      reasonRequired: true,
      refusalBack: true,
      says: [
        "The node's agent is cut off at once: its session closes and every call it makes is refused (403), so it reports nothing and takes no command but a queued purge.",
        'The node leaves placement. Its allocations, files and identity stay: the work running there is not told and keeps running unwatched. Unblock lets the agent back in within seconds.',
      ],
    },
    run: async (api, id, form) => {
      // The reason is required: an empty one goes as it is, and the API refuses it.
      const node = await api.POST('/v1/nodes/{id}/block', {
        params: params(id, form),
        body: { reason: field(form, 'reason') ?? '' },
      });
      return `${node.hostname} blocked.`;
    },
  },
  unblock: {
    ...plain('/v1/nodes/{id}/unblock', 'unblocked'),
    confirm: {
      title: 'Unblock',
      optional: true,
      offeredTo: 'compute:nodes:block',
      says: ["The node's agent is let back in: its next retry (within seconds) opens a session again."],
    },
  },
  drain: {
    back: 'node',
    confirm: {
      title: 'Drain',
      optional: true,
      offeredTo: 'compute:nodes:drain',
      says: [
        "The node is cordoned and the drain waits for its live allocations to end. With a deadline, what is still live then is released by force (each recorded as force-released) within the pool's disruption budget; without one it waits as long as they run.",
        'Uncordon cancels the drain.',
      ],
    },
    run: async (api, id, form) => {
      const deadline = field(form, 'deadline');
      const { node, operation } = await api.POST('/v1/nodes/{id}/drain', {
        params: params(id, form),
        body: { ...reasonOf(form), ...(deadline ? { deadline } : {}) },
      });
      return `${node.hostname}: drain requested as operation ${operation.id} (its progress is under Operations).`;
    },
  },
  taint: {
    back: 'node',
    run: async (api, id, form) => {
      const node = await api.POST('/v1/nodes/{id}/taint', {
        params: params(id, form),
        body: { ...reasonOf(form), add: [field(form, 'key') ?? ''] },
      });
      return `${node.hostname} tainted ${field(form, 'key')}.`;
    },
  },
  untaint: {
    back: 'node',
    run: async (api, id, form) => {
      const node = await api.POST('/v1/nodes/{id}/taint', {
        params: params(id, form),
        body: { ...reasonOf(form), remove: [field(form, 'key') ?? ''] },
      });
      return `${node.hostname}: taint ${field(form, 'key')} removed.`;
    },
  },
  label: {
    back: 'node',
    run: async (api, id, form) => {
      const key = field(form, 'key') ?? '';
      const node = await api.POST('/v1/nodes/{id}/label', {
        params: params(id, form),
        body: { ...reasonOf(form), set: { [key]: field(form, 'value') ?? '' } },
      });
      return `${node.hostname} labelled ${key}.`;
    },
  },
  unlabel: {
    back: 'node',
    run: async (api, id, form) => {
      const node = await api.POST('/v1/nodes/{id}/label', {
        params: params(id, form),
        body: { ...reasonOf(form), remove: [field(form, 'key') ?? ''] },
      });
      return `${node.hostname}: label ${field(form, 'key')} removed.`;
    },
  },
  'clear-maintenance': {
    back: 'node',
    confirm: {
      title: 'Clear maintenance',
      optional: true,
      offeredTo: 'compute:nodes:update',
      says: [
        'The node leaves maintenance: once nothing else keeps it off (a cordon, a condition), it takes work again.',
      ],
    },
    run: async (api, id, form) => {
      const node = await api.POST('/v1/nodes/{id}/maintenance', {
        params: params(id, form),
        body: { ...reasonOf(form), maintenance: false },
      });
      return `${node.hostname} is out of maintenance.`;
    },
  },
  approve: {
    back: 'fleet',
    confirm: {
      title: 'Approve',
      optional: true,
      offeredTo: 'operator',
      says: [
        'The machine joined without a token and waits for an operator. Approved, it joins the pool and its acceptance checks run: adopted once they pass, and only then does it take work.',
      ],
    },
    run: async (api, id, form) => {
      const poolId = field(form, 'poolId');
      const node = await api.POST('/v1/nodes/{id}/approve', {
        params: params(id, form),
        body: { ...reasonOf(form), ...(poolId ? { poolId } : {}) },
      });
      return `${node.hostname} approved.`;
    },
  },
  reject: {
    ...plain('/v1/nodes/{id}/reject', 'rejected'),
    back: 'fleet',
    confirm: {
      title: 'Reject',
      optional: true,
      offeredTo: 'operator',
      says: [
        'The machine is turned away: its agent may call no route any more. It can only join again, as a new node.',
      ],
    },
  },
  adopt: {
    back: 'node',
    confirm: {
      title: 'Adopt again',
      offeredTo: 'compute:nodes:provision',
      says: [
        "The node goes back to adopting and its pool's acceptance checks run again. While it is adopting it takes no new work; it is adopted again once they pass, and stays adopting when one fails.",
        'What runs on it now keeps running.',
      ],
    },
    run: async (api, id, form) => {
      const node = await api.POST('/v1/nodes/{id}/adopt', { params: params(id, form), body: reasonOf(form) });
      return node.provisionState === 'adopted'
        ? `${node.hostname} adopted.`
        : `${node.hostname} is ${node.provisionState}: acceptance did not pass yet.`;
    },
  },
  'revoke-identity': {
    back: 'node',
    confirm: {
      title: 'Revoke identity',
      offeredTo: 'compute:nodes:revoke-identity',
      says: [
        'Every certificate and credential of this node is revoked at once and its identity generation goes up.',
        'Its agent is cut off: the machine must join again to come back.',
      ],
    },
    run: async (api, id, form) => {
      const { node, revokedCertificates } = await api.POST('/v1/nodes/{id}/revoke-identity', {
        params: params(id, form),
        body: reasonOf(form),
      });
      return `${node.hostname}: identity revoked (${revokedCertificates} certificate${revokedCertificates === 1 ? '' : 's'}).`;
    },
  },
  remediate: {
    back: 'node',
    confirm: {
      title: 'Remediate',
      offeredTo: 'compute:nodes:remediate',
      refusalBack: true,
      says: [
        "The condition keeps the node out of placement and the remediation sends its actions to the node's agent, one an attempt (the pool's ladder for that condition), until the condition clears; if it does not, the node goes into maintenance for a person.",
      ],
    },
    run: async (api, id, form) => {
      const condition = field(form, 'condition') ?? '';
      const { operation } = await api.POST('/v1/nodes/{id}/remediations', {
        params: { path: { id } },
        body: { ...reasonOf(form), condition },
      });
      return `Remediation of ${condition} requested as operation ${operation.id} (its progress is under Operations).`;
    },
  },
  'clear-condition': {
    back: 'node',
    run: async (api, id, form) => {
      const type = field(form, 'condition') ?? '';
      // The reason is required: an empty one goes as it is, and the API refuses it.
      const node = await api.POST('/v1/nodes/{id}/conditions/{type}/clear', {
        params: { ...params(id, form), path: { id, type } },
        body: { reason: field(form, 'reason') ?? '' },
      });
      return `${node.hostname}: ${type} cleared.`;
    },
  },
  reboot: {
    back: 'node',
    confirm: {
      title: 'Reboot',
      offeredTo: 'compute:nodes:command',
      says: [
        "A verified reboot: the node is cordoned, drained first when asked, then its agent runs the node's reboot action; the step is done only when the node is connected again on another boot id, and the reboot then waits for every probe (condition) to hold healthy.",
        'A step that fails stops there and leaves the node cordoned and in maintenance, with the reason. Without "uncordon" the node stays cordoned after.',
      ],
      refusalBack: true,
      reasonRequired: true,
    },
    run: async (api, id, form) => {
      const deadline = field(form, 'deadline');
      const idempotencyKey = field(form, 'idempotencyKey');
      const durations = fieldsSet(form, ['rebootTimeout', 'healthyAfter']);
      const { node, operation } = await api.POST('/v1/nodes/{id}/reboot', {
        params: { path: { id }, header: idempotencyKey ? { 'idempotency-key': idempotencyKey } : {} },
        body: {
          // The reason is required: an empty one goes as it is, and the API refuses it.
          reason: field(form, 'reason') ?? '',
          ...(field(form, 'drain') === 'yes' ? { drain: deadline ? { deadline } : {} } : {}),
          ...(field(form, 'uncordon') === 'yes' ? { uncordon: true } : {}),
          ...durations,
        },
      });
      return `${node.hostname}: reboot requested as maintenance ${operation.id} (its steps are under Operations).`;
    },
  },
  purge: {
    back: 'node',
    confirm: {
      title: 'Purge',
      offeredTo: 'operator',
      typeHostname: true,
      says: [
        "Purge sends the node's agent a signed command to remove Drydock from the machine: it deletes its data directory and its own binary, and the control plane then forgets the node.",
        'The node cannot come back under this identity: the machine comes back only by being set up again and joining as a new node.',
        'This cannot be undone.',
      ],
      refusalBack: true,
    },
    run: async (api, id, form) => {
      const force = field(form, 'force') === 'yes';
      const { node, operation } = await api.POST('/v1/nodes/{id}/purge', {
        params: { path: { id } },
        body: { ...reasonOf(form), confirm: true, ...(force ? { force: true } : {}) },
      });
      return `${node.hostname}: purge requested as operation ${operation.id} (its progress is under Operations).`;
    },
  },
  delete: {
    back: 'fleet',
    confirm: {
      title: 'Delete',
      offeredTo: 'operator',
      says: [
        'Deleting leaves a tombstone: the node leaves every list and its identity is revoked, its history (events, allocations, operations) stays.',
        'A deleted node takes no controls any more. This cannot be undone.',
      ],
      refusalBack: true,
    },
    run: async (api, id, form) => {
      const { deleted } = await api.DELETE('/v1/nodes/{id}', {
        params: params(id, form),
        body: reasonOf(form),
      });
      return deleted ? `Node ${id} deleted.` : `Node ${id} was deleted already.`;
    },
  },
};

/** A control whose body is only the reason; its flash says the node is now `did`. */
function plain(
  path:
    '/v1/nodes/{id}/cordon' | '/v1/nodes/{id}/uncordon' | '/v1/nodes/{id}/unblock' | '/v1/nodes/{id}/reject',
  did: string,
): Control {
  return {
    back: 'node',
    run: async (api, id, form) => {
      const node = await api.POST(path, { params: params(id, form), body: reasonOf(form) });
      return `${node.hostname} ${did}.`;
    },
  };
}

/** A text field as posted; undefined when absent or blank. */
export function field(form: Fields, name: string): string | undefined {
  const value = form[name];
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}

/** The fields among `names` that are set, as posted (a blank one is left out: its default). */
export function fieldsSet<Name extends string>(
  form: Fields,
  names: readonly Name[],
): Partial<Record<Name, string>> {
  return Object.fromEntries(
    names.flatMap((name) => {
      const value = field(form, name);
      return value ? [[name, value]] : [];
    }),
  ) as Partial<Record<Name, string>>;
}

/** The node and, when the form carries the version it was read at, If-Match: the API checks it. */
function params(id: string, form: Fields) {
  const version = field(form, 'version');
  return { path: { id }, header: version === undefined ? {} : { 'if-match': version } };
}

function reasonOf(form: Fields): { reason?: string } {
  const reason = field(form, 'reason');
  return reason ? { reason } : {};
}
