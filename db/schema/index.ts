export * from './allocations';
export * from './api-keys';
export * from './events';
export * from './labels';
export * from './nodes';
export * from './operations';
export * from './pools';
