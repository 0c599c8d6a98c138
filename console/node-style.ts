/**
 * The node page's part of the console stylesheet (served with the rest of it from
 * /console/assets/console.css): its header with the suggested actions and the Actions menu (a
 * `<details>`: no script), the section nav, the operations timeline, and the controls' pages.
 * Colours are the stylesheet's variables, so the dark scheme follows; nothing is wider than a
 * phone's screen (390 px): rows wrap, long ids break.
 */
export const NODE_STYLESHEET = `
.node-head h1 { margin-bottom: .4rem; overflow-wrap: anywhere; }
.node-actions { display: flex; flex-wrap: wrap; gap: .5rem; align-items: flex-start; margin: 0 0 .6rem; }
a.button { display: inline-block; padding: .25rem .7rem; border: 1px solid currentColor; border-radius: 4px; font-weight: 600; text-decoration: none; }
a.button.primary { background: var(--link); border-color: var(--link); color: var(--bg); }
a.button:hover { text-decoration: underline; }
details.menu { flex: 1 1 16rem; max-width: 32rem; }
details.menu summary { display: inline-block; cursor: pointer; padding: .25rem .7rem; border: 1px solid var(--line); border-radius: 4px; font-weight: 600; }
details.menu[open] summary { border-color: var(--fg); }
details.menu ul { list-style: none; margin: .3rem 0 0; padding: .3rem .6rem; border: 1px solid var(--line); border-radius: 4px; }
details.menu li { padding: .25rem 0; border-bottom: 1px solid var(--line); }
details.menu li:last-child { border-bottom: 0; }
details.menu li a { font-weight: 600; }
.node-ids { overflow-wrap: anywhere; }
nav.sections { position: sticky; top: 0; z-index: 5; background: var(--bg); border-bottom: 1px solid var(--line); margin: 0 0 .5rem; }
nav.sections ul { display: flex; flex-wrap: wrap; gap: .2rem 1rem; list-style: none; margin: 0; padding: .4rem 0; }
section.node-section { scroll-margin-top: 3rem; }
section.node-section > h2 { border-bottom: 1px solid var(--line); padding-bottom: .2rem; }
#danger-zone, [id^="section-"] { scroll-margin-top: 3rem; }
ol.op-timeline { list-style: none; margin: 0; padding: 0 0 0 .9rem; border-left: 2px solid var(--line); }
li.op-entry { position: relative; margin: 0 0 .9rem; padding-left: .4rem; overflow-wrap: anywhere; }
li.op-entry::before { content: ""; position: absolute; left: -1.3rem; top: .45rem; width: .7rem; height: .7rem; border-radius: 50%; background: var(--bg); border: 2px solid var(--muted); }
li.op-entry.running::before, li.op-entry.pending::before { border-color: var(--busy); }
li.op-entry.succeeded::before { border-color: var(--ok); }
li.op-entry.failed::before { border-color: var(--bad); }
li.op-entry p { margin: .1rem 0; }
.op-head { display: flex; flex-wrap: wrap; gap: .3rem .5rem; align-items: center; }
.op-forced { border-left: 3px solid var(--warn); padding: .1rem .6rem; margin: .3rem 0; }
.op-forced ul, ul.op-attempts { margin: .1rem 0; padding-left: 1.1rem; }
p.op-result.problem { border: 0; }
p.crumbs { margin: 0 0 .4rem; }
form.confirm p.form-buttons { display: flex; flex-wrap: wrap; gap: .8rem; align-items: center; margin: 0; }
div.problem { border-left: 3px solid var(--bad); padding: .1rem .8rem; margin: .6rem 0; }
div.problem p { margin: .3rem 0; }
/* a confirmation's button: its red on the page's own background (the system button grey in the dark scheme is too close to it) */
button.danger { background: var(--bg); }
`;
