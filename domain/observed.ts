/**
 * Observed allocations: work a scheduler already placed (a Slurm job, a Kubernetes pod), recorded by
 * its bridge so that drains see it. Drydock did not place it, so its placement rule does not refuse
 * it; the refusals it would have made are kept with the record, for the operator to see.
 */

/** The scheduler that placed the work: `<scheduler>:<cluster>`, e.g. `slurm:hpc1`. */
export const SOURCE_PATTERN = /^[a-z][a-z0-9-]{0,31}:[a-z0-9][a-z0-9._-]{0,62}$/;

/**
 * The scheduler's own id of the work, as it lists it: a Slurm job (`4711`, an array task `4711_3`, a
 * het job component `4711+1`), a Kubernetes pod (`namespace/name/uid`).
 */
export const EXTERNAL_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:+/-]{0,252}$/;
