import { BUCKET_COLOURS } from './svg';

/**
 * The fleet overview's and the node list's part of the console stylesheet (served with the rest
 * of it from /console/assets/console.css): the state counts, the capacity bars' legend, the rack
 * map's tiles, the list's paging. A tile's colour says its state together with its glyph (the
 * capacity buckets' colours, darker shades for the worse states); each background keeps its white
 * glyph at 4.5:1 or more, on a light page and a dark one.
 */
export const FLEET_STYLESHEET = `
ul.state-counts { display: flex; flex-wrap: wrap; gap: .5rem; list-style: none; padding: 0; margin: 0; }
ul.state-counts a { display: inline-flex; align-items: baseline; gap: .35rem; padding: .35rem .7rem; border: 1px solid var(--line); border-radius: 4px; text-decoration: none; color: inherit; }
ul.state-counts a:hover { border-color: currentColor; }
ul.state-counts .count { font-size: 1.3rem; font-weight: 700; }
ul.legend { display: flex; flex-wrap: wrap; gap: .4rem 1rem; list-style: none; padding: 0; margin: 0 0 .6rem; font-size: .85rem; }
ul.legend li { display: inline-flex; align-items: center; gap: .35rem; }
table.capacity th[scope=row] { white-space: nowrap; }
td.capacity-bar { width: 40%; min-width: 8rem; vertical-align: middle; }
svg.capacity-bar { display: block; }
section.rack h3 { margin-bottom: .1rem; }
section.rack p { margin: 0 0 .3rem; font-size: .85rem; }
ul.tiles { display: flex; flex-wrap: wrap; gap: 4px; list-style: none; padding: 0; margin: 0; }
.tile { display: inline-flex; align-items: center; justify-content: center; width: 1.7rem; height: 1.7rem; border-radius: 3px; color: #fff; font-weight: 700; line-height: 1; text-decoration: none; }
a.tile:hover { outline: 2px solid var(--fg); outline-offset: 1px; }
a.tile:focus-visible { outline: 3px solid var(--focus, #1d4ed8); outline-offset: 2px; }
ul.legend .tile { width: 1.2rem; height: 1.2rem; font-size: .75rem; }
.tile.state-schedulable { background: ${BUCKET_COLOURS.schedulable}; }
.tile.state-cordoned { background: ${BUCKET_COLOURS.cordoned}; }
.tile.state-draining { background: #92400e; }
.tile.state-unhealthy { background: ${BUCKET_COLOURS.unhealthy}; }
.tile.state-maintenance { background: ${BUCKET_COLOURS.maintenance}; }
.tile.state-quarantined { background: #9d174d; }
.tile.state-blocked { background: #0f766e; }
.tile.state-unreachable { background: ${BUCKET_COLOURS.unreachable}; }
.tile.state-lost { background: #7f1d1d; }
.tile.state-offline, .tile.state-decommissioned { background: #374151; }
.tile.state-pending { background: transparent; color: inherit; border: 1px dashed currentColor; }
nav.paging { display: flex; gap: 1rem; margin: .6rem 0; }
table.node-list th a { color: inherit; }
`;
