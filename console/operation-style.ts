/**
 * The operations pages' part of the console stylesheet (served with the rest of it from
 * /console/assets/console.css): the operations list kept to one line a row at a desktop's width,
 * a cancel's confirmation, and the operation pictures (a drain's allocations, a rolling
 * maintenance node by node), which scale to their box. Colours come from the page's variables, so
 * the dark scheme follows.
 */
export const OPERATION_STYLESHEET = `
/* the list: ids and hostnames whole, an actor wrapping in its own column, a reason cut to one line */
table.operations td { vertical-align: middle; padding: .2rem .5rem; }
.operation-list table.operations td code, .operation-list table.operations td a { overflow-wrap: normal; white-space: nowrap; }
table.operations td:first-child code { font-size: .8rem; }
table.operations td.kind, table.operations td.on, table.operations td.when { white-space: nowrap; }
table.operations td.actor { min-width: 11rem; max-width: 16rem; overflow-wrap: anywhere; }
table.operations td.reason { max-width: 13rem; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
/* without a Temporal UI to link to, the workflow id is cut short too (whole on hover) */
.operation-list table.operations code.workflow-id { display: inline-block; max-width: 7rem; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; vertical-align: bottom; font-size: .8rem; }
dd.actor { overflow-wrap: anywhere; }
/* a cancel's confirmation */
ul.confirm-says { margin: .4rem 0 .8rem; padding-left: 1.2rem; max-width: 60rem; }
ul.confirm-says li { margin: .25rem 0; }
form.cancel-form { align-items: end; }
.cancel-form label { display: flex; flex-direction: column; font-size: .85rem; color: var(--muted); }
.cancel-refusal { border-left: 3px solid var(--warn); padding: .3rem .6rem; }
/* the pictures */
figure.chart { margin: .6rem 0 1rem; max-width: 64rem; }
figure.chart svg { display: block; max-width: 100%; height: auto; }
figure.chart figcaption { font-size: .85rem; color: var(--muted); margin: .2rem 0; }
figure.chart svg a:focus-visible text { outline: 2px solid var(--focus); }
table.gantt-table td { font-size: .85rem; }
`;
