/**
 * The Temporal header that carries the id of the HTTP request behind a workflow start, update or
 * signal, on to the workflow's activities (docs/operations.md, Logs).
 */
export const REQUEST_ID_HEADER = 'drydock-request-id';
