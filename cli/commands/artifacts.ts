import { defineCommand, type Command, type Context } from '../command';
import { printListing, pagingFlags, type Page } from '../paging';
import { artifactCopiesTable, type ArtifactCopy } from '../views/artifacts';

const PAGING = pagingFlags('copies', 100);

/** Prints a listing of artifact copies, one page unless --all. */
function printCopies(
  { out, flags }: Pick<Context<typeof PAGING, []>, 'out' | 'flags'>,
  fetch: (query: { limit?: number; cursor?: string }) => Promise<Page<ArtifactCopy>>,
): Promise<void> {
  return printListing(out, {
    noun: 'artifact copies',
    all: flags.all,
    fetch: (cursor) => fetch({ limit: flags.limit, cursor }),
    render: artifactCopiesTable,
  });
}

const list = defineCommand({
  words: ['artifacts', 'list'],
  summary: 'The artifact copies recorded on a node, by artifact id, one page unless --all',
  operands: [{ name: 'NODE', type: 'node' }],
  flags: PAGING,
  run: (ctx) =>
    printCopies(ctx, (query) =>
      ctx.api.GET('/v1/nodes/{id}/artifact-copies', { params: { path: { id: ctx.args.NODE }, query } }),
    ),
});

const copies = defineCommand({
  words: ['artifacts', 'copies'],
  summary: "Where an artifact's copies are: on the nodes the key sees, by node id, one page unless --all",
  operands: [{ name: 'ARTIFACT', type: 'artifact' }],
  flags: PAGING,
  run: (ctx) =>
    printCopies(ctx, (query) =>
      ctx.api.GET('/v1/artifacts/{artifactId}/copies', {
        params: { path: { artifactId: ctx.args.ARTIFACT }, query },
      }),
    ),
});

export const artifactCommands: Command[] = [list, copies];
