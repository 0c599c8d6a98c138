import { defineCommand, type Command } from '../command';
import { FLEET_EVENT_HEADER, fleetEventLine } from '../views/events';
import { nodeFlag } from './flags';

/** How long each `events --follow` request waits on the server for something new (its maximum). */
export const FOLLOW_WAIT_S = 30;

const events = defineCommand({
  words: ['events'],
  summary:
    'The fleet-wide event feed, oldest first (--json: one event a line; --follow: wait for more until Ctrl-C)',
  operands: [],
  flags: {
    type: {
      type: 'string',
      value: 'PREFIX',
      pattern: /^[a-z][a-z0-9.-]{0,99}$/,
      patternHint: 'an event type prefix such as node. or node.drain',
      help: 'only events whose type starts with PREFIX (node., node.drain, security.), or with one of several: node.,security.',
    },
    node: nodeFlag("only NODE's events"),
    after: {
      type: 'string',
      value: 'CURSOR',
      pattern: /^\d{1,15}$/,
      patternHint: 'an event id: the cursor a previous run printed',
      help: 'only events after CURSOR (default: from the first event)',
    },
    follow: {
      type: 'boolean',
      help: 'keep waiting for new events and print them as they come, until Ctrl-C',
    },
  },
  async run({ api, out, flags }) {
    let after = flags.after ?? '0';
    out.human(FLEET_EVENT_HEADER);
    for (;;) {
      const page = await api.GET('/v1/events', {
        params: {
          query: {
            after,
            type: flags.type,
            nodeId: flags.node,
            limit: 200,
            wait: flags.follow ? FOLLOW_WAIT_S : 0,
          },
        },
      });
      for (const event of page.items) out.line(event, () => fleetEventLine(event));
      after = page.nextCursor;
      if (!flags.follow && page.items.length < 200) break;
    }
    out.note(`cursor ${after} (pass --after ${after} to go on from here)`);
  },
});

export const eventCommands: Command[] = [events];
