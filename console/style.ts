/** The console's one stylesheet, served from /console/assets/console.css (no inline styles). */
export const STYLESHEET = `
:root { color-scheme: light dark; --bg: #fff; --fg: #111827; --muted: #4b5563; --line: #d1d5db; --ok: #15803d; --bad: #b91c1c; --warn: #b45309; --busy: #1d4ed8; --link: #1d4ed8; --focus: #1d4ed8; }
/* dark: the same roles, each colour at least 4.5:1 against the background (WCAG 2.2 AA) */
@media (prefers-color-scheme: dark) {
  :root { --bg: #111827; --fg: #e5e7eb; --muted: #9ca3af; --line: #374151; --ok: #4ade80; --bad: #f87171; --warn: #fbbf24; --busy: #93c5fd; --link: #93c5fd; --focus: #93c5fd; }
}
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; background: var(--bg); color: var(--fg); }
a { color: var(--link); }
:focus-visible { outline: 2px solid var(--focus); outline-offset: 2px; }
.skip { position: absolute; left: .5rem; top: -3rem; padding: .4rem .8rem; background: var(--bg); border: 2px solid var(--focus); border-radius: 4px; z-index: 10; }
.skip:focus { top: .5rem; }
header { display: flex; flex-wrap: wrap; gap: .4rem 1rem; align-items: center; justify-content: space-between; padding: .6rem 1.2rem; border-bottom: 1px solid var(--line); }
header nav { display: flex; flex-wrap: wrap; gap: .4rem 1rem; align-items: center; }
/* a table scrolls inside its own box: the page never scrolls sideways */
.table-box { max-width: 100%; overflow-x: auto; }
/* status badges (console/badge.tsx): an icon and the words, in the tone's colour */
.badge { display: inline-flex; align-items: center; gap: .3em; padding: 0 .5em; border: 1px solid currentColor; border-radius: 999px; font-size: .85em; font-weight: 600; white-space: nowrap; color: var(--muted); }
.badge svg { flex: none; }
.badge.ok { color: var(--ok); }
.badge.warn { color: var(--warn); }
.badge.bad, .badge.paused { color: var(--bad); }
.badge.busy { color: var(--busy); }
.badges { display: flex; flex-wrap: wrap; gap: .4rem; margin: 0 0 .8rem; }
.brand { font-weight: 700; text-decoration: none; color: inherit; }
.caller { color: var(--muted); overflow-wrap: anywhere; }
main { padding: 1rem 1.2rem; max-width: 80rem; }
h1 { font-size: 1.4rem; margin: .2rem 0 1rem; }
h2 { font-size: 1.1rem; margin: 1.6rem 0 .6rem; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: .3rem .6rem; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-weight: 600; color: var(--muted); }
form.inline { display: inline; }
form.filters { display: flex; flex-wrap: wrap; gap: .6rem; align-items: end; margin-bottom: 1rem; }
form.filters label { display: flex; flex-direction: column; font-size: .85rem; color: var(--muted); }
input, select, button { font: inherit; padding: .25rem .5rem; }
button { cursor: pointer; }
.flash { padding: .5rem .8rem; border: 1px solid var(--line); border-radius: 4px; }
.flash.ok { border-color: var(--ok); }
.flash.error, .problem { border-color: var(--bad); color: var(--bad); }
.axes { display: grid; grid-template-columns: repeat(auto-fill, minmax(12rem, 1fr)); gap: .5rem; }
.axis { border: 1px solid var(--line); border-radius: 4px; padding: .4rem .6rem; }
.axis .name { display: block; font-size: .8rem; color: var(--muted); }
.axis .value { font-weight: 600; }
.controls { display: flex; gap: .5rem; flex-wrap: wrap; align-items: center; margin: .8rem 0; }
.muted { color: var(--muted); }
dl.progress { display: grid; grid-template-columns: auto 1fr; gap: 0 .6rem; margin: 0; }
dl.progress dt { color: var(--muted); }
dl.progress dd { margin: 0; font-family: ui-monospace, monospace; font-size: .9em; word-break: break-all; }
code { font-family: ui-monospace, monospace; font-size: .9em; }
.signin { max-width: 32rem; }
.signin input[type=password] { width: 100%; }
.signin a.button { display: inline-block; padding: .5rem 1rem; border: 1px solid currentColor; border-radius: 4px; font-weight: 600; text-decoration: none; }
/* node: danger zone, confirmation pages, progress in words */
section.danger { margin-top: 2rem; border: 1px solid var(--bad); border-radius: 4px; padding: .2rem 1rem .6rem; }
section.danger h2 { color: var(--bad); margin-top: .6rem; }
.danger-item { display: flex; justify-content: space-between; align-items: center; gap: 1rem; padding: .5rem 0; border-top: 1px solid var(--line); }
.danger-item p { margin: .2rem 0 0; }
button.danger { border: 1px solid var(--bad); color: var(--bad); font-weight: 600; }
form.confirm { display: flex; flex-direction: column; gap: .6rem; max-width: 36rem; margin-top: 1rem; }
form.confirm label { display: flex; flex-direction: column; gap: .2rem; }
form.confirm label.check { flex-direction: row; align-items: baseline; gap: .5rem; }
form.confirm button { align-self: flex-start; }
ul.counts { margin: 0; padding-left: 1.2rem; }
/* node: what its schedulers say */
section.scheduler { border: 1px solid var(--line); border-radius: 4px; padding: .2rem .8rem .6rem; margin-bottom: .8rem; }
.disagreement { border-left: 3px solid var(--warn); padding: .3rem .6rem; color: var(--warn); font-weight: 600; }
p.progress { margin: 0; }
ul.progress { margin: 0; padding-left: 1.1rem; }
/* pools, join tokens, operations */
h3 { font-size: 1rem; margin: 1.2rem 0 .4rem; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .2rem .8rem; margin: 0; }
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; }
.pool-drain-running { border: 1px solid var(--line); border-radius: 4px; padding: .4rem .8rem; margin-bottom: .8rem; }
.status.failed { color: var(--bad); }
.status.succeeded { color: var(--ok); }
.status.running, .status.pending { color: var(--warn); }
.secret { border: 1px solid var(--ok); border-radius: 4px; padding: .4rem .8rem; margin-bottom: 1rem; }
.operation-list td code, .operation-list td a { overflow-wrap: anywhere; }
/* on a phone the list keeps its ids whole and scrolls in its box rather than breaking them a letter a line */
@media (max-width: 40rem) { .operation-list td code, .operation-list td a { overflow-wrap: normal; } }
pre.join-line { white-space: pre-wrap; word-break: break-all; padding: .5rem; border: 1px solid var(--line); border-radius: 4px; user-select: all; }
/* node commands: run forms, a command's output */
form.run { display: flex; flex-wrap: wrap; gap: .5rem; align-items: end; margin: .5rem 0; padding-bottom: .5rem; border-bottom: 1px solid var(--line); }
form.run label { display: flex; flex-direction: column; font-size: .85rem; }
form.run .run-action { min-width: 12rem; align-self: center; }
label.check { display: inline-flex; gap: .4rem; align-items: baseline; }
pre.output { white-space: pre-wrap; overflow-wrap: anywhere; font-family: ui-monospace, monospace; font-size: .85rem; padding: .5rem; border: 1px solid var(--line); border-radius: 4px; max-height: 40rem; overflow: auto; unicode-bidi: isolate; }
pre.output .hidden-char { border: 1px solid var(--warn); border-radius: 3px; color: var(--warn); font-size: .8em; padding: 0 .15em; }
a.download { font-size: .8rem; font-weight: 400; }
/* maintenance: one bar per step, coloured by where it stands, always with the word */
ol.timeline-steps { display: flex; gap: .3rem; list-style: none; margin: .4rem 0; padding: 0; }
.timeline-row { margin-bottom: .6rem; }
.timeline-label { font-weight: 600; }
li.timeline-step { flex: 1 1 0; min-width: 8rem; font-size: .85rem; }
.timeline-step > span { display: block; }
.timeline-bar { height: .55rem; border-radius: 2px; margin-bottom: .2rem; background: var(--line); }
.timeline-step.done .timeline-bar { background: var(--ok); }
.timeline-step.failed .timeline-bar { background: var(--bad); }
.timeline-step.running .timeline-bar { background: var(--warn); }
.timeline-step.cancelled .timeline-bar { background: var(--muted); }
.timeline-step.not-started .timeline-bar { background: none; border: 1px dashed var(--line); }
.timeline-state { font-weight: 600; }
.timeline-step.failed .timeline-state, .timeline-reason { color: var(--bad); }
.timeline-time { color: var(--muted); }
.status.refused, .status.expired, .status.returned { color: var(--warn); }
/* rolling maintenance: one timeline row per node, the failures, the start form */
.status.paused { color: var(--bad); }
.paused-banner { border-left: 3px solid var(--bad); padding: .3rem .6rem; color: var(--bad); font-weight: 600; }
ul.failures li { margin: .2rem 0; }
form.rolling-form { display: flex; flex-wrap: wrap; gap: .6rem; align-items: end; margin-bottom: 1rem; }
form.rolling-form label { display: flex; flex-direction: column; font-size: .85rem; color: var(--muted); }
form.rolling-form textarea { font-family: ui-monospace, monospace; }
form.rolling-form p { flex-basis: 100%; margin: 0; }
/* live */
.live-status { font-size: .8rem; padding: .1rem .5rem; border: 1px solid var(--line); border-radius: 999px; color: var(--muted); }
.live-status[data-state=live] { border-color: var(--ok); color: var(--ok); }
.live-status[data-state=paused], .live-status[data-state=stopped] { border-color: var(--bad); color: var(--bad); }
`;
