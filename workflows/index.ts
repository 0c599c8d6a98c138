export { drain } from './drain';
export { livenessSweep } from './liveness-sweep';
export { decommission } from './decommission';
export { purge } from './purge';
export { remediation } from './remediation';
export { poolDrain } from './pool-drain';
export { maintenance } from './maintenance';
export { poolMaintenance } from './pool-maintenance';
